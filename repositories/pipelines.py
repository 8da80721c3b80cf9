"""A list's plan (`pages.ListPlan`) as aggregation pipelines, and the page they read: the one
module that turns a plan into queries (docs/performance.md#query-by-query).

Each visibility branch is a pipeline of its own: `$match` (the branch with its filters), for
a keyset page a second `$match` after the position on the sort key and `_id`
(`bson_order.walk_after`), `$sort`, the page (`$limit`), `$project`. An index that serves the
branch holds its filter, sort key and `_id` (repositories/indexes.py), so each is an index
walk of the page's length. The branches are one command: the first branch's pipeline, the
others' through `$unionWith`, each routed on its own; the server sorts their union and cuts
out the page. So a page is one query, and a counted page one more, which counts every branch
from index keys. An offset page that skips reads the page's keys first (`_id` and the sort
keys, which MongoDB skips on the index without reading a document), then fetches the page's
documents by `_id: {$in}`; past MERGE_WINDOW items, its keys are read by one `$or` of the
branches, so that no request sorts a deep window of every branch.

A keyset walk leaves to its tail what a range cannot place (`bson_order`): the page's command
reads on into the tail, in `_id` order, through one more `$unionWith`, which MongoDB starts
only once the walk runs out. An item read is told to be the tail's by its own sort values
(`in_tail`). Every comparison of order is the server's: MongoDB's comparison of BSON values
is not Python's, and another writer's data holds any of them.
"""

from pymongo.collection import Collection

