"""Keyset walks (repositories/pipelines.py) against offset pages and the server's sort.

A walk follows each page's resume position from the first page to the end. It must give the
ids of one plain query, the visibility as one `$or` sorted by the server, in the same order,
for every sort and limit and through several branches: values of every BSON type included,
except the tail's (arrays, regular expressions, scoped JavaScript and binary data), which come
once each after the rest, in `_id` order.
"""

import random

import pytest

from access.policy import Visibility
from repositories.bson_order import sort_order
from tests.support.page_data import (
    BOT_CASES,
    BOT_SORTS,
    COSTS,
    ORGS,
    REQUEST_CASES,
    odd_bots,
    random_bots,
    random_requests,
)
from tests.support.page_reads import all_ids, keyset_page, tail_value, walk


@pytest.mark.parametrize("visibility, filters", BOT_CASES)
@pytest.mark.parametrize("sort", BOT_SORTS)
def test_bot_walks_match_one_plain_query(db, visibility, filters, sort):
    db.bots.insert_many(random_bots(random.Random(1), COSTS))
    expected = all_ids(db.bots, visibility, filters, sort)
    for limit in (1, 7, 100):
        assert walk(db.bots, visibility, filters, sort, limit)[0] == expected


@pytest.mark.parametrize("visibility", REQUEST_CASES)
@pytest.mark.parametrize("sort", [[("createdAt", -1)], [("updatedAt", 1)]])
def test_request_walks_match_one_plain_query(db, visibility, sort):
    db.botrequests.insert_many(random_requests(random.Random(2)))
    expected = all_ids(db.botrequests, visibility, {}, sort)
    for limit in (1, 4, 10):
        ids, totals = walk(db.botrequests, visibility, {}, sort, limit, counted=True)
        assert ids == expected
        assert set(totals) == {len(expected)}


@pytest.mark.parametrize("direction", [1, -1])
@pytest.mark.parametrize("field", ["creditCost", "name"])
def test_odd_values_walk_in_the_servers_order_and_the_tail_comes_last(wire_db, direction, field):
    """Values of every BSON type (and missing ones), twice each, through two branches, with
    a second sort key: the server's order, timestamps and JavaScript included, but for
    arrays, regular expressions, scoped JavaScript and binary data, which come last in `_id`
    order. mongomock cannot sort them."""
    wire_db.bots.insert_many(odd_bots(6, field, slugs=5))
    visibility = Visibility.of({"isPublic": True}, {"organization": {"$in": ORGS[:2]}})
    for sort in ([(field, direction)], [(field, direction), ("slug", -direction)]):
        order = sort_order(sort)
        everything = all_ids(wire_db.bots, visibility, {}, sort)
        tail = {
            d["_id"]
            for d in wire_db.bots.find({"_id": {"$in": everything}})
            if tail_value(d.get(field))
        }
        by_id = sorted(tail, reverse=order["_id"] == -1)
        expected = [id_ for id_ in everything if id_ not in tail] + by_id
        for limit in (1, 3, 100):
            assert walk(wire_db.bots, visibility, {}, sort, limit)[0] == expected, (order, limit)


def test_a_walk_past_changes_sees_each_unchanged_document_once(db):
    """Documents inserted and deleted between pages do not make an unchanged one repeat
    or vanish."""
    db.botrequests.insert_many(random_requests(random.Random(7)))
    visibility, sort = REQUEST_CASES[0], [("createdAt", -1)]
    unchanged = set(all_ids(db.botrequests, visibility, {}, sort))
    seen, resume, rng = [], None, random.Random(8)
    while True:
        page = keyset_page(
            db.botrequests, visibility, {}, sort=sort, limit=3,
            resume=resume, counted=False,
        )  # fmt: skip
        seen += [document["_id"] for document in page.results]
        if page.next is None:
            break
        resume = page.next
        victim = rng.choice(sorted(unchanged))
        db.botrequests.delete_one({"_id": victim})
        unchanged.discard(victim)
        db.botrequests.insert_many(random_requests(rng)[:2])
    kept = [id_ for id_ in seen if id_ in unchanged]
    assert sorted(kept) == sorted(unchanged) and len(set(kept)) == len(kept)


def test_ties_are_walked_in_order_even_after_the_positions_item_is_gone(db):
    """Many items on one sort value: a walk through the ties, and one whose position's item
    is deleted between pages, keep the order."""
    rng = random.Random(9)
    requests = random_requests(rng)
    for request in requests:
        request["createdAt"] = requests[rng.randrange(3)]["createdAt"]
    db.botrequests.insert_many(requests)
    visibility, sort = REQUEST_CASES[1], [("createdAt", -1)]
    expected = all_ids(db.botrequests, visibility, {}, sort)
    assert walk(db.botrequests, visibility, {}, sort, 3)[0] == expected
    first = keyset_page(
        db.botrequests, visibility, {}, sort=sort, limit=3,
        resume=None, counted=False,
    )  # fmt: skip
    db.botrequests.delete_one({"_id": first.results[-1]["_id"]})
    rest = keyset_page(
        db.botrequests, visibility, {}, sort=sort, limit=100,
        resume=first.next, counted=False,
    )  # fmt: skip
    assert [document["_id"] for document in rest.results] == expected[3:]
