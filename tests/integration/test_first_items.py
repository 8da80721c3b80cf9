"""First pages through windows of the timestamp (repositories/first_items.py), newest and
oldest first: exactly one plain query's page, offset or keyset, cold and with the worker's
anchor, and bounded reads on the wire.

The dates spread from the future to before 1970, with ties, arrays across windows and, on
the wire server, a value of every BSON type; filters bound the timestamp from either side.
"""

import datetime as dt
import random

import mongomock
import pymongo
import pytest
from bson import DatetimeMS, DBRef, Decimal128, ObjectId, Timestamp

from access import policy
from access.callers import Caller
from access.policy import Visibility
from domain import timestamps
from repositories import first_items
from repositories.indexes import (
    BELOW_DATES,
    above_dates_index,
    below_dates_index,
    ensure_indexes,
)
from repositories.pages import fetch_keyset_page, fetch_page
from tests.support.command_log import CommandLog
from tests.support.page_data import ODD_VALUES, ORGS, USERS
from tests.support.page_reads import all_ids, reference, tail_value, walk

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


@pytest.fixture(autouse=True)
def _no_anchor():
    first_items._anchors.clear()
    yield
    first_items._anchors.clear()


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
    """Each page, read twice (without an anchor, then with the one the first read left), is
    the plain query's."""
    for limit in limits:
        for page in (1, 2, 4):
            expected = reference(collection, VISIBILITY, filters, sort, page, limit)
            for _ in range(2):
                got = fetch_page(collection, VISIBILITY, filters, sort=sort, page=page, limit=limit)
                assert ([d["_id"] for d in got.results], got.total_results) == expected


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("filters", FILTERS)
def test_offset_pages_through_windows_are_the_plain_querys(db, filters, sort):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 3))
    _pages_match(db.botrequests, filters, sort=sort)


@pytest.mark.parametrize("sort", SORTS)
def test_a_walks_first_pages_through_windows_are_the_plain_querys(db, sort):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 3))
    expected = all_ids(db.botrequests, VISIBILITY, {}, sort)
    for limit in (1, 4, 10):
        for _ in range(2):
            assert walk(db.botrequests, VISIBILITY, {}, sort, limit)[0] == expected


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("filters", FILTERS)
def test_odd_values_and_arrays_keep_the_servers_order(wire_db, filters, sort):
    """Every BSON type, arrays across windows and on either side of the dates, on the wire
    server: mongomock cannot sort them. Offset pages in the server's order."""
    ensure_indexes(wire_db)
    wire_db.botrequests.insert_many(_requests(DATES + ARRAYS + ODD_VALUES, 2))
    _pages_match(wire_db.botrequests, filters, limits=(1, 5, 30), sort=sort)


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("filters", FILTERS)
def test_a_walk_over_odd_values_and_arrays_keeps_its_order(wire_db, filters, sort):
    """As above, for a keyset walk: the server's order, the tail last. Without the empty
    string and negative infinity, which the embedded engine's range over a descending index
    leaves out wherever a walk starts (pages after the first, which windows do not read)."""
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


@pytest.mark.parametrize("sort", SORTS)
def test_without_the_partial_indexes_the_types_past_the_dates_are_still_read(wire_db, sort):
    ensure_indexes(wire_db)
    wire_db.botrequests.drop_index(above_dates_index("createdAt"))
    wire_db.botrequests.drop_index(below_dates_index("createdAt"))
    wire_db.botrequests.insert_many(_requests(DATES + ARRAYS + ODD_VALUES, 1))
    _pages_match(wire_db.botrequests, {}, limits=(2, 30), sort=sort)


def test_oldest_first_what_sorts_below_the_dates_comes_first(wire_db):
    """Oldest first on the wire server, a few of each branch's items below the dates: of
    each type below them, arrays whose smallest element is one (or an array), and missing
    values, then the dates. Each page's second read goes through windows from the anchor
    its first read left."""
    ensure_indexes(wire_db)
    below = ODD_VALUES[: ODD_VALUES.index(dt.datetime(1969, 12, 31))]
    requests = _requests(DATES * 8 + ARRAYS + below, 1)
    for request in requests[::12]:
        del request["createdAt"]
    wire_db.botrequests.insert_many(requests)
    fetch_page(wire_db.botrequests, VISIBILITY, {}, sort=SORTS[1], page=1, limit=20)
    assert any(isinstance(value, dt.datetime) for value in first_items._anchors.values())
    _pages_match(wire_db.botrequests, {}, limits=(5, 20), sort=SORTS[1])
    bounded = {"createdAt": timestamps.between(None, NOW - dt.timedelta(days=3))}
    _pages_match(wire_db.botrequests, bounded, limits=(5, 20), sort=SORTS[1])


