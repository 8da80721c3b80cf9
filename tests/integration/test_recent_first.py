"""First pages newest first through windows of the timestamp (repositories/recent_first.py):
exactly one plain query's page, offset or keyset, cold and with the worker's anchor, and
bounded reads on the wire.

The dates spread from the future to before 1970, with ties, arrays across windows and, on
the wire server, a value of every BSON type; filters bound the timestamp from either side.
"""

import datetime as dt
import random

import mongomock
import pymongo
import pytest
from bson import Decimal128, ObjectId, Timestamp

from access import policy
from access.callers import Caller
from access.policy import Visibility
from domain import timestamps
from repositories import recent_first
from repositories.indexes import above_dates_index, ensure_indexes
from repositories.pages import fetch_keyset_page, fetch_page
from tests.support.command_log import CommandLog
from tests.support.page_data import ODD_VALUES, ORGS, USERS
from tests.support.page_reads import all_ids, reference, tail_value, walk

HOUR, DAY = dt.timedelta(hours=1), dt.timedelta(days=1)
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
]
VISIBILITY = Visibility.of({"createdBy": USERS[0]}, {"organization": {"$in": ORGS[:2]}})
SORT = [("createdAt", -1)]
FILTERS = [
    {},
    {"createdAt": timestamps.between(NOW - dt.timedelta(days=50), None)},
    {"createdAt": timestamps.between(None, NOW - dt.timedelta(hours=2))},
    {"createdAt": timestamps.between(NOW - dt.timedelta(days=900), NOW - dt.timedelta(days=3))},
]


@pytest.fixture(autouse=True)
def _no_anchor():
    recent_first._anchors.clear()
    yield
    recent_first._anchors.clear()


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


def _pages_match(collection, filters: dict, limits=(1, 3, 10)) -> None:
    """Each page, read twice (without an anchor, then with the one the first read left), is
    the plain query's."""
    for limit in limits:
        for page in (1, 2, 4):
            expected = reference(collection, VISIBILITY, filters, SORT, page, limit)
            for _ in range(2):
                got = fetch_page(collection, VISIBILITY, filters, sort=SORT, page=page, limit=limit)
                assert ([d["_id"] for d in got.results], got.total_results) == expected


@pytest.mark.parametrize("filters", FILTERS)
def test_offset_pages_through_windows_are_the_plain_querys(db, filters):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 3))
    _pages_match(db.botrequests, filters)


def test_a_walks_first_pages_through_windows_are_the_plain_querys(db):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 3))
    expected = all_ids(db.botrequests, VISIBILITY, {}, SORT)
    for limit in (1, 4, 10):
        for _ in range(2):
            assert walk(db.botrequests, VISIBILITY, {}, SORT, limit)[0] == expected


@pytest.mark.parametrize("filters", FILTERS)
def test_odd_values_and_arrays_keep_the_servers_order(wire_db, filters):
    """Every BSON type, arrays across windows and above the dates, on the wire server:
    mongomock cannot sort them. Offset pages in the server's order; a keyset walk in its
    own, the tail last."""
    ensure_indexes(wire_db)
    wire_db.botrequests.insert_many(_requests(DATES + ARRAYS + ODD_VALUES, 2))
    _pages_match(wire_db.botrequests, filters, limits=(1, 5, 30))


@pytest.mark.parametrize("filters", FILTERS)
def test_a_walk_over_odd_values_and_arrays_keeps_its_order(wire_db, filters):
    """As above, for a keyset walk: the server's order, the tail last. Without the empty
    string and negative infinity, which the embedded engine's range over a descending index
    leaves out wherever a walk starts (pages after the first, which windows do not read)."""
    ensure_indexes(wire_db)
    odd = [value for value in ODD_VALUES if value not in ("", Decimal128("-Infinity"))]
    wire_db.botrequests.insert_many(_requests(DATES + ARRAYS + odd, 2))
    everything = all_ids(wire_db.botrequests, VISIBILITY, filters, SORT)
    stored = {d["_id"]: d.get("createdAt") for d in wire_db.botrequests.find()}
    tail = [id_ for id_ in everything if tail_value(stored[id_])]
    expected = [id_ for id_ in everything if id_ not in tail] + sorted(tail, reverse=True)
    for limit in (1, 5, 30):
        for _ in range(2):
            assert walk(wire_db.botrequests, VISIBILITY, filters, SORT, limit)[0] == expected


