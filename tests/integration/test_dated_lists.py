"""Lists of requests sorted on a timestamp, newest and oldest first: exactly one plain
query's page, offset or keyset (repositories/pipelines.py).

The dates spread from the future to before 1970, with ties, arrays of dates far apart and,
on the wire server, a value of every BSON type; filters bound the timestamp from either side.
"""

import datetime as dt
import random

import mongomock
import pytest
from bson import DatetimeMS, DBRef, Decimal128, ObjectId, Timestamp

from access.policy import Visibility
from domain import timestamps
from repositories.indexes import (
    ensure_indexes,
)
from tests.support.page_data import ODD_VALUES, ORGS, USERS
from tests.support.page_reads import all_ids, offset_page, reference, tail_value, walk

HOUR, DAY, MS = dt.timedelta(hours=1), dt.timedelta(days=1), dt.timedelta(milliseconds=1)
NOW = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
AGO = [
    -dt.timedelta(days=1),
    dt.timedelta(0),
    dt.timedelta(minutes=1),
    dt.timedelta(minutes=59),
    dt.timedelta(hours=1),
    dt.timedelta(hours=3),
    dt.timedelta(hours=30),
    dt.timedelta(days=4),
    dt.timedelta(days=40),
    dt.timedelta(days=200),
    dt.timedelta(days=700),
    dt.timedelta(days=365 * 30),
]
DATES = [NOW - ago for ago in AGO] + [dt.datetime(1969, 12, 31), dt.datetime(1, 1, 1)]
ARRAYS = [
    [NOW - dt.timedelta(days=10), NOW - dt.timedelta(minutes=2)],
    [NOW - dt.timedelta(days=800)],
    [dt.datetime(1969, 1, 1), NOW + dt.timedelta(hours=1)],
    [Timestamp(5, 1), NOW],
    [None, NOW - dt.timedelta(days=5)],
    [[NOW - dt.timedelta(days=6)]],
    [Decimal128("4"), NOW - dt.timedelta(days=7)],
]
VISIBILITY = Visibility.of({"createdBy": USERS[0]}, {"organization": {"$in": ORGS[:2]}})
SORT = [("createdAt", -1)]
SORTS = [SORT, [("createdAt", 1)]]
FILTERS = [
    {},
    {"createdAt": timestamps.between(NOW - dt.timedelta(days=50), None)},
    {"createdAt": timestamps.between(None, NOW - dt.timedelta(hours=2))},
    {"createdAt": timestamps.between(NOW - dt.timedelta(days=900), NOW - dt.timedelta(days=3))},
]


def _requests(values: list, copies: int) -> list[dict]:
    rng = random.Random(7)
    return [
        {
            "createdBy": rng.choice(USERS),
            "organization": rng.choice([None, *ORGS]),
            "createdAt": value,
        }
        for value in values * copies
    ]


def _pages_match(collection, filters: dict, limits=(1, 3, 10), sort=SORT) -> None:
    """Each page is the plain query's."""
    for limit in limits:
        for page in (1, 2, 4):
            expected = reference(collection, VISIBILITY, filters, sort, page, limit)
            got = offset_page(collection, VISIBILITY, filters, sort=sort, page=page, limit=limit)
            assert ([d["_id"] for d in got.results], got.total_results) == expected


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("filters", FILTERS)
def test_offset_pages_are_the_plain_querys(db, filters, sort):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 3))
    _pages_match(db.botrequests, filters, sort=sort)


