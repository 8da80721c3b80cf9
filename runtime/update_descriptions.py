"""A document after an update, from the document before it and the change event's
`updateDescription` (MongoDB's change events): how a live feed knows a request as each update
left it, on every engine, from the pre-images that `db init` asks `botrequests` to keep
(docs/deployment.md#live-feeds).

The description names each path it set or removed, and each array a pipeline update cut short.
A part of a path that is a number names an array's element where the value there is an array,
and a field elsewhere: the reading MongoDB gives such a path without `showExpandedEvents`.
"""

import copy


class NotApplicable(ValueError):
    """The description names a path the document before it cannot hold."""


def applied(before: dict, description: dict) -> dict:
    after = copy.deepcopy(before)
    for truncation in description.get("truncatedArrays") or ():
        array = _value(after, truncation["field"])
        if not isinstance(array, list):
            raise NotApplicable(truncation["field"])
        del array[truncation["newSize"] :]
    for path in description.get("removedFields") or ():
        container, key = _parent(after, path)
        if isinstance(container, dict):
            container.pop(key, None)
    for path, value in (description.get("updatedFields") or {}).items():
        container, key = _parent(after, path)
        if isinstance(container, list):
            container.extend([None] * (key + 1 - len(container)))
        container[key] = value
    return after


def _value(document: dict, path: str):
    container, key = _parent(document, path)
    try:
        return container[key]
    except (KeyError, IndexError):
        raise NotApplicable(path) from None


def _parent(document: dict, path: str) -> tuple[dict | list, str | int]:
    """The dict or list that holds `path`'s last part, and that part as its key there."""
    *parts, last = path.split(".")
    container = document
    for part in parts:
        key = _key(container, part, path)
        try:
            container = container[key]
        except (KeyError, IndexError):
            raise NotApplicable(path) from None
        if not isinstance(container, dict | list):
            raise NotApplicable(path)
    return container, _key(container, last, path)


def _key(container: dict | list, part: str, path: str) -> str | int:
    if isinstance(container, dict):
        return part
    if part.isdigit():
        return int(part)
    raise NotApplicable(path)