@pytest.mark.parametrize(("sort", "end"), [(SORT, "$lt"), (SORTS[1], "$gt")])
def test_arrays_across_a_lists_end_bound_come_before_the_dates_within_it(wire_db, sort, end):
    """A list bounded on the side it ends on (`createdTo` newest first, `createdFrom` oldest
    first), on the wire server: an array with dates on both sides of the bound sorts before
    every date within it, and the engine's window, two-sided, misses one with none inside
    it. The second read of each page goes through windows."""
    ensure_indexes(wire_db)
    edge = NOW - 30 * DAY
    across = [[edge - 400 * DAY, edge + 2 * DAY], [edge - DAY, NOW + 9 * DAY], [edge + DAY, 5]]
    mine = [{"createdBy": USERS[0], "createdAt": value} for value in across * 2]
    wire_db.botrequests.insert_many(_requests(DATES * 6, 1) + mine)
    _pages_match(wire_db.botrequests, {"createdAt": {end: edge}}, limits=(2, 5, 20), sort=sort)


def test_another_tenants_null_timestamps_stay_out_of_the_partial_index(wire_db):
    """A writer may leave many timestamps null: the partial index that every tenant's
    oldest-first page reads by `$type` holds none of them (each branch asks for null on its
    own index), only the arrays and rarer types below the dates."""
    ensure_indexes(wire_db)
    nulls = ({"organization": ObjectId(), "createdAt": None} for _ in range(50))
    wire_db.botrequests.insert_many(nulls)
    wire_db.botrequests.insert_many(_requests([None, [None, NOW], 5], 1))
    typed = {"createdAt": {"$type": BELOW_DATES}}
    held = wire_db.botrequests.find(typed).hint(below_dates_index("createdAt"))
    assert sorted(repr(d["createdAt"]) for d in held) == sorted(map(repr, [[None, NOW], 5]))
    _pages_match(wire_db.botrequests, {}, limits=(2,), sort=SORTS[1])


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


def test_each_timestamp_and_direction_has_its_own_anchor(db):
    """A branch sorted by `updatedAt` starts from its own anchor, not from `createdAt`'s."""
    ensure_indexes(db)
    requests = _requests(DATES, 2)
    for number, request in enumerate(requests):
        request["updatedAt"] = NOW - number * DAY
    db.botrequests.insert_many(requests)
    for sort in ([("createdAt", -1)], [("updatedAt", -1)], [("updatedAt", 1)]):
        fetch_page(db.botrequests, VISIBILITY, {}, sort=sort, page=1, limit=2)
    assert {memory[2:] for memory in first_items._anchors} == {
        ("createdAt", -1),
        ("updatedAt", -1),
        ("updatedAt", 1),
    }


@pytest.mark.parametrize("sort", SORTS)
def test_the_anchor_is_a_hint_that_changes_no_answer(db, sort):
    """Requests written past the anchor on the list's side, or the anchor's own request
    deleted, after a first page left it: the next pages are still the plain query's."""
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 2))
    _pages_match(db.botrequests, {}, limits=(3,), sort=sort)
    fetch_page(db.botrequests, VISIBILITY, {}, sort=sort, page=1, limit=3)  # page 4's left counts
    anchors = first_items._anchors.values()
    anchor = next(value for value in anchors if isinstance(value, dt.datetime))
    db.botrequests.delete_many({"createdAt": anchor})
    beyond = dt.timedelta(minutes=5) * -sort[0][1]
    db.botrequests.insert_many(_requests([anchor + beyond, anchor], 2))
    _pages_match(db.botrequests, {}, limits=(3,), sort=sort)


@pytest.mark.parametrize("sort", SORTS)
def test_a_branch_the_dates_ran_out_on_is_read_plainly_until_it_fills(db, sort):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES[:2], 1))
    _pages_match(db.botrequests, {}, limits=(10,), sort=sort)
    assert set(first_items._anchors.values()) <= {0, 1, 2}
    db.botrequests.insert_many(_requests(DATES, 3))
    fetch_page(db.botrequests, VISIBILITY, {}, sort=sort, page=1, limit=3)
    assert any(isinstance(value, dt.datetime) for value in first_items._anchors.values())
    _pages_match(db.botrequests, {}, limits=(10,), sort=sort)