@pytest.mark.parametrize("sort", SORTS)
def test_a_walk_is_the_plain_query(db, sort):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 3))
    expected = all_ids(db.botrequests, VISIBILITY, {}, sort)
    for limit in (1, 4, 10):
        for _ in range(2):
            assert walk(db.botrequests, VISIBILITY, {}, sort, limit)[0] == expected


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("filters", FILTERS)
def test_odd_values_and_arrays_keep_the_servers_order(wire_db, filters, sort):
    """Every BSON type, arrays of dates far apart and on either side of the dates, on the wire
    server: mongomock cannot sort them. Offset pages in the server's order."""
    ensure_indexes(wire_db)
    wire_db.botrequests.insert_many(_requests(DATES + ARRAYS + ODD_VALUES, 2))
    _pages_match(wire_db.botrequests, filters, limits=(1, 5, 30), sort=sort)


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("filters", FILTERS)
def test_a_walk_over_odd_values_and_arrays_keeps_its_order(wire_db, filters, sort):
    """As above, for a keyset walk: the server's order, the tail last. Without the empty
    string and negative infinity, which the embedded engine's range over a descending index
    leaves out."""
    ensure_indexes(wire_db)
    odd = [value for value in ODD_VALUES if value not in ("", Decimal128("-Infinity"))]
    wire_db.botrequests.insert_many(_requests(DATES + ARRAYS + odd, 2))
    everything = all_ids(wire_db.botrequests, VISIBILITY, filters, sort)
    stored = {d["_id"]: d.get("createdAt") for d in wire_db.botrequests.find()}
    tail = [id_ for id_ in everything if tail_value(stored[id_])]
    tail = sorted(tail, reverse=sort[0][1] == -1)
    expected = [id_ for id_ in everything if id_ not in tail] + tail
    for limit in (1, 5, 30):
        for _ in range(2):
            assert walk(wire_db.botrequests, VISIBILITY, filters, sort, limit)[0] == expected


def test_oldest_first_what_sorts_below_the_dates_comes_first(wire_db):
    """Oldest first on the wire server, a few of each branch's items below the dates: of
    each type below them, arrays whose smallest element is one (or an array), and missing
    values, then the dates."""
    ensure_indexes(wire_db)
    below = ODD_VALUES[: ODD_VALUES.index(dt.datetime(1969, 12, 31))]
    requests = _requests(DATES * 8 + ARRAYS + below, 1)
    for request in requests[::12]:
        del request["createdAt"]
    wire_db.botrequests.insert_many(requests)
    _pages_match(wire_db.botrequests, {}, limits=(5, 20), sort=SORTS[1])
    bounded = {"createdAt": timestamps.between(None, NOW - dt.timedelta(days=3))}
    _pages_match(wire_db.botrequests, bounded, limits=(5, 20), sort=SORTS[1])


@pytest.mark.parametrize(("sort", "end"), [(SORT, "$lt"), (SORTS[1], "$gt")])
def test_arrays_across_a_lists_end_bound_come_before_the_dates_within_it(wire_db, sort, end):
    """A list bounded on the side it ends on (`createdTo` newest first, `createdFrom` oldest
    first), on the wire server: an array with dates on both sides of the bound sorts before
    every date within it."""
    ensure_indexes(wire_db)
    edge = NOW - 30 * DAY
    across = [[edge - 400 * DAY, edge + 2 * DAY], [edge - DAY, NOW + 9 * DAY], [edge + DAY, 5]]
    mine = [{"createdBy": USERS[0], "createdAt": value} for value in across * 2]
    wire_db.botrequests.insert_many(_requests(DATES * 6, 1) + mine)
    _pages_match(wire_db.botrequests, {"createdAt": {end: edge}}, limits=(2, 5, 20), sort=sort)


def test_a_reference_in_an_array_oldest_first_is_read_plainly():
    """A DBRef in an array may be an object, which sorts below the dates, or a DBPointer,
    which sorts above them: Python cannot tell which, so the branch is read plainly. On
    mongomock: the embedded engine refuses to index a DBRef."""
    db = mongomock.MongoClient().references
    ensure_indexes(db)
    db.botrequests.insert_many(_requests([[DBRef("bots", ObjectId()), NOW - DAY], *DATES], 1))
    _pages_match(db.botrequests, {}, limits=(2, 30), sort=SORTS[1])


