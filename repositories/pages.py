"""A list's page: its query, the two kinds of page, and how an offset page is read.

A list is read in offset pages unless its query asks for keyset pages (`ListQuery.keyset`,
the one place that decides); `fetch_list` then reads it through repositories/keyset_pages.py.
Either page holds its items and, when counted, its exact total, at a cost that follows the
page rather than the list.

An offset page is read in three steps, shaped for a real MongoDB first:

1. The total: one count per visibility branch, each a `$match` on an index that holds every
   field of the filter, so MongoDB answers it from index keys alone (no document is fetched).
2. The page's ids, at the same time as the counts: a `find` projected on `_id` and the sort
   keys, sorted and limited on an index that holds filter, sort and `_id`, so MongoDB walks
   `skip + limit` index keys and reads no document. Sorted on a timestamp, a branch's
   first `skip + limit` ids are read through windows of it instead
   (repositories/first_items.py), which bound the embedded engine's cost too.
3. The page itself: the `limit` documents by `_id: {$in: ids}`, their fields of the
   projection alone, put back in page order; of several reads, sorted and cut out by the
   server from all their ids.

Visibility branches run as one query each, never one top-level `$or` (why, and what it
costs: docs/performance.md, Query by query). They are disjoint where they are counted, and
past MERGE_WINDOW ids, where a deep page is one `$or`; the first items of their union are
read without what makes them disjoint (repositories/first_items.py, `first_reads`). The
branches' ids are put in order by the server, never here: MongoDB's comparison
of BSON values (arrays by their smallest or largest element, objects field by field, NaN,
MinKey...) is not Python's, and another writer's data holds them. The negated field that
makes a branch disjoint trails its index (see repositories/indexes.py), which keeps
MongoDB's count covered.

What a query costs on the embedded engine is the number of documents its first indexed
field's range selects: it loads and decodes all of them before it sorts, skips and limits
(repositories/reads.py writes filters for it).
"""

from dataclasses import dataclass

from pymongo.collection import Collection

from access.policy import Visibility
from repositories.bson_order import Resume, sort_order
from repositories.first_items import first_keys, first_reads
from repositories.keyset_pages import read_keyset_page
from repositories.reads import (
    MERGE_WINDOW,
    count,
    disjoint_filters,
    documents,
    page_keys,
    submit,
)


@dataclass(frozen=True, kw_only=True)
class ListQuery:
    """Which page of a list, in which order; a list's query (`BotListQuery`...) adds its filters.

    Offset pages by default; keyset pages when `pagination` says so or a `cursor` resumes
    one (docs/api.md#keyset-pages). `count` is "exact" or "none"; unsaid, offset pages count and
    keyset pages do not.
    """

    sort: list[tuple[str, int]]
    page: int | None  # None: the first
    limit: int
    pagination: str | None = None
    cursor: Resume | None = None
    count: str | None = None

    @property
    def keyset(self) -> bool:
        return keyset_asked(self.pagination, self.cursor)

    @property
    def counted(self) -> bool:
        return self.count == "exact" if self.count else not self.keyset


def keyset_asked(pagination: str | None, cursor) -> bool:
    """Keyset paging is asked by name, or by a cursor, which only keyset pages give."""
    return pagination == "keyset" or cursor is not None


@dataclass(frozen=True)
class KeysetPage:
    results: list[dict]
    limit: int
    next: Resume | None
    total_results: int | None

    @property
    def total_pages(self) -> int | None:
        return page_count(self.total_results, self.limit)


@dataclass(frozen=True)
class OffsetPage:
    results: list[dict]
    page: int
    limit: int
    total_results: int | None

    @property
    def total_pages(self) -> int | None:
        return page_count(self.total_results, self.limit)


