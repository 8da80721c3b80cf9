"""The first items of a list sorted on a timestamp, read through windows of it.

On MongoDB the first page of a list is an index walk of `limit + 1` keys, whatever the list
holds. The embedded engine decodes every entry of its filter's index range before it sorts,
so there a plain first page costs the tenant's whole history; a range on the timestamp bounds
what it decodes (docs/decisions/2026-11-27-page-one-through-windows.md). So a branch of a list
sorted on `createdAt` or `updatedAt` is read in segments that follow MongoDB's order from the
list's start, each one query that the server sorts and limits, until they hold the items
wanted:

1. what sorts before every date: newest first, the types above them (timestamps, regular
   expressions, JavaScript, MaxKey), by `$type` on a partial index that holds only those
   (repositories/indexes.py): as a writer stores requests, none; oldest first, likewise the
   types below them and the arrays whose smallest element is one, and null and missing
   values by equality;
2. the dates up to the anchor: the last item of the last first page this worker read of the
   same branch, or, newest first, now, and oldest first, the list's `createdFrom` (a branch
   that held fewer items than a page wants is read by the plain query, until it holds more;
   oldest first without a lower bound, nothing bounds the oldest value, and a branch
   without an anchor is read plainly once, which leaves one);
3. the dates up to ever farther points, an hour past the anchor and then twice as far each
   time, until they reach a year past it;
4. the rest of the dates at once.

If the dates run out first, the caller reads on as it would have. A list bounded on the side
it starts from (`createdFrom` newest first, `createdTo` oldest first) holds only dates past
the bound, and arrays that hold one. One bounded on the side it ends on also holds arrays
with dates on either side of the bound, which sort before every date within it: they are
read after segment 1, by `$type` on the partial index that holds every array, and each
window carries the bound. A list bounded on both sides is read plainly.

Each window's condition on the timestamp is one-sided but for that bound, and selects again
what the segments before it read, which is dropped: the embedded engine, given a range on
both sides of an array's field, misses an array with elements on either side of it and none
within, which MongoDB selects (beside an end bound, only the arrays read before). An array
sorts at its largest element newest first, at its smallest oldest first, and a range selects
it by any element: it is read first in the segment of that element, in its place there.
Every comparison of order is the server's: Python only drops what it read before, tells a
value below the dates from one that is not, and, for a keyset walk, what belongs to its tail
(repositories/bson_order.py).
"""

import datetime as dt
import threading
from collections.abc import Callable

from bson import ObjectId
from cachetools import LRUCache
from pymongo.collection import Collection
from pymongo.errors import OperationFailure

from access.policy import Visibility
from domain import timestamps
from repositories.bson_equality import equality_key
from repositories.bson_order import Unplaceable, first_below_dates, in_tail
from repositories.indexes import (
    ABOVE_DATES,
    BELOW_DATES,
    REQUEST_SORTS,
    above_dates_index,
    below_dates_index,
)
from repositories.reads import MERGE_WINDOW, overlapping_filters, page_keys

# The lists read through windows, and on which timestamps: bot requests, which grow without
# bound (a worker serves the bot catalogue from its cache).
WINDOWED = {"botrequests": REQUEST_SORTS}
FIRST_WINDOW = dt.timedelta(hours=1)
GROWTH = 2  # each window after the first is this many times as wide as the one before
REACH = dt.timedelta(days=366)  # windows reach this far from the anchor, then the rest
ANCHORS = 4096  # branches whose anchor a worker remembers
SPLIT = 8  # `$in`s of references read as at most this many queries, one per combination
_MS = dt.timedelta(milliseconds=1)
_BAD_VALUE = 2  # MongoDB's code for a hint that names no index
# The bound of a list's start, by direction: newest first, a lower one.
_STARTS = {-1: "$gt", 1: "$lt"}
# For a bound, the one that selects an array with a date on its other side too.
_ACROSS = {"$gt": "$lte", "$lt": "$gte"}

_anchors: LRUCache = LRUCache(ANCHORS)
_anchors_lock = threading.Lock()