def test_a_heavy_branchs_first_page_reads_windows_not_its_history(wire_uri, wire_db):
    """A year of history an hour apart, and a member of one organization: the first page's
    key queries are each bounded on `createdAt` and return about a page, cold or warm."""
    ensure_indexes(wire_db)
    organization = ObjectId()
    wire_db.botrequests.insert_many(
        {"organization": organization, "createdBy": USERS[0], "createdAt": NOW - h * HOUR}
        for h in range(24 * 365)
    )
    log = CommandLog()
    client = pymongo.MongoClient(wire_uri, event_listeners=[log])
    collection = client[wire_db.name].botrequests
    visibility = Visibility.of({"organization": organization})
    for read in ("cold", "warm"):
        log.take()
        page = fetch_page(collection, visibility, {}, sort=SORT, page=1, limit=20, counted=False)
        assert [d["createdAt"] for d in page.results] == [NOW - h * HOUR for h in range(20)]
        keys = [c for c in log.take() if c.get("find") == "botrequests" and "sort" in c]
        dated = [c for c in keys if "$type" not in c["filter"]["createdAt"]]
        assert all("$gt" in c["filter"]["createdAt"] for c in dated[:-1]), read
        oldest = min(c["filter"]["createdAt"]["$gt"] for c in dated)
        assert NOW - oldest <= {"cold": 4 * DAY, "warm": DAY}[read], (read, keys)
        assert len(keys) <= {"cold": 7, "warm": 3}[read], (read, keys)
    client.close()


def test_a_heavy_branchs_first_page_oldest_first_reads_windows_once_it_has_an_anchor(
    wire_uri, wire_db
):
    """Oldest first, nothing bounds the first read (the plain query); the next reads a
    window up to the anchor it left, beside the two queries of what sorts below the dates."""
    ensure_indexes(wire_db)
    organization, start = ObjectId(), NOW - 24 * 365 * HOUR
    wire_db.botrequests.insert_many(
        {"organization": organization, "createdAt": start + h * HOUR} for h in range(24 * 365)
    )
    log = CommandLog()
    client = pymongo.MongoClient(wire_uri, event_listeners=[log])
    collection = client[wire_db.name].botrequests
    visibility = Visibility.of({"organization": organization})
    for read in ("cold", "warm", "warm"):
        log.take()
        page = fetch_page(collection, visibility, {}, sort=SORTS[1], page=1, limit=20,
                          counted=False)  # fmt: skip
        assert [d["createdAt"] for d in page.results] == [start + h * HOUR for h in range(20)]
        keys = [c["filter"] for c in log.take() if c.get("find") == "botrequests" and "sort" in c]
        dated = [f["createdAt"] for f in keys if "$lt" in f.get("createdAt", {})]
        if read == "warm":
            assert len(keys) == 3 and dated == [{"$lt": start + 19 * HOUR + MS}], keys
    client.close()


def test_a_members_first_page_reads_each_organization_by_equality(wire_uri, wire_db):
    """A member of two organizations: its own requests and each organization's are read by
    an equality and a one-sided range on `createdAt`, which the embedded engine bounds (a
    `$in`, or the `$ne` that keeps branches disjoint, would have it decode every request of
    the branch); its own requests in its organizations are on the page once."""
    ensure_indexes(wire_db)
    member, other = USERS[0], USERS[1]
    wire_db.botrequests.insert_many(
        {
            "organization": [ORGS[0], ORGS[1], None][h % 3],
            "createdBy": [member, other][h % 2],
            "createdAt": NOW - h * HOUR,
        }
        for h in range(24 * 60)
    )
    log = CommandLog()
    client = pymongo.MongoClient(wire_uri, event_listeners=[log])
    collection = client[wire_db.name].botrequests
    visibility = policy.bot_requests(Caller.user(member, ORGS[:2]))
    expected = [reference(wire_db.botrequests, visibility, {}, SORT, page, 10) for page in (1, 3)]
    for read in ("cold", "warm"):
        log.take()
        got = [
            fetch_page(collection, visibility, {}, sort=SORT, page=page, limit=10)
            for page in (1, 3)
        ]
        assert [([d["_id"] for d in p.results], p.total_results) for p in got] == expected
        finds = [c["filter"] for c in log.take() if c.get("find") == "botrequests"]
        keys = [f for f in finds if "_id" not in f]  # not the page's documents by id
        dated = [f for f in keys if "$type" not in f["createdAt"]]
        assert {len(f) for f in dated} == {2}, (read, dated)
        assert all(
            not isinstance(f[field], dict) for f in dated for field in f if field != "createdAt"
        )
        assert all(list(f["createdAt"]) in (["$gt"], ["$lt"]) for f in dated), dated
    client.close()


