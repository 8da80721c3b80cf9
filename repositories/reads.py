"""The reads every list and single item is made of: a list's filters, one per visibility
branch; a count, a page's keys, documents by id and one visible document; the joins that
complete a single item; and the threads that run a request's independent reads side by side.

Filters are written flat and ordered, field by field with the most selective indexed field
first: the embedded engine uses an index only for a filter without top-level operators, and
takes the first field it has an index for.

A joined document (a single bot's service and tags, a token's user) takes the place of its
reference when the answer shows it there (a bot's `service`); otherwise it goes beside it,
named after it: `userDocument` beside `user`, or `userDocuments` for the array `$lookup`
gives, as `tagDocuments` beside `tags`. A bot request joins nothing
(repositories/summaries.py).
"""

import contextvars
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from threading import Lock

from pymongo.collection import Collection

from access.policy import Visibility
from repositories.bson_equality import equality_key

POOL_THREADS = 8
# Ids per read that a merge of a list's reads collects for the server to order, and the
# deepest page read from its first items (repositories/pages.py); past it, one query.
MERGE_WINDOW = 10_000

_pool: ThreadPoolExecutor | None = None
_pool_lock = Lock()


def _forget_pool() -> None:
    """A forked worker inherits the pool object but not its threads."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def submit(function, *args) -> Future:
    """Run independent queries of one request side by side; pymongo clients are thread-safe.

    Each runs in a copy of the caller's context, which carries the request's deadline
    (`pymongo.timeout` keeps it in a context variable, which a pool thread does not inherit).
    """
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="query")
        return _pool.submit(contextvars.copy_context().run, function, *args)


def contains(text: str) -> dict:
    """Case-insensitive substring; every character literal, so no pattern can backtrack."""
    return {"$regex": re.escape(text), "$options": "i"}


def equals_ignoring_case(text: str) -> dict:
    return {"$regex": f"^{re.escape(text)}$", "$options": "i"}


def combine(*clauses: dict) -> dict:
    """AND of the clauses, keys merged flat in order where they do not collide (flat and
    ordered: the module's docstring says why)."""
    merged: dict = {}
    for clause in clauses:
        if merged.keys() & clause.keys():
            return {"$and": [dict(clause) for clause in clauses if clause]}
        merged.update(clause)
    return merged


def _negation(branch: dict) -> dict:
    """NOT branch, on the branch's own field when it has just one."""
    if len(branch) != 1:
        return {"$nor": [branch]}
    ((field, condition),) = branch.items()
    if isinstance(condition, dict) and condition.keys() == {"$in"}:
        return {field: {"$nin": condition["$in"]}}
    if isinstance(condition, dict) and condition and all(op.startswith("$") for op in condition):
        return {field: {"$not": condition}}
    return {field: {"$ne": condition}}


def disjoint_filters(visibility: Visibility, filters: dict, narrow: dict | None = None) -> list:
    """One filter per visibility branch, each excluding the branches before it."""
    return [
        combine(narrow or {}, branch, *map(_negation, visibility.branches[:index]), filters)
        for index, branch in enumerate(visibility.branches)
    ]


def overlapping_filters(visibility: Visibility, filters: dict, narrow: dict | None = None) -> list:
    """One filter per visibility branch, without what excludes the branches before it: for
    reading the first items of their union, whose ids the server dedupes (`_id: {$in}`).
    The union's first items are among its branches' first items all the same, and without
    an exclusion (`createdBy: {$ne}`) beside its equality, the embedded engine can bound a
    branch's range of the sort key (repositories/first_items.py)."""
    return [combine(narrow or {}, branch, filters) for branch in visibility.branches]


def count(collection: Collection, match: dict) -> int:
    """Exact count of one filter; served from the index that holds the filter's fields.

    An empty filter names no field, so the `_id` index is hinted: MongoDB then counts keys
    instead of scanning the collection. No other count is hinted: MongoDB's planner picks
    the index by the filter, and the embedded engine answers a hint by walking the whole
    index (every document) instead of the filter's part of it.
    """
    if not match:
        return collection.count_documents({}, hint=[("_id", 1)])
    return collection.count_documents(match)


def page_keys(collection: Collection, match: dict, order: dict, skip: int, limit: int,
              *, hint: str | None = None) -> list:  # fmt: skip
    """`_id` and sort keys of the page, read from the index that serves filter and sort, or
    from the one `hint` names."""
    projection = dict.fromkeys(order, 1)
    cursor = collection.find(match, projection, sort=list(order.items()), skip=skip, limit=limit)
    if hint is not None:
        cursor = cursor.hint(hint)
    return list(cursor.batch_size(limit))


def documents(collection: Collection, ids: list, projection: dict | None) -> list[dict]:
    """The documents of `ids`, their fields of `projection` (None: all), in the order of
    `ids`, in one round trip; an id matched by MongoDB's equality (another writer's may be
    a document)."""
    if not ids:
        return []
    cursor = collection.find({"_id": {"$in": ids}}, projection, limit=len(ids))
    by_id = {equality_key(document["_id"]): document for document in cursor.batch_size(len(ids))}
    return [by_id[key] for key in map(equality_key, ids) if key in by_id]


def _visible(key: dict, visibility: Visibility) -> list[dict]:
    """The stages that keep what `key` names and the caller may see.

    The key comes first in its own `$match`: MongoDB merges the two stages into one filter,
    and the embedded engine plans its index on the first stage alone.
    """
    visible = visibility.as_filter()
    return [{"$match": key}, {"$match": visible}] if visible else [{"$match": key}]


def get_one(collection: Collection, visibility: Visibility, key: dict, stages: list[dict]):
    """The document that `key` names, if the caller may see it, or None."""
    if visibility.is_empty:
        return None
    pipeline = [*_visible(key, visibility), {"$limit": 1}, *stages]
    return next(iter(collection.aggregate(pipeline)), None)


def fields_of(paths) -> set[str]:
    """The top-level fields of stored paths: `bot` of `bot.name`."""
    return {path.partition(".")[0] for path in paths}


def lookup_all(field: str, collection: str, into: str) -> dict:
    """The documents a reference, or an array of them, names, as the array `into`."""
    return {"$lookup": {"from": collection, "localField": field, "foreignField": "_id", "as": into}}


def lookup_one(field: str, collection: str, into: str | None = None) -> list[dict]:
    """The document a reference names, in its place or as `into`; none when there is none."""
    into = into or field
    return [
        lookup_all(field, collection, into),
        {"$unwind": {"path": f"${into}", "preserveNullAndEmptyArrays": True}},
    ]