def _shifted(moment: dt.datetime, delta: dt.timedelta) -> dt.datetime | None:
    try:
        return moment + delta
    except OverflowError:
        return None


def _range(condition) -> dict | None:
    """A condition on the timestamp as {op: date}, one bound at most and that exclusive;
    None for any other condition, which windows do not read. The service says "at or after"
    as after the millisecond before (`domain/timestamps.between`) but from 0001-01-01, where
    the engine's `$gte`, which leaves out values equal to it on a descending index, would
    make the windows and the plain query disagree."""
    if condition is None:
        return {}
    if not isinstance(condition, dict) or len(condition) != 1:
        return None
    ((op, value),) = condition.items()
    return dict(condition) if op in _ACROSS and isinstance(value, dt.datetime) else None


def _sides(bound: dict, direction: int) -> tuple[dict, dict]:
    """`bound` as the bound of the list's start and that of its end, one of them empty."""
    starts = not bound or next(iter(bound)) == _STARTS[direction]
    return (bound, {}) if starts else ({}, bound)


class _Reader:
    """The segments of one branch, read in order until `want` items are kept."""

    def __init__(self, collection: Collection, match: dict, order: dict, want: int,
                 keep: Callable[[dict], bool]):  # fmt: skip
        self._collection = collection
        self._match = match
        self._order = order
        self._field = next(iter(order))
        self._want = want
        self._keep = keep
        self._seen: set = set()
        self.found: list[dict] = []

    @property
    def need(self) -> int:
        return self._want - len(self.found)

    @property
    def full(self) -> bool:
        return self.need <= 0

    def segment(self, condition: dict, hint: str | None = None) -> None:
        """Reads the segment's first items that were not read before, which it may select
        again."""
        self.take(self.first(condition, hint))

    def first(self, condition: dict, hint: str | None = None,
              stop: Callable[[dict], bool] | None = None) -> list[dict]:  # fmt: skip
        """The first items `condition` selects: enough to fill the page with those not read
        before, or all; with `stop`, none from the first item it holds for on."""
        limit = self.need + len(self._seen)
        while True:
            keys = self.keys(condition, limit, hint)
            cut = next((n for n, key in enumerate(keys) if stop(key)), None) if stop else None
            if cut is not None:
                return keys[:cut]
            fresh = [key for key in keys if equality_key(key["_id"]) not in self._seen]
            if len(keys) < limit or sum(map(self._keep, fresh)) >= self.need:
                return keys
            limit *= 2

    def take(self, keys: list[dict]) -> None:
        """Keeps, in their order, the items of `keys` not read before, up to `want` in all.
        An `_id` is told from another by MongoDB's equality (another writer's may be a
        document)."""
        fresh = [key for key in keys if equality_key(key["_id"]) not in self._seen]
        self._seen.update(equality_key(key["_id"]) for key in fresh)
        self.found += [key for key in fresh if self._keep(key)][: self.need]

    def keys(self, condition: dict, limit: int, hint: str | None = None) -> list[dict]:
        """The first `limit` items of the branch that `condition` on the timestamp selects,
        from the index `hint` names, or any where it names none (dropped, or never made)."""
        match = {**self._match, self._field: condition}
        try:
            return page_keys(self._collection, match, self._order, 0, limit, hint=hint)
        except OperationFailure as error:
            if hint is None or error.code != _BAD_VALUE:
                raise
            return page_keys(self._collection, match, self._order, 0, limit)

    def merged(self, keys: list[dict]) -> list[dict]:
        """`keys`, read from two queries, in the server's order, once each."""
        ids = [key["_id"] for key in keys]
        return page_keys(self._collection, {"_id": {"$in": ids}}, self._order, 0, len(ids))


def _above_dates(reader: _Reader, field: str, bound: dict) -> None:
    """Newest first, what sorts before every date: within a bound on the timestamp, the
    arrays that also hold a date within it."""
    reader.segment({"$type": ABOVE_DATES, **bound}, above_dates_index(field))