def test_without_the_partial_index_the_types_above_dates_are_still_read(wire_db):
    ensure_indexes(wire_db)
    wire_db.botrequests.drop_index(above_dates_index("createdAt"))
    wire_db.botrequests.insert_many(_requests(DATES + ARRAYS + ODD_VALUES, 1))
    _pages_match(wire_db.botrequests, {}, limits=(2, 30))


def test_the_anchor_is_a_hint_that_changes_no_answer(db):
    """Requests written above the anchor, or the anchor's own request deleted, after a
    first page left it: the next pages are still the plain query's."""
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 2))
    _pages_match(db.botrequests, {}, limits=(3,))
    anchor = next(iter(recent_first._anchors.values()))
    db.botrequests.delete_many({"createdAt": anchor})
    db.botrequests.insert_many(_requests([NOW + dt.timedelta(minutes=5), anchor], 2))
    _pages_match(db.botrequests, {}, limits=(3,))


def test_a_branch_the_dates_ran_out_on_is_read_plainly_until_it_fills(db):
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES[:2], 1))
    _pages_match(db.botrequests, {}, limits=(10,))
    assert set(recent_first._anchors.values()) <= {0, 1, 2}
    db.botrequests.insert_many(_requests(DATES, 3))
    fetch_page(db.botrequests, VISIBILITY, {}, sort=SORT, page=1, limit=3)
    assert any(isinstance(value, dt.datetime) for value in recent_first._anchors.values())
    _pages_match(db.botrequests, {}, limits=(10,))


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
    """Bots (served from the catalogue cache), and requests oldest first."""
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 1))
    db.bots.insert_many([{"name": name, "slug": name, "isPublic": True} for name in "abc"])
    public = Visibility.of({"isPublic": True})
    fetch_keyset_page(db.bots, public, {}, sort=[("name", 1)], limit=2, resume=None, counted=False)
    fetch_page(db.botrequests, VISIBILITY, {}, sort=[("createdAt", 1)], page=1, limit=2)
    fetch_keyset_page(db.botrequests, VISIBILITY, {}, sort=[("createdAt", 1)], limit=2,
                      resume=None, counted=False)  # fmt: skip
    assert not recent_first._anchors


def test_lists_bounded_above_or_held_in_an_and_are_read_plainly(db):
    """A bound above the timestamp, or one a `$and` holds (a creator filter that clashes
    with the caller's own branch), is read by the plain query: windows would step past it."""
    ensure_indexes(db)
    db.botrequests.insert_many(_requests(DATES, 2))
    below = {"createdAt": {"$lt": NOW - DAY}}
    for narrow in (None, {"createdBy": USERS[0]}):
        got = fetch_page(db.botrequests, VISIBILITY, below, sort=SORT, page=1, limit=3,
                         narrow=narrow)  # fmt: skip
        expected = reference(db.botrequests, VISIBILITY, {**below, **(narrow or {})}, SORT, 1, 3)
        assert ([d["_id"] for d in got.results], got.total_results) == expected
    assert not recent_first._anchors


def test_rows_at_the_lower_bound_itself_are_read():
    """A list from the earliest date on (`$gte`), its anchor at that date: the last segment
    is the list's own bound, so a keyset walk finds the rows at it too. On mongomock, which
    keeps MongoDB's `$gte`: the embedded engine's leaves out a value equal to the bound on a
    descending index, in the plain query too (domain/timestamps.py)."""
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
        ([ObjectId() for _ in range(recent_first.SPLIT + 1)], 10, 2),
        (["acme", "globex"], 10, 2),  # not references
    ],
)
def test_a_branchs_in_is_split_only_into_a_few_reads_of_references(db, organizations, want,
                                                                    reads):  # fmt: skip
    visibility = Visibility.of({"createdBy": USERS[0]}, {"organization": {"$in": organizations}})
    order = {"createdAt": -1, "_id": -1}
    got = recent_first.first_reads(db.botrequests, visibility, {}, None, order, want)
    assert len(got) == reads
    assert all("$ne" not in str(match) for match in got)
    oldest_first = {"createdAt": 1, "_id": 1}
    assert (
        len(recent_first.first_reads(db.botrequests, visibility, {}, None, oldest_first, 10)) == 2
    )
