"""Reading a keyset page: `limit + 1` items past a position, per visibility branch.

Each branch reads the blocks of `repositories/bson_order.py` in order, from its own index, until it
has `limit + 1` items or none are left; a page of several branches is then put in order by
the server, as an offset page is (repositories/pages.py). The one more item tells whether a
next page exists, and the last item of the page is where the next one resumes.
"""

from pymongo.collection import Collection

from access.policy import Visibility
from domain.errors import InvalidParameter
from repositories.bson_equality import equality_key
from repositories.bson_order import (
    TAIL,
    WALK,
    Position,
    Resume,
    in_tail,
    past_dates,
    relaxed,
    sort_order,
    tail_parts,
    tie_block,
    walk_blocks,
)
from repositories.first_items import first_reads, first_walk_keys, remember
from repositories.reads import (
    combine,
    count,
    disjoint_filters,
    documents,
    get_one,
    page_keys,
    submit,
)

# Items read at most to find the ties of a position; past it, one block per `_id` type.
TIES = 100


def _find(collection: Collection, match: dict, block: dict, order: dict, limit: int) -> list:
    return page_keys(collection, combine(match, block), order, 0, limit)


def _read(collection: Collection, match: dict, block: dict, order: dict, limit: int) -> list:
    """A walk block's first `limit` items, asked first without what keeps the tail out.

    The conditions that exclude arrays and the rare types (`$not`, `$type`, `$or`) keep an
    engine from walking its index in order (the embedded one then sorts every match); where
    no item read has a tail value, the plain block's first items are the block's first items,
    and most data has none. Python only classifies the values it was sent."""
    found = _find(collection, match, relaxed(block), order, limit)
    if any(in_tail(key, order) for key in found):
        return _find(collection, match, block, order, limit)
    return found


def _branch_keys(collection, match: dict, order: dict, resume: Resume | None, want: int,
                 ties_read: bool):  # fmt: skip
    """(phase, keys) of at least the branch's first `want` items after `resume`: the walk's
    in order, then, if the walk ends first, up to `want` of each part of the tail. With
    `ties_read`, the position's ties are already read (`_ties_after`)."""
    found, blocks = [], None
    if resume is None:
        windowed = first_walk_keys(collection, match, order, want)
        if windowed is not None:
            keys, complete = windowed
            found = [(WALK, key) for key in keys]
            if complete:
                return found[:want]
            blocks = past_dates(order)
        else:
            # Most lists hold no tail value: their first items, asked plainly, start the walk.
            keys = _find(collection, match, {}, order, want)
            remember(collection, match, order, keys, want)
            if not any(in_tail(key, order) for key in keys):
                return [(WALK, key) for key in keys]
    if resume is None or resume.phase == WALK:
        position = resume and resume.position
        for block in blocks if blocks is not None else walk_blocks(order, position, ties_read):
            found += [(WALK, key) for key in _read(collection, match, block, order, want)]
            if len(found) >= want:
                return found[:want]
    by_id = {"_id": order["_id"]}
    position = resume.position if resume is not None and resume.phase == TAIL else None
    for part in tail_parts(order, position):
        found += [(TAIL, key) for key in _find(collection, match, part, by_id, want)]
    return found


def _ties_after(collection, matches: list, order: dict, position: Position) -> list | None:
    """The items tied with the position on every sort key that come after it, in one query
    per branch rather than one per BSON type an `_id` could have: the tie groups, in the
    server's order, cut after the position's own item (found by equality). None, to read the
    blocks one by one, when a group is too large or the position's item is gone."""
    block = tie_block(order, position)
    groups = [submit(_read, collection, match, block, order, TIES) for match in matches]
    groups = [group.result() for group in groups]
    keys = [key for group in groups for key in group]
    if any(len(group) == TIES for group in groups):
        return None
    if len(groups) > 1:
        walk = [(WALK, key) for key in keys]
        keys = [key for _, key in _in_order(collection, walk, order, len(walk))]
    ids = [key["_id"] for key in keys]
    if position.values[-1] not in ids:
        return None
    return keys[ids.index(position.values[-1]) + 1 :]


def _in_order(collection: Collection, keys: list, order: dict, want: int) -> list:
    """The first `want` of several lists of keys, the walk's in the server's order, then the
    tail's in `_id` order. A document in two parts of the tail counts once."""
    phases = {}
    for phase, key in keys:
        phases.setdefault(equality_key(key["_id"]), (phase, key))
    ordered = []
    for phase, sort in ((WALK, order), (TAIL, {"_id": order["_id"]})):
        ids = [key["_id"] for kind, key in phases.values() if kind == phase]
        if ids and len(ordered) < want:
            pipeline = [
                {"$match": {"_id": {"$in": ids}}},
                {"$sort": sort},
                {"$limit": want - len(ordered)},
                {"$project": {"_id": 1}},
            ]
            rows = collection.aggregate(pipeline)
            ordered += [phases[equality_key(row["_id"])] for row in rows]
    return ordered


def _anchored(collection, visibility: Visibility, resume: Resume, order: dict) -> Resume:
    """The position of the item a cursor names by id, if the caller may still see it."""
    key = get_one(
        collection, visibility, {"_id": resume.anchor}, [{"$project": dict.fromkeys(order, 1)}]
    )
    if key is None:
        raise InvalidParameter("cursor", "Its page's last item is gone: start again.")
    return Resume(resume.phase, Position.of(key, order))


def read_keyset_page(
    collection: Collection,
    visibility: Visibility,
    filters: dict,
    *,
    sort: list[tuple[str, int]],
    limit: int,
    resume: Resume | None,
    counted: bool,
    projection: dict | None = None,
    narrow: dict | None = None,
) -> tuple[list[dict], Resume | None, int | None]:
    """The page after `resume` (the first when None): its documents, where the page after it
    resumes (None on the last), and the exact total when `counted`."""
    if visibility.is_empty:
        return [], None, 0 if counted else None
    order = sort_order(sort)
    if resume is not None and resume.position is None:
        resume = _anchored(collection, visibility, resume, order)
    matches = disjoint_filters(visibility, filters, narrow)
    counts = [submit(count, collection, match) for match in matches] if counted else []
    want = limit + 1
    ties = None
    if resume is not None and resume.phase == WALK:
        ties = _ties_after(collection, matches, order, resume.position)
    reads = matches
    if resume is None:  # the first page: the union's first items (first_items.first_reads)
        reads = first_reads(collection, visibility, filters, narrow, order, want)
    branches = [
        submit(_branch_keys, collection, match, order, resume, want, ties is not None)
        for match in reads
    ]
    keys = [(WALK, key) for key in ties or ()]
    keys += [key for branch in branches for key in branch.result()]
    if len(reads) > 1 or any(phase == TAIL for phase, _ in keys):
        keys = _in_order(collection, keys, order, want)
    page, following = keys[:limit], None
    if len(keys) > limit:
        phase, last = page[-1]
        following = Resume(phase, Position.of(last, order))
    results = documents(collection, [key["_id"] for _, key in page], projection)
    total = sum(future.result() for future in counts) if counted else None
    return results, following, total