def _across(reader: _Reader, field: str, end: dict) -> None:
    """The arrays with dates on both sides of the list's end bound, which sort before every
    date within it, in their order, from the partial index that holds every array."""
    ((op, limit),) = end.items()
    reader.segment({"$type": BELOW_DATES, _ACROSS[op]: limit, op: limit}, below_dates_index(field))


def _below_dates(reader: _Reader, field: str, bound: dict) -> None:
    """Oldest first, what sorts before every date: of the types below them and the arrays,
    those up to the first that sorts at a date or after; and, in a list without a bound,
    null and missing values, by equality to null on the branch's index (within a bound,
    only arrays sort before its dates, and the engine would decode the whole bound for an
    equality beside it). The server merges the two where both hold items. Raises
    Unplaceable for a value that cannot be told (`first_below_dates`)."""
    typed = reader.first(
        {"$type": BELOW_DATES, **bound},
        below_dates_index(field),
        stop=lambda key: not first_below_dates(key.get(field)),
    )
    nulls = [] if bound else reader.first({"$eq": None})
    reader.take(reader.merged(typed + nulls) if typed and nulls else typed or nulls)


def _eligible(collection: Collection, match: dict, order: dict) -> tuple | None:
    """(field, bound, memory) of a branch of a list that windows read: sorted on one
    timestamp, its condition on it none or one bound (`_range`)."""
    field, *rest = order
    if rest != ["_id"] or field not in WINDOWED.get(collection.name, ()):
        return None
    if any(key.startswith("$") for key in match):  # a `$and` may hold a bound on the field
        return None
    bound = _range(match.get(field))
    if bound is None:
        return None
    return field, bound, (collection.full_name, repr(match), field, order[field])


def _windowed(collection: Collection, match: dict, order: dict, want: int) -> tuple | None:
    """`_eligible`, unless the branch is remembered to hold fewer than `want` items."""
    eligible = _eligible(collection, match, order)
    if eligible is None:
        return None
    with _anchors_lock:
        held = _anchors.get(eligible[2])
    return None if isinstance(held, int) and held < want else eligible


def first_reads(collection: Collection, visibility: Visibility, filters: dict,
                narrow: dict | None, order: dict, want: int) -> list[dict]:  # fmt: skip
    """The queries whose first `want` items hold a list's first `want` items, for a reader
    that merges them by `_id: {$in}` on the server: one per visibility branch, without the
    exclusions that make branches disjoint (`reads.overlapping_filters`), and where windows
    read the branch, one per combination of the references its `$in`s hold (a member's
    organizations, the bots of a name; `_split`): each window's query is then equalities
    and one range, which the embedded engine bounds (after anything else, it decodes the
    branch's whole history)."""
    reads = []
    for match in overlapping_filters(visibility, filters, narrow):
        reads += _split(match, want) if _eligible(collection, match, order) else [match]
    return reads


def _split(match: dict, want: int) -> list[dict]:
    """`match` as one query per combination of the values of its `$in`s, each in its
    field's place, when each holds ObjectIds (references, which equality and `$in` select
    alike) and they make at most SPLIT queries, which give the merge at most MERGE_WINDOW
    ids together; else `match` itself."""
    parts = [match]
    for field, condition in match.items():
        if isinstance(condition, dict) and condition.keys() == {"$in"}:
            values = condition["$in"]
            if not isinstance(values, list) or not values:
                return [match]
            if not all(type(value) is ObjectId for value in values):
                return [match]
            parts = [{**part, field: value} for part in parts for value in dict.fromkeys(values)]
            if len(parts) > SPLIT or len(parts) * want > MERGE_WINDOW:
                return [match]
    return parts


def first_keys(collection: Collection, match: dict, order: dict, want: int) -> list[dict]:
    """The `_id` and sort keys of a branch's first `want` items, in the server's order:
    through windows where they apply, else (or when the dates run out first) by one query."""
    windowed = _windowed(collection, match, order, want)
    if windowed is not None:
        read = _read(collection, match, order, want, False, *windowed)
        if read is not None and read[1]:
            return read[0][:want]
    keys = page_keys(collection, match, order, 0, want)
    remember(collection, match, order, keys, want)
    return keys