@pytest.mark.parametrize("sort", SORTS)
def test_dates_past_pythons_years_keep_their_place(sort):
    """Dates before year 1 or after 9999, which the driver reads as DatetimeMS, alone or in
    arrays: in their place among the dates on offset pages and in a keyset walk. On
    mongomock, taught them as dates: the embedded engine refuses to store them."""
    db = mongomock.MongoClient().far_dates
    ensure_indexes(db)
    early, late = DatetimeMS(-(2**50)), DatetimeMS(2**50)
    far = [{"createdBy": USERS[0], "createdAt": v} for v in (early, late, [late], [early, NOW])]
    db.botrequests.insert_many(_requests(DATES, 2) + far)
    _pages_match(db.botrequests, {}, limits=(1, 3, 10), sort=sort)
    everything = all_ids(db.botrequests, VISIBILITY, {}, sort)
    stored = {d["_id"]: d["createdAt"] for d in db.botrequests.find()}
    tail = sorted((i for i in everything if tail_value(stored[i])), reverse=sort[0][1] == -1)
    expected = [i for i in everything if i not in tail] + tail
    for limit in (1, 4):
        for _ in range(2):
            assert walk(db.botrequests, VISIBILITY, {}, sort, limit)[0] == expected


def test_documents_as_ids_are_told_apart_by_mongodbs_equality(wire_db):
    """Another writer's `_id` may be a document, which Python cannot put in a set or a dict
    key: a page of one branch, and one of two fetched by id, find their documents."""
    ensure_indexes(wire_db)
    requests = _requests(DATES + ARRAYS, 2)
    for number, request in enumerate(requests):
        request["_id"] = {"n": number, "kind": "request"}
    wire_db.botrequests.insert_many(requests)
    _pages_match(wire_db.botrequests, {}, limits=(1, 5, 30))
    one_branch = Visibility.of({"organization": ORGS[0]})
    expected = reference(wire_db.botrequests, one_branch, {}, SORT, 1, 5)
    got = offset_page(wire_db.botrequests, one_branch, {}, sort=SORT, page=1, limit=5)
    assert ([d["_id"] for d in got.results], got.total_results) == expected
    everything = all_ids(wire_db.botrequests, VISIBILITY, {}, SORT)
    stored = [(d["_id"], d.get("createdAt")) for d in wire_db.botrequests.find()]
    tail = [id_ for id_, value in stored if tail_value(value) and id_ in everything]
    expected = [id_ for id_ in everything if id_ not in tail]
    ids = walk(wire_db.botrequests, VISIBILITY, {}, SORT, 7)[0]
    assert ids[: len(expected)] == expected
    assert sorted(map(repr, ids[len(expected) :])) == sorted(map(repr, tail))


@pytest.mark.parametrize("sort", SORTS)
def test_lists_bounded_on_both_sides_inclusively_or_in_an_and_keep_the_plain_querys_page(db, sort):
    """Bounds on both sides of the timestamp, an inclusive one, or one beside a creator
    filter that clashes with the caller's own branch (a `$and`)."""
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 2))
    both = {"createdAt": timestamps.between(NOW - 900 * DAY, NOW - HOUR)}
    cases = [
        both,
        {"createdAt": {"$gte": NOW - 900 * DAY}},
        {"createdAt": {"$lte": NOW - DAY}},
        {"createdAt": {"$lt": NOW - DAY}, "createdBy": USERS[0]},
    ]
    for filters in cases:
        got = offset_page(db.botrequests, VISIBILITY, filters, sort=sort, page=1, limit=3)
        expected = reference(db.botrequests, VISIBILITY, filters, sort, 1, 3)
        assert ([d["_id"] for d in got.results], got.total_results) == expected


def test_rows_at_the_lower_bound_itself_are_read():
    """A list from the earliest date on (`$gte`): a keyset walk finds the rows at
    the bound too. On mongomock, which keeps MongoDB's `$gte`: the embedded engine's leaves
    out a value equal to the bound on a descending index (domain/timestamps.py)."""
    db = mongomock.MongoClient().bounds
    ensure_indexes(db)
    earliest = dt.datetime.min
    db.botrequests.insert_many({"createdBy": USERS[0], "createdAt": earliest} for _ in range(3))
    mine = Visibility.of({"createdBy": USERS[0]})
    since = {"createdAt": {"$gte": earliest}}
    assert walk(db.botrequests, mine, since, SORT, 2)[0] == all_ids(
        db.botrequests, mine, since, SORT
    )
