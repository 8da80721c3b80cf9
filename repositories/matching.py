"""Whether a document in memory matches a filter, as MongoDB would decide: for a live feed,
which judges each change by the request as the change left it, a document the database may
no longer hold (blueprints/feeds.py).

Only what the access policy and a feed's filters write is understood: `$and`, `$or`, and on a
top-level field an equality or `$in`, compared by MongoDB's equality (`bson_equality`), an
array field matching where it or any element of it does. Anything else raises ValueError, so
that a filter this module would judge wrongly fails loudly instead.
"""

import re

from bson import Regex

from repositories.bson_equality import equality_key

# Values whose equality MongoDB reads otherwise (a pattern, null for a missing field too, an
# array or a document as a whole): no filter judged here holds one.
_NOT_JUDGED = (type(None), dict, list, Regex, re.Pattern)


def matches(query: dict, document: dict) -> bool:
    return all(_holds(name, condition, document) for name, condition in query.items())


def _holds(name: str, condition, document: dict) -> bool:
    if name == "$and":
        return all(matches(part, document) for part in condition)
    if name == "$or":
        return any(matches(part, document) for part in condition)
    if name.startswith("$") or "." in name:
        raise ValueError(f"{name} is not judged in memory")
    if isinstance(condition, dict):
        if condition.keys() != {"$in"}:
            raise ValueError(f"{sorted(condition)} on {name} is not judged in memory")
        wanted = condition["$in"]
    else:
        wanted = [condition]
    return any(_equals(document.get(name, _MISSING), value) for value in wanted)


_MISSING = object()


def _equals(stored, value) -> bool:
    if isinstance(value, _NOT_JUDGED):
        raise ValueError(f"{value!r} is not judged in memory")
    if stored is _MISSING:
        return False
    key = equality_key(value)
    if equality_key(stored) == key:
        return True
    return isinstance(stored, list) and any(equality_key(item) == key for item in stored)
