"""What every list and single item is read with: a list's filters, one per visibility
branch; one visible document; the joins that complete a single item; and the threads that
run a request's independent reads side by side.

Filters are written flat where their fields do not collide (`combine`): one equality or
range per field, as an index's bounds are.

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

POOL_THREADS = 8

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
    """AND of the clauses, keys merged flat where they do not collide."""
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


def disjoint_filters(visibility: Visibility, filters: dict) -> list:
    """One filter per visibility branch, each excluding the branches before it."""
    return [
        combine(branch, *map(_negation, visibility.branches[:index]), filters)
        for index, branch in enumerate(visibility.branches)
    ]


def _visible(key: dict, visibility: Visibility) -> list[dict]:
    """The stages that keep what `key` names and the caller may see.

    The key is a `$match` of its own, as the position of a keyset page is
    (repositories/pipelines.py): what names the item, then who may see it, which MongoDB
    merges into one filter.
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