def page_count(total_results: int | None, limit: int) -> int | None:
    """Pages of `limit` that `total_results` fill, the last one partly; None uncounted."""
    return None if total_results is None else -(-total_results // limit)


def _first_page(collection, reads: list, order: dict, skip: int, limit: int, projection):
    """The page `skip` items into the union of `reads` (`first_items.first_reads`), in
    MongoDB's own order.

    A read's first `skip + limit` entries hold all of its entries on the page: each read
    gives those ids from its index, and the query that fetches the page's documents sorts
    their union on the server, where two reads' same id is one document, and cuts the page
    out. The server, not Python, compares the sort values: another writer's values of any
    BSON type (arrays, objects, NaN, MinKey...) then fall where MongoDB's own sort puts them.
    """
    window = skip + limit
    if len(reads) == 1:
        keys = first_keys(collection, reads[0], order, window)[skip:]
        return documents(collection, [key["_id"] for key in keys], projection)
    branches = [submit(first_keys, collection, match, order, window) for match in reads]
    ids = [key["_id"] for branch in branches for key in branch.result()]
    if not ids:
        return []
    cursor = collection.find(
        {"_id": {"$in": ids}}, projection, sort=list(order.items()), skip=skip, limit=limit
    )
    return list(cursor.batch_size(limit))


def _deep_page(collection, matches: list, order: dict, skip: int, limit: int, projection):
    """A page past MERGE_WINDOW items: ordered and skipped on the server by one query, a
    `$or` of the disjoint branches, so that no request holds a deep window's ids."""
    match = matches[0] if len(matches) == 1 else {"$or": matches}
    keys = page_keys(collection, match, order, skip, limit)
    return documents(collection, [key["_id"] for key in keys], projection)


def fetch_page(
    collection: Collection,
    visibility: Visibility,
    filters: dict,
    *,
    sort: list[tuple[str, int]],
    page: int,
    limit: int,
    projection: dict | None = None,
    narrow: dict | None = None,
    counted: bool = True,
) -> OffsetPage:
    """The page, and the exact total when `counted`; `narrow` holds filters worth putting
    before visibility."""
    if visibility.is_empty:
        return OffsetPage([], page, limit, 0 if counted else None)
    order = sort_order(sort)
    skip = (page - 1) * limit
    matches = disjoint_filters(visibility, filters, narrow)
    counts = [submit(count, collection, match) for match in matches] if counted else []
    if skip + limit > MERGE_WINDOW:
        results = _deep_page(collection, matches, order, skip, limit, projection)
    else:
        reads = first_reads(collection, visibility, filters, narrow, order, skip + limit)
        results = _first_page(collection, reads, order, skip, limit, projection)
    total = sum(future.result() for future in counts) if counted else None
    return OffsetPage(results, page, limit, total)


def first_documents(
    collection: Collection,
    visibility: Visibility,
    filters: dict,
    *,
    sort: list[tuple[str, int]],
    limit: int,
    projection: dict | None = None,
    narrow: dict | None = None,
) -> list[dict]:
    """The first `limit` documents in order, for a reader that wants them all (an export's
    window) rather than a page deep in a list.

    One branch is one query that sorts, cuts and projects, reading each document once: the
    embedded engine fetches a document by id (step 3 above) a thousand times slower than
    along a range, and runs a `find` faster than the same aggregation. Several branches are
    put in order by the server, as page 1 is."""
    if visibility.is_empty:
        return []
    if len(visibility.branches) > 1:
        order = sort_order(sort)
        reads = first_reads(collection, visibility, filters, narrow, order, limit)
        return _first_page(collection, reads, order, 0, limit, projection)
    (match,) = disjoint_filters(visibility, filters, narrow)
    order = list(sort_order(sort).items())
    return list(collection.find(match, projection, sort=order, limit=limit).batch_size(limit))


def fetch_keyset_page(
    collection: Collection, visibility: Visibility, filters: dict, *, limit: int, **reading
) -> KeysetPage:
    """The keyset page that repositories/keyset_pages.py reads (`read_keyset_page`, with
    its arguments)."""
    results, following, total = read_keyset_page(
        collection, visibility, filters, limit=limit, **reading
    )
    return KeysetPage(results, limit, following, total)


def fetch_list(
    collection: Collection,
    visibility: Visibility,
    filters: dict,
    query: ListQuery,
    *,
    projection: dict | None = None,
    narrow: dict | None = None,
) -> OffsetPage | KeysetPage:
    """The page `query` asks for, offset or keyset (docs/api.md#keyset-pages)."""
    if query.keyset:
        return fetch_keyset_page(
            collection, visibility, filters, sort=query.sort, limit=query.limit,
            resume=query.cursor, counted=query.counted, projection=projection, narrow=narrow,
        )  # fmt: skip
    return fetch_page(
        collection, visibility, filters, sort=query.sort, page=query.page or 1, limit=query.limit,
        projection=projection, narrow=narrow, counted=query.counted,
    )  # fmt: skip
