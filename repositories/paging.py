"""How every list reads a page and its exact total, with cost that follows the page.

A page is read in three steps, shaped for a real MongoDB first:

1. The total: one count per visibility branch, each a `$match` on an index that holds every
   field of the filter, so MongoDB answers it from index keys alone (no document is fetched).
2. The page's ids, at the same time as the counts: a `find` projected on `_id` and the sort
   keys, sorted and limited on an index that holds filter, sort and `_id`, so MongoDB walks
   `skip + limit` index keys and reads no document.
3. The page itself: the `limit` documents by `_id: {$in: ids}`, with their joins, put back in
   page order.

Visibility branches run as one query each, merged here in order, rather than one `$or`. On
MongoDB both shapes walk the same indexes (a `$or` plans one index scan per branch and merges
them); on the embedded engine (SecantusDB) a top-level `$or` uses no index at all and decodes
every document of the collection. The one cost on MongoDB: a deep page of several branches
brings each branch's first `skip + limit` keys here to be merged (in batches), where a `$or`
would skip them on the server. Each branch excludes the earlier ones with a negation on
the same field (`$ne`, `$nin`), so the branches are disjoint: their counts add up and their
pages merge without duplicates. The negated field trails the branch's index
(see repositories/indexes.py), which keeps MongoDB's count covered.

What a query costs on the embedded engine is the number of documents its first indexed
field selects: it loads and decodes all of them before it sorts, skips and limits. Filters
are therefore written field by field with the most selective indexed field first.
"""

import contextvars
import datetime as dt
import heapq
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from itertools import chain, islice
from threading import Lock

from bson import DatetimeMS, Decimal128, ObjectId
from pymongo.collection import Collection

from access.policy import Visibility

POOL_THREADS = 8
MERGE_BATCH = 5_000  # keys per round trip when a deep page merges branches


@dataclass(frozen=True, kw_only=True)
class Paging:
    """Which page of a list, in which order; a list's query (`BotQuery`...) adds its filters."""

    sort: list[tuple[str, int]]
    page: int
    limit: int