def first_walk_keys(
    collection: Collection, match: dict, order: dict, want: int
) -> tuple[list[dict], bool] | None:
    """(keys, complete): a keyset walk's first items of a branch, without its tail, at
    least `want` of them when complete; incomplete when the dates ran out first, for the
    walk to read on past them. None where windows do not apply (`first_keys`), or cannot
    (`_read`)."""
    windowed = _windowed(collection, match, order, want)
    if windowed is None:
        return None
    return _read(collection, match, order, want, True, *windowed)


def remember(collection: Collection, match: dict, order: dict, keys: list[dict], want: int):
    """What a plain read of a branch's first `want` items says of the next read: a full
    page that ends on a date gives windows their anchor; a short one, how many items the
    branch held, below which windows would run out. Nothing for a list they do not read."""
    eligible = _eligible(collection, match, order)
    if eligible is not None:
        field, _, memory = eligible
        _remember(memory, field, keys, want)


def _remember(memory: tuple, field: str, keys: list[dict], want: int) -> None:
    last = keys[-1].get(field) if len(keys) >= want else None
    with _anchors_lock:
        if len(keys) < want:
            _anchors[memory] = len(keys)
        elif isinstance(last, dt.datetime):
            _anchors[memory] = last


def _read(collection, match, order, want, walk: bool, field, bound, memory):
    """(keys, complete) of the segments in order, kept as `first_keys` or, for a `walk`,
    `first_walk_keys` keeps them; None where a value read cannot be placed, or the dates
    oldest first have nothing to start from yet."""
    keep = (lambda key: not in_tail(key, order)) if walk else (lambda key: True)
    reader = _Reader(collection, match, order, want, keep)
    direction = order[field]
    start, end = _sides(bound, direction)
    try:
        (_above_dates if direction == -1 else _below_dates)(reader, field, bound)
    except Unplaceable:
        return None
    if end and not reader.full:
        _across(reader, field, end)
    if reader.full:
        return reader.found, True
    with _anchors_lock:
        anchor = _anchors.get(memory)
    if not isinstance(anchor, dt.datetime):
        if direction == -1:
            anchor = timestamps.now()
        elif end:  # oldest first from a date: the windows start there
            anchor = next(iter(end.values()))
        else:  # nothing bounds the oldest date: read plainly, which leaves an anchor
            return None
    _dates(reader, start, end, anchor, direction)
    _remember(memory, field, reader.found, want)
    return reader.found, reader.full


def _dates(reader: _Reader, start: dict, end: dict, anchor: dt.datetime, direction: int):
    """Segments 2 to 4 of the module's docstring. A window holds every date from its edge
    to the list's start: newest first `$gt` an edge that moves back from the anchor, oldest
    first `$lt` one that moves forward; within the list's `end` bound, from which the anchor
    starts at most. Once an edge would pass the list's `start` bound, that bound is the
    segment (every date the list holds)."""
    toward, away = ("$gt", "$lt") if direction == -1 else ("$lt", "$gt")
    own = next(iter(start.values()), None)
    last = dt.datetime.min if direction == -1 else dt.datetime.max

    def reached(edge: dt.datetime, mark: dt.datetime) -> bool:
        return (edge - mark) * direction >= dt.timedelta(0)

    if end:
        limit = next(iter(end.values()))
        anchor = min(anchor, limit) if direction == -1 else max(anchor, limit)
    edge = _shifted(anchor, direction * _MS) or anchor
    width, reach = FIRST_WINDOW, _shifted(anchor, direction * REACH) or last
    while True:
        if own is not None and reached(edge, own):
            reader.segment(start)
            return
        reader.segment({toward: edge, **end})
        if reader.full:
            return
        if reached(edge, reach):
            reader.segment(start or end or {away: _shifted(edge, -direction * _MS) or edge})
            return
        edge = _shifted(edge, direction * width) or last
        edge = max(edge, reach) if direction == -1 else min(edge, reach)
        width *= GROWTH