def test_documents_as_ids_are_told_apart_by_mongodbs_equality(wire_db):
    """Another writer's `_id` may be a document, which Python cannot put in a set or a dict
    key: arrays read again in later windows are still dropped by it, and a page of one
    branch, fetched by id, finds its documents."""
    ensure_indexes(wire_db)
    requests = _requests(DATES + ARRAYS, 2)
    for number, request in enumerate(requests):
        request["_id"] = {"n": number, "kind": "request"}
    wire_db.botrequests.insert_many(requests)
    _pages_match(wire_db.botrequests, {}, limits=(1, 5, 30))
    one_branch = Visibility.of({"organization": ORGS[0]})
    expected = reference(wire_db.botrequests, one_branch, {}, SORT, 1, 5)
    got = fetch_page(wire_db.botrequests, one_branch, {}, sort=SORT, page=1, limit=5)
    assert ([d["_id"] for d in got.results], got.total_results) == expected
    everything = all_ids(wire_db.botrequests, VISIBILITY, {}, SORT)
    stored = [(d["_id"], d.get("createdAt")) for d in wire_db.botrequests.find()]
    tail = [id_ for id_, value in stored if tail_value(value) and id_ in everything]
    expected = [id_ for id_ in everything if id_ not in tail]
    ids = walk(wire_db.botrequests, VISIBILITY, {}, SORT, 7)[0]
    assert ids[: len(expected)] == expected
    assert sorted(map(repr, ids[len(expected) :])) == sorted(map(repr, tail))


def test_lists_that_windows_do_not_read_leave_no_anchor(db):
    """Bots, which a worker serves from the catalogue cache."""
    ensure_indexes(db)
    db.bots.insert_many([{"name": name, "slug": name, "isPublic": True} for name in "abc"])
    public = Visibility.of({"isPublic": True})
    fetch_keyset_page(db.bots, public, {}, sort=[("name", 1)], limit=2, resume=None, counted=False)
    fetch_page(db.bots, public, {}, sort=[("createdAt", -1)], page=1, limit=2)
    assert not first_items._anchors


@pytest.mark.parametrize("sort", SORTS)
def test_lists_bounded_on_both_sides_inclusively_or_in_an_and_are_read_plainly(db, sort):
    """Bounds on both sides of the timestamp, an inclusive one (the service's from
    0001-01-01), or one a `$and` holds (a creator filter that clashes with the caller's own
    branch), are read by the plain query: windows would step past them, or, on the embedded
    engine, find arrays its count misses, or rows at the bound that its `$gte` leaves out."""
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 2))
    both = {"createdAt": timestamps.between(NOW - 900 * DAY, NOW - HOUR)}
    cases = [
        (both, None),
        ({"createdAt": {"$gte": NOW - 900 * DAY}}, None),
        ({"createdAt": {"$lte": NOW - DAY}}, None),
        ({"createdAt": {"$lt": NOW - DAY}}, {"createdBy": USERS[0]}),
    ]
    for filters, narrow in cases:
        for _ in range(2):
            got = fetch_page(db.botrequests, VISIBILITY, filters, sort=sort, page=1, limit=3,
                             narrow=narrow)  # fmt: skip
            expected = reference(db.botrequests, VISIBILITY, {**filters, **(narrow or {})}, sort,
                                 1, 3)  # fmt: skip
            assert ([d["_id"] for d in got.results], got.total_results) == expected
        assert not [memory for memory in first_items._anchors if "$and" in memory[1]]
        assert narrow or not first_items._anchors


def test_rows_at_the_lower_bound_itself_are_read():
    """A list from the earliest date on (`$gte`), read twice: a keyset walk finds the rows at
    the bound too. On mongomock, which keeps MongoDB's `$gte`: the embedded engine's leaves
    out a value equal to the bound on a descending index (domain/timestamps.py)."""
    db = mongomock.MongoClient().bounds
    ensure_indexes(db)
    earliest = dt.datetime.min
    db.botrequests.insert_many({"createdBy": USERS[0], "createdAt": earliest} for _ in range(3))
    mine = Visibility.of({"createdBy": USERS[0]})
    since = {"createdAt": {"$gte": earliest}}
    fetch_page(db.botrequests, mine, since, sort=SORT, page=1, limit=2)
    assert walk(db.botrequests, mine, since, SORT, 2)[0] == all_ids(
        db.botrequests, mine, since, SORT
    )


@pytest.mark.parametrize(
    ("organizations", "want", "reads"),
    [
        (ORGS[:2], 10, 3),  # the member's own, and one per organization
        (ORGS[:2], 6_000, 2),  # 2 x 6,000 ids would pass MERGE_WINDOW
        ([ObjectId() for _ in range(first_items.SPLIT + 1)], 10, 2),
        (["acme", "globex"], 10, 2),  # not references
    ],
)
def test_a_branchs_in_is_split_only_into_a_few_reads_of_references(db, organizations, want,
                                                                    reads):  # fmt: skip
    visibility = Visibility.of({"createdBy": USERS[0]}, {"organization": {"$in": organizations}})
    order = {"createdAt": -1, "_id": -1}
    got = first_items.first_reads(db.botrequests, visibility, {}, None, order, want)
    assert len(got) == reads
    assert all("$ne" not in str(match) for match in got)
    oldest_first = {"createdAt": 1, "_id": 1}
    got = first_items.first_reads(db.botrequests, visibility, {}, None, oldest_first, want)
    assert len(got) == reads