@dataclass(frozen=True)
class Page:
    results: list[dict]
    page: int
    limit: int
    total_results: int

    @property
    def total_pages(self) -> int:
        return -(-self.total_results // self.limit)


def contains(text: str) -> dict:
    """Case-insensitive substring; every character literal, so no pattern can backtrack."""
    return {"$regex": re.escape(text), "$options": "i"}


def equals_ignoring_case(text: str) -> dict:
    return {"$regex": f"^{re.escape(text)}$", "$options": "i"}


def combine(*clauses: dict) -> dict:
    """AND of the clauses, keys merged flat in order where they do not collide.

    Flat and ordered matters to the embedded engine, which uses an index only for a filter
    without top-level operators, and takes the first field it has an index for.
    """
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


def sort_order(sort: list[tuple[str, int]]) -> dict:
    """The requested order, ties broken on `_id` in the last key's direction.

    Following the last key's direction lets one index {key: 1, _id: 1} serve both directions.
    """
    order = dict(sort)
    order["_id"] = sort[-1][1]
    return order


def lookup_one(field: str, collection: str, into: str | None = None) -> list[dict]:
    """Replace a reference by the referenced document, or drop it when there is none."""
    into = into or field
    return [
        {"$lookup": {"from": collection, "localField": field, "foreignField": "_id", "as": into}},
        {"$unwind": {"path": f"${into}", "preserveNullAndEmptyArrays": True}},
    ]


_pool: ThreadPoolExecutor | None = None
_pool_lock = Lock()


def _forget_pool() -> None:
    """A forked worker inherits the pool object but not its threads."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def _submit(function, *args) -> Future:
    """Run independent queries of one request side by side; pymongo clients are thread-safe.

    Each runs in a copy of the caller's context, which carries the request's deadline
    (`pymongo.timeout` keeps it in a context variable, which a pool thread does not inherit).
    """
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="query")
        return _pool.submit(contextvars.copy_context().run, function, *args)


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


def _page_keys(collection: Collection, match: dict, order: dict, skip: int, limit: int) -> list:
    """`_id` and sort keys of the page, read from the index that serves filter and sort."""
    projection = dict.fromkeys(order, 1)
    cursor = collection.find(match, projection, sort=list(order.items()), skip=skip, limit=limit)
    return list(cursor.batch_size(limit))


def _branch_keys(collection: Collection, match: dict, order: dict, limit: int):
    """A branch's keys in order, as a cursor whose first batch is already read.

    Read lazily after that, so a deep page holds one batch per branch in memory, not
    `skip + limit` keys.
    """
    projection = dict.fromkeys(order, 1)
    cursor = collection.find(match, projection, sort=list(order.items()), limit=limit)
    cursor.batch_size(min(limit, MERGE_BATCH))
    first = next(cursor, None)
    return cursor, [] if first is None else [first]


def _merged_page_keys(collection, matches: list, order: dict, skip: int, limit: int) -> list:
    """The page of the union of disjoint branches, merged in order on the sort keys.

    A branch's first `skip + limit` entries hold all of its entries on the page; on page 1
    each branch reads `limit` keys, in one round trip.
    """
    opened = [_submit(_branch_keys, collection, m, order, skip + limit) for m in matches]
    branches = [future.result() for future in opened]
    try:
        streams = [chain(first, cursor) for cursor, first in branches]
        merged = heapq.merge(*streams, key=_sort_key(order))
        return list(islice(merged, skip, skip + limit))
    finally:
        for cursor, _ in branches:
            cursor.close()


def fetch_page(
    collection: Collection,
    visibility: Visibility,
    filters: dict,
    *,
    sort: list[tuple[str, int]],
    page: int,
    limit: int,
    joins: list[dict] = (),
    narrow: dict | None = None,
) -> Page:
    """The page and the exact total; `narrow` holds filters worth putting before visibility."""
    if visibility.is_empty:
        return Page([], page, limit, 0)
    order = sort_order(sort)
    skip = (page - 1) * limit
    matches = disjoint_filters(visibility, filters, narrow)
    counts = [_submit(count, collection, match) for match in matches]
    if len(matches) == 1:
        keys = _page_keys(collection, matches[0], order, skip, limit)
    else:
        keys = _merged_page_keys(collection, matches, order, skip, limit)
    total = sum(future.result() for future in counts)
    ids = [key["_id"] for key in keys]
    return Page(_documents(collection, ids, joins), page, limit, total)


def _documents(collection: Collection, ids: list, joins: list[dict]) -> list[dict]:
    """The documents of `ids` with their joins, in the order of `ids`, in one round trip."""
    if not ids:
        return []
    pipeline = [{"$match": {"_id": {"$in": ids}}}, {"$limit": len(ids)}, *joins]
    by_id = {document["_id"]: document for document in collection.aggregate(pipeline)}
    return [by_id[id_] for id_ in ids if id_ in by_id]


def get_one(collection: Collection, visibility: Visibility, key: dict, stages: list[dict]):
    """The document that `key` names, if the caller may see it, or None.

    The key comes first in its own `$match`: MongoDB merges the two stages into one filter,
    and the embedded engine plans its index on the first stage alone.
    """
    if visibility.is_empty:
        return None
    pipeline = [{"$match": key}]
    visible = visibility.as_filter()
    if visible:
        pipeline.append({"$match": visible})
    pipeline += [{"$limit": 1}, *stages]
    return next(iter(collection.aggregate(pipeline)), None)


# BSON's order of types for sorting (null and a missing field sort alike).
_NULL, _NUMBER, _STRING, _OBJECT, _ARRAY, _BINARY, _OBJECTID, _BOOLEAN, _DATE = range(1, 10)
_OTHER = 10


def _bson_key(value):
    """A Python-comparable key that orders values the way MongoDB sorts them."""
    if value is None:
        return (_NULL, 0)
    if isinstance(value, bool):
        return (_BOOLEAN, value)
    if isinstance(value, int | float | Decimal | Decimal128):
        number = value.to_decimal() if isinstance(value, Decimal128) else value
        return (_NUMBER, 0, 0) if number != number else (_NUMBER, 1, number)  # NaN first
    if isinstance(value, str):
        return (_STRING, value)
    if isinstance(value, dt.datetime):
        return (_DATE, int(DatetimeMS(value)))
    if isinstance(value, DatetimeMS):
        return (_DATE, int(value))
    if isinstance(value, ObjectId):
        return (_OBJECTID, value)
    if isinstance(value, dict):
        return (_OBJECT, str(value))
    if isinstance(value, list):
        return (_ARRAY, str(value))
    if isinstance(value, bytes):
        return (_BINARY, value)
    return (_OTHER, str(value))


class _Descending:
    """Inverts the order of a key, for the descending fields of a sort."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __lt__(self, other: "_Descending") -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and self.key == other.key

    __hash__ = None


def _sort_key(order: dict):
    fields = list(order.items())

    def key(document: dict) -> tuple:
        parts = []
        for field, direction in fields:
            part = _bson_key(document.get(field))
            parts.append(part if direction == 1 else _Descending(part))
        return tuple(parts)

    return key