from domain.errors import InvalidParameter
from repositories.bson_order import (
    TAIL,
    WALK,
    Position,
    Resume,
    in_tail,
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


def _joined(collection: Collection, pipelines: list[list[dict]]) -> list[dict]:
    """One pipeline of several: the first's stages, then the others' through `$unionWith`."""
    first, *others = pipelines
    return [*first, *({"$unionWith": {"coll": collection.name, "pipeline": p}} for p in others)]


def _union(collection: Collection, pipelines: list[list[dict]], order: dict, limit: int):
    """The branches' pipelines joined, their union sorted and cut to `limit`."""
    if len(pipelines) == 1:
        return pipelines[0]
    return [*_joined(collection, pipelines), {"$sort": order}, {"$limit": limit}]


def _projected(plan: ListPlan) -> tuple[list[dict], dict | None]:
    """The `$project` of what the page shows and of its sort keys, which order the union
    and place the next page; and the projection to cut the items to (None: as read)."""
    if plan.projection is None:
        return [], None
    return [{"$project": {**plan.projection, **dict.fromkeys(plan.order, 1)}}], plan.projection


def _cut(items: list[dict], projection: dict | None) -> list[dict]:
    if projection is None:
        return items
    return [{name: value for name, value in item.items() if name in projection} for item in items]


def _total(collection: Collection, plan: ListPlan) -> int:
    """Every branch counted, in one command. An empty filter names no field, so MongoDB is
    told to count the `_id` index's keys rather than scan the collection."""
    counting = {"$group": {"_id": None, "n": {"$sum": 1}}}
    pipelines = [[*_matching(match), counting] for match in plan.branches]
    hint = {"hint": {"_id": 1}} if plan.branches == ({},) else {}
    rows = _run(collection, _joined(collection, pipelines), len(pipelines), **hint)
    return sum(row["n"] for row in rows)


def _keys(order: dict) -> dict:
    return {"$project": dict.fromkeys(order, 1)}


def _fetch(collection, ids: list, order: dict, limit: int, projection) -> list[dict]:
    """The documents of `ids` in `order`."""
    if not ids:
        return []
    stages = _page([{"$match": {"_id": {"$in": ids}}}], order, 0, limit)
    return _run(collection, stages + ([{"$project": projection}] if projection else []), limit)


def _skipping(collection: Collection, plan: ListPlan) -> list[dict]:
    """The stages that select an offset page's items, `skip` of them left out."""
    order, skip, limit, branches = plan.order, plan.skip, plan.limit, plan.branches
    if len(branches) == 1:
        return _page(_matching(branches[0]), order, skip, limit)
    if skip + limit > MERGE_WINDOW:
        return _page([{"$match": {"$or": list(branches)}}], order, skip, limit)
    pipelines = [_page(_matching(match), order, 0, skip + limit) + [_keys(order)]
                 for match in branches]  # fmt: skip
    return [*_union(collection, pipelines, order, skip + limit), {"$skip": skip}, {"$limit": limit}]


def _offset_page(collection: Collection, plan: ListPlan) -> OffsetPage:
    counted = submit(_total, collection, plan) if plan.counted else None
    order, skip, limit, branches = plan.order, plan.skip, plan.limit, plan.branches
    if not skip:
        shown = _projected(plan)[0] if len(branches) > 1 else []
        pipelines = [_page(_matching(match), order, 0, limit) + shown for match in branches]
        exact = [{"$project": plan.projection}] if plan.projection is not None else []
        results = _run(collection, _union(collection, pipelines, order, limit) + exact, limit)
    else:
        keys = _run(collection, [*_skipping(collection, plan), _keys(order)], limit)
        results = _fetch(collection, [key["_id"] for key in keys], order, limit, plan.projection)
    return OffsetPage(results, plan.page, limit, None if counted is None else counted.result())


def _anchored(collection: Collection, plan: ListPlan) -> Resume:
    """The position of the item a cursor names by id (`Resume.anchor`), if it is still in
    the list."""
    anchor = plan.resume.anchor
    stages = [{"$match": {"_id": anchor}}, {"$match": {"$or": list(plan.branches)}}]
    key = next(iter(_run(collection, [*stages, {"$limit": 1}, _keys(plan.order)], 1)), None)
    if key is None:
        raise InvalidParameter("cursor", "Its page's last item is gone: start again.")
    return Resume(plan.resume.phase, Position.of(key, plan.order))


def _keyset_stages(collection: Collection, plan: ListPlan, resume: Resume | None) -> list:
    """The walk's first `limit + 1` items after `resume`, then the tail's, in one command."""
    order, want, branches = plan.order, plan.limit + 1, plan.branches
    by_id, (shown, _) = {"_id": order["_id"]}, _projected(plan)
    in_tail_already = resume is not None and resume.phase == TAIL
    tail_position = resume.position if in_tail_already else None
    tail = [
        _page(_matching(match, tail_after(order, tail_position)), by_id, 0, want) + shown
        for match in branches
    ]
    tail = _union(collection, tail, by_id, want)
    if in_tail_already:
        return tail
    position = None if resume is None else resume.position
    walk = [
        _page(_matching(match, walk_after(order, position)), order, 0, want) + shown
        for match in branches
    ]
    walk = _union(collection, walk, order, want)
    return [*walk, {"$unionWith": {"coll": collection.name, "pipeline": tail}}, {"$limit": want}]


def _keyset_page(collection: Collection, plan: ListPlan) -> KeysetPage:
    counted = submit(_total, collection, plan) if plan.counted else None
    resume = plan.resume
    if resume is not None and resume.position is None:
        resume = _anchored(collection, plan)
    items = _run(collection, _keyset_stages(collection, plan, resume), plan.limit + 1)
    # The walk's items, then the tail's: each in the server's order.
    items = [item for item in items if not in_tail(item, plan.order)] + [
        item for item in items if in_tail(item, plan.order)
    ]
    page, following = items[: plan.limit], None
    if len(items) > plan.limit:
        last = page[-1]
        phase = TAIL if in_tail(last, plan.order) else WALK
        following = Resume(phase, Position.of(last, plan.order))
    results = _cut(page, _projected(plan)[1])
    total = None if counted is None else counted.result()
    return KeysetPage(results, plan.limit, following, total)


def read_page(collection: Collection, plan: ListPlan) -> OffsetPage | KeysetPage:
    """The page `plan` asks for, offset or keyset (docs/api.md#keyset-pages)."""
    if not plan.branches:
        empty = 0 if plan.counted else None
        if plan.keyset:
            return KeysetPage([], plan.limit, None, empty)
        return OffsetPage([], plan.page, plan.limit, empty)
    return (_keyset_page if plan.keyset else _offset_page)(collection, plan)
