"""The page shapes of repositories/pipelines.py return exactly what one plain query returns.

The reference is the simplest correct query: the visibility as one `$or`, sorted, skipped
and limited by the server. The paged shape (a count and an id query per disjoint branch,
merged here, then the documents by id) must agree with it on every page, including
overlapping branches, ties, missing and mixed-type sort values, and pages past the end.
"""

import datetime as dt
import random

import pytest

from access.policy import Visibility
from repositories import pipelines
from repositories.reads import _negation, disjoint_filters
from tests.support.page_data import (
    BASE,
    BOT_CASES,
    BOT_SORTS,
    COSTS,
    ODD_VALUES,
    ORGS,
    REQUEST_CASES,
    SPECIAL_NUMBERS,
    USERS,
    odd_bots,
    random_bots,
    random_requests,
)
from tests.support.page_reads import offset_page, reference


def _assert_page_as_the_reference(collection, visibility, filters, sort, page, limit):
    """The page's ids and total are the plain query's."""
    expected = reference(collection, visibility, filters, sort, page, limit)
    got = offset_page(collection, visibility, filters, sort=sort, page=page, limit=limit)
    assert ([document["_id"] for document in got.results], got.total_results) == expected


@pytest.mark.parametrize("visibility, filters", BOT_CASES)
@pytest.mark.parametrize("sort", BOT_SORTS)
def test_bot_pages_match_one_plain_query(db, visibility, filters, sort):
    # mongomock cannot sort NaN or Decimal128 (its own answer is wrong); a real server can.
    real_server = not type(db.client).__module__.startswith("mongomock")
    db.bots.insert_many(random_bots(random.Random(1), COSTS + SPECIAL_NUMBERS * real_server))
    for limit in (1, 7, 100):
        for page in (1, 2, 3, 9, 61):
            _assert_page_as_the_reference(db.bots, visibility, filters, sort, page, limit)


@pytest.mark.parametrize("visibility", REQUEST_CASES)
@pytest.mark.parametrize("sort", [[("createdAt", -1)], [("updatedAt", 1)], [("createdAt", 1)]])
def test_request_pages_match_one_plain_query(db, visibility, sort):
    db.botrequests.insert_many(random_requests(random.Random(2)))
    for limit in (1, 4, 10):
        for page in (1, 2, 5, 30):
            _assert_page_as_the_reference(db.botrequests, visibility, {}, sort, page, limit)


def test_dates_merge_in_the_servers_order(db):
    """Dates before 1970 and a millisecond apart, and a missing one, across two branches."""
    dates = [
        dt.datetime(1, 1, 1),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
        dt.datetime(1970, 1, 1),
        dt.datetime(1970, 1, 1, 0, 0, 0, 1000),
        BASE,
        None,
    ]
    rng = random.Random(3)
    db.botrequests.insert_many(
        {"createdBy": rng.choice(USERS), "organization": rng.choice(ORGS), "createdAt": date}
        for date in dates * 3
    )
    visibility = Visibility.of({"createdBy": USERS[0]}, {"organization": {"$in": ORGS}})
    for sort in ([("createdAt", 1)], [("createdAt", -1)]):
        for page in (1, 2, 3):
            _assert_page_as_the_reference(db.botrequests, visibility, {}, sort, page, 5)


def test_past_the_merge_window_the_server_merges_the_branches(db, monkeypatch):
    monkeypatch.setattr(pipelines, "MERGE_WINDOW", 8)
    db.botrequests.insert_many(random_requests(random.Random(4)))
    visibility, sort = REQUEST_CASES[0], [("updatedAt", 1)]
    for page in (1, 2, 3, 6):
        _assert_page_as_the_reference(db.botrequests, visibility, {}, sort, page, 4)


@pytest.mark.parametrize("direction", [1, -1])
@pytest.mark.parametrize("field", ["creditCost", "name"])
def test_odd_values_merge_in_the_servers_order(wire_db, direction, field):
    """Through two branches, values of every BSON type (and documents without the field),
    twice each, page by page: the order is the server's `find().sort()` on the union. The
    Python imitation this replaces raised on a signalling NaN (a 500) and ordered arrays,
    objects and binary otherwise than MongoDB. mongomock cannot sort them."""
    documents = odd_bots(5, field, slugs=len(ODD_VALUES) * 3)
    wire_db.bots.insert_many(documents)
    visibility = Visibility.of({"isPublic": True}, {"organization": {"$in": ORGS[:2]}})
    sort = [(field, direction)]
    for limit in (1, 5, 100):
        for page in range(1, len(documents) // limit + 2):
            _assert_page_as_the_reference(wire_db.bots, visibility, {}, sort, page, limit)


def test_branches_are_made_disjoint_on_their_own_fields():
    mine, theirs = {"createdBy": USERS[0]}, {"organization": {"$in": ORGS}}
    filters = disjoint_filters(Visibility.of(mine, theirs), {"bot": {"$in": []}})
    assert filters == [
        {"createdBy": USERS[0], "bot": {"$in": []}},
        {"organization": {"$in": ORGS}, "createdBy": {"$ne": USERS[0]}, "bot": {"$in": []}},
    ]
    assert _negation({"organization": {"$in": ORGS}}) == {"organization": {"$nin": ORGS}}
    assert _negation({"n": {"$gt": 1}}) == {"n": {"$not": {"$gt": 1}}}
    assert _negation({"a": 1, "b": 2}) == {"$nor": [{"a": 1, "b": 2}]}


def test_a_collision_of_filters_falls_back_to_and():
    visibility = Visibility.of({"isPublic": True})
    [match] = disjoint_filters(visibility, {"isPublic": False})
    assert match == {"$and": [{"isPublic": True}, {"isPublic": False}]}


def test_no_visible_branch_reads_nothing(db):
    page = offset_page(db.bots, Visibility(()), {}, sort=[("name", 1)], page=1, limit=10)
    assert (page.results, page.total_results) == ([], 0)
