"""The order algebra of keyset pages (repositories/bson_order.py) as tables, without a server:
which bracket a value is in, what comes after it in each direction, the blocks of a walk
with their ties, and the tail. tests/integration/test_keyset_pages.py runs them on servers."""

import datetime as dt
import math

import pytest
from bson import (
    Binary,
    Code,
    DatetimeMS,
    Decimal128,
    Int64,
    MaxKey,
    MinKey,
    ObjectId,
    Regex,
    Timestamp,
)

from repositories.bson_order import (
    NOT_ARRAY,
    Position,
    Unplaceable,
    bracket,
    later,
    tail_after,
    walk_after,
    walk_blocks,
)

OID = ObjectId("600000000000000000000001")
WHEN = dt.datetime(2026, 1, 2)

# MongoDB's order of types, one bracket a row, with the condition that selects the bracket.
BRACKETS = [
    (MinKey(), {"$eq": MinKey()}),
    (None, {"$eq": None}),
    (1, {"$type": "number"}),
    ("b", {"$type": "string"}),
    ({"a": 1}, {"$type": "object"}),
    (OID, {"$type": "objectId"}),
    (True, {"$type": "bool"}),
    (WHEN, {"$type": "date"}),
    (Timestamp(1, 1), {"$type": "timestamp"}),
    (Code("f()"), {"$type": "javascript"}),
    (MaxKey(), {"$eq": MaxKey()}),
]
UP = [condition for _, condition in BRACKETS]


@pytest.mark.parametrize(
    "value, expected",
    [(value, index) for index, (value, _) in enumerate(BRACKETS)]
    + [(1.5, 2), (Int64(7), 2), (Decimal128("2.5"), 2), (math.nan, 2), (False, 6)]
    + [(DatetimeMS(2**50), 7), (DatetimeMS(-(2**50)), 7)],  # dates past Python's years
)
def test_each_value_is_in_the_bracket_of_its_type(value, expected):
    assert bracket(value) == expected


@pytest.mark.parametrize(
    "value",
    [[1, 2], Regex("^a"), Binary(b"\x00"), Code("f()", {"x": 1}), b"bytes"],
    ids=["array", "regex", "binary", "scoped code", "bytes"],
)
def test_a_value_the_walk_cannot_place_is_refused(value):
    with pytest.raises(Unplaceable):
        bracket(value)


@pytest.mark.parametrize(
    "value, direction, expected",
    [
        # Ascending: the rest of the value's own bracket, then each later bracket.
        (MinKey(), 1, UP[1:]),
        (None, 1, UP[2:]),
        (5, 1, [{"$gt": 5}, *UP[3:]]),
        ("b", 1, [{"$gt": "b"}, *UP[4:]]),
        (OID, 1, [{"$gt": OID}, *UP[6:]]),
        (WHEN, 1, [{"$gt": WHEN}, *UP[8:]]),
        (Code("f()"), 1, [{"$gt": Code("f()"), "$type": "javascript"}, UP[10]]),
        (MaxKey(), 1, []),
        # Descending: numbers below, then NaN, which sorts below every number.
        (MaxKey(), -1, UP[:10][::-1]),
        ("b", -1, [{"$lt": "b"}, *UP[:3][::-1]]),
        (5, -1, [{"$lt": 5, "$gte": -math.inf}, {"$eq": math.nan}, UP[1], UP[0]]),
        (None, -1, [UP[0]]),
        (MinKey(), -1, []),
    ],
)
def test_what_comes_after_a_value_in_each_direction(value, direction, expected):
    assert later(value, direction) == expected


def test_after_nan_come_every_number_ascending_and_nothing_of_its_bracket_descending():
    assert later(math.nan, 1) == [{"$gte": -math.inf}, *UP[3:]]
    assert later(Decimal128("NaN"), -1) == [UP[1], UP[0]]


ORDER = {"name": 1, "_id": 1}
NAMED = {"name": {"$eq": "b", **NOT_ARRAY}}


def test_a_walk_from_its_start_is_each_bracket_of_the_first_key_in_order():
    blocks = walk_blocks({"name": -1, "_id": 1}, None)
    assert blocks == [{"name": {**condition, **NOT_ARRAY}} for condition in UP[::-1]]


AFTER_OID = later(OID, 1)  # a later id, then ids of each later type: `_id` may be any


def test_after_a_position_come_its_ties_by_id_then_later_names():
    blocks = walk_blocks(ORDER, Position(("b", OID)))
    assert AFTER_OID[0] == {"$gt": OID}
    assert blocks == [
        *({**NAMED, "_id": condition} for condition in AFTER_OID),
        *({"name": {**condition, **NOT_ARRAY}} for condition in later("b", 1)),
    ]


def test_a_key_free_in_a_block_is_held_to_the_walks_brackets():
    order = {"name": 1, "cost": -1, "_id": 1}
    blocks = walk_blocks(order, Position(("b", 3, OID)))
    walkable = {"$or": [{"cost": {**condition, **NOT_ARRAY}} for condition in UP]}
    later_name = {"$and": [{"name": {"$gt": "b", **NOT_ARRAY}}, walkable]}
    ties = len(AFTER_OID)
    assert blocks[0] == {**NAMED, "cost": {"$eq": 3, **NOT_ARRAY}, "_id": {"$gt": OID}}
    assert blocks[ties] == {**NAMED, "cost": {"$lt": 3, "$gte": -math.inf, **NOT_ARRAY}}
    assert blocks[ties + 1] == {**NAMED, "cost": {"$eq": math.nan, **NOT_ARRAY}}
    assert blocks[ties + len(later(3, -1))] == later_name


def test_the_walk_after_a_position_is_one_filter_of_its_blocks():
    position = Position(("b", OID))
    assert walk_after(ORDER, position) == {"$or": walk_blocks(ORDER, position)}
    last = Position((MaxKey(), MaxKey()))  # a forged cursor's: nothing comes after it
    assert walk_after(ORDER, last) == {"_id": {"$in": []}}
    assert tail_after(ORDER, last) == {"$and": [tail_after(ORDER, None), {"_id": {"$in": []}}]}


def test_the_tail_is_what_no_block_places_in_any_key_after_the_position():
    walkable = {"$or": [{"name": {**condition, **NOT_ARRAY}} for condition in UP]}
    assert tail_after(ORDER, None) == {"$nor": [{"$and": [walkable]}]}
    assert tail_after(ORDER, Position(("b", OID))) == {
        "$and": [tail_after(ORDER, None), {"$or": [{"_id": c} for c in AFTER_OID]}]
    }
