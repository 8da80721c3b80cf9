"""A list's plan (`pages.ListPlan`) as aggregation pipelines, and the page they read: the one
module that turns a plan into queries (docs/performance.md#round-trips-per-warm-request).

Each visibility branch is one pipeline: `$match` (the branch with its filters), for a keyset
page a second `$match` after the position on the sort key and `_id`
(`bson_order.walk_after`), `$sort`, the page (`$skip`/`$limit`), `$project`. An index that
serves the branch holds its filter, sort key and `_id` (repositories/indexes.py), so each is
an index walk of the page's length. The branches run side by side, each routed on its own.
One branch read from its start projects the page's documents itself; otherwise each branch
reads `_id` and the sort keys (MongoDB skips on index keys without reading a document), and
one more pipeline fetches the page's documents by `_id: {$in}`, sorted and cut out by the
server. A counted page adds a count per branch, from index keys. So a page costs one query
per branch and one to fetch it. Past MERGE_WINDOW items an offset page is one `$or` of the
branches, so that no request holds a deep window's ids.

A keyset walk leaves to its tail what a range cannot place (`bson_order`): the page on which
the walk runs out in every branch also asks each for its tail, in `_id` order.
Every comparison of order is the server's: MongoDB's comparison of BSON values is not
Python's, and another writer's data holds any of them.
"""

from pymongo.collection import Collection

from domain.errors import InvalidParameter
from repositories.bson_equality import equality_key
from repositories.bson_order import (
    TAIL,
    WALK,
    Position,
    Resume,
    tail_after,
    walk_after,
)
from repositories.pages import KeysetPage, ListPlan, OffsetPage
from repositories.reads import submit

# The deepest offset page whose branches' first items are sorted together; past it, one `$or`.
MERGE_WINDOW = 10_000


def _run(collection: Collection, pipeline: list[dict], size: int, **options) -> list[dict]:
    """The pipeline's documents, at most `size`, in one round trip: a first batch one larger
    than them lets the server see the cursor end, so no `getMore` follows."""
    return list(collection.aggregate(pipeline, batchSize=size + 1, **options))


def _matching(*filters: dict) -> list[dict]:
    """A `$match` stage for each filter that selects anything less than everything."""
    return [{"$match": match} for match in filters if match]


def _page(stages: list[dict], order: dict, skip: int, limit: int) -> list[dict]:
    return [*stages, {"$sort": order}, *([{"$skip": skip}] if skip else []), {"$limit": limit}]


def _shown(projection: dict | None) -> list[dict]:
    """The `$project` of what a page shows (None: whole documents)."""
    return [] if projection is None else [{"$project": projection}]


def _projected(projection: dict | None, order: dict) -> list[dict]:
    """The `$project` of what a page shows and of its sort keys, which place the next page
    (None: whole documents, which hold them)."""
    return _shown(None if projection is None else {**projection, **dict.fromkeys(order, 1)})


def _cut(items: list[dict], projection: dict | None) -> list[dict]:
    """`items` without the sort keys that `projection` did not ask for."""
    if projection is None:
        return items
    return [{name: value for name, value in item.items() if name in projection} for item in items]


def _count(collection: Collection, match: dict) -> int:
    """An empty filter names no field, so MongoDB is told to count the `_id` index's keys
    rather than scan the collection."""
    hint = {} if match else {"hint": {"_id": 1}}
    counting = [*_matching(match), {"$group": {"_id": None, "n": {"$sum": 1}}}]
    return sum(row["n"] for row in _run(collection, counting, 1, **hint))


def _counts(collection: Collection, plan: ListPlan) -> list:
    return [submit(_count, collection, match) for match in plan.branches] if plan.counted else []


def _total(counts: list) -> int | None:
    return sum(count.result() for count in counts) if counts else None


def _keys(order: dict) -> dict:
    return {"$project": dict.fromkeys(order, 1)}


def _read_keys(collection, stages: list[dict], order: dict, skip: int, limit: int) -> list[dict]:
    """`_id` and sort keys of the items `stages` select, `skip` left out and `limit` kept."""
    return _run(collection, [*_page(stages, order, skip, limit), _keys(order)], limit)


def _fetch(collection, ids: list, order: dict, skip: int, limit: int, projection) -> list[dict]:
    """The documents of `ids` in `order`, `skip` of them left out and `limit` kept."""
    if not ids or limit <= 0:
        return []
    stages = _page([{"$match": {"_id": {"$in": ids}}}], order, skip, limit)
    return _run(collection, stages + _shown(projection), limit)


def _offset_page(collection: Collection, plan: ListPlan) -> OffsetPage:
    counts = _counts(collection, plan)
    order, skip, limit, branches = plan.order, plan.skip, plan.limit, plan.branches
    shown = _shown(plan.projection)
    if len(branches) == 1 and not skip:
        results = _run(collection, _page(_matching(branches[0]), order, 0, limit) + shown, limit)
    elif len(branches) == 1 or skip + limit > MERGE_WINDOW:
        match = branches[0] if len(branches) == 1 else {"$or": list(branches)}
        keys = _read_keys(collection, _matching(match), order, skip, limit)
        results = _fetch(collection, [key["_id"] for key in keys], order, 0, limit, plan.projection)
    else:
        reads = [
            submit(_read_keys, collection, _matching(match), order, 0, skip + limit)
            for match in branches
        ]
        ids = [key["_id"] for read in reads for key in read.result()]
        results = _fetch(collection, ids, order, skip, limit, plan.projection)
    return OffsetPage(results, plan.page, limit, _total(counts))


def _anchored(collection: Collection, plan: ListPlan) -> Resume:
    """The position of the item a cursor names by id (`Resume.anchor`), if it is still in
    the list."""
    anchor = plan.resume.anchor
    stages = [{"$match": {"_id": anchor}}, {"$match": {"$or": list(plan.branches)}}]
    key = next(iter(_run(collection, [*stages, {"$limit": 1}, _keys(plan.order)], 1)), None)
    if key is None:
        raise InvalidParameter("cursor", "Its page's last item is gone: start again.")
    return Resume(plan.resume.phase, Position.of(key, plan.order))


def _items(collection, stages: list[dict], order: dict, want: int, shown: list[dict]):
    return _run(collection, _page(stages, order, 0, want) + shown, want)


def _found(collection, plan: ListPlan, resume: Resume | None, shown: list) -> list[tuple]:
    """(phase, item) of the first `limit + 1` items after `resume`, projected by `shown`,
    each branch read side by side: the walk's, then, if the walk runs out first in every
    branch, the tail's; each phase in the server's order for one branch."""
    order, want = plan.order, plan.limit + 1
    walk, position = [], None if resume is None else resume.position
    if resume is None or resume.phase == WALK:
        reads = [
            submit(_items, collection, _matching(match, walk_after(order, position)), order,
                   want, shown)
            for match in plan.branches
        ]  # fmt: skip
        walk = [(WALK, item) for read in reads for item in read.result()]
        if len(walk) >= want:
            return walk
        position = None
    by_id, rest = {"_id": order["_id"]}, want - len(walk)
    reads = [
        submit(_items, collection, _matching(match, tail_after(order, position)), by_id, rest,
               shown)
        for match in plan.branches
    ]  # fmt: skip
    return walk + [(TAIL, item) for read in reads for item in read.result()]


def _fetched(collection, found: list, order: dict, limit: int, projection) -> list[tuple]:
    """(phase, document) of the first `limit` of several branches' items: the walk's in
    `order`, then the tail's in `_id` order, each put in order by the server."""
    page = []
    for phase, sort in ((WALK, order), (TAIL, {"_id": order["_id"]})):
        ids = [item["_id"] for kind, item in found if kind == phase]
        fetched = _fetch(collection, ids, sort, 0, limit - len(page), projection)
        page += [(phase, item) for item in fetched]
    return page


def _keyset_page(collection: Collection, plan: ListPlan) -> KeysetPage:
    """One branch reads its page's documents itself, with their sort keys for the next
    page's position; several read their keys side by side, and the page is fetched by id."""
    counts = _counts(collection, plan)
    order, limit, resume = plan.order, plan.limit, plan.resume
    if resume is not None and resume.position is None:
        resume = _anchored(collection, plan)
    if len(plan.branches) == 1:
        found = _found(collection, plan, resume, _projected(plan.projection, order))
        page = found[:limit]
    else:
        found = _found(collection, plan, resume, [_keys(order)])
        page = _fetched(collection, found, order, limit, plan.projection)
    keys = {equality_key(item["_id"]): item for _, item in found}
    following = None
    if page and len(found) > limit:  # an item past the page: the next page starts after it
        phase, last = page[-1]
        following = Resume(phase, Position.of(keys[equality_key(last["_id"])], order))
    results = _cut([item for _, item in page], plan.projection)
    return KeysetPage(results, limit, following, _total(counts))


def read_page(collection: Collection, plan: ListPlan) -> OffsetPage | KeysetPage:
    """The page `plan` asks for, offset or keyset (docs/api.md#keyset-pages)."""
    if not plan.branches:
        empty = 0 if plan.counted else None
        if plan.keyset:
            return KeysetPage([], plan.limit, None, empty)
        return OffsetPage([], plan.page, plan.limit, empty)
    return (_keyset_page if plan.keyset else _offset_page)(collection, plan)
