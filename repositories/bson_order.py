"""The order of a list over BSON values, and the filters that select what comes after a
position in it: the pure algebra of keyset pages (docs/api.md#keyset-pages), which sends no query.

A list's order is its sort keys with ties broken on `_id` (`sort_order`). A position is the
sort values and `_id` of the last item a page returned. What comes after it in the order of
offset paging, `sort_order`'s lexicographic order, is a sequence of disjoint blocks, each
wholly before the next: first the items equal on every sort key with a later `_id`, then
those equal on all keys but the last with a later last key, and so on up to a later first
key. A key "later" than a value is, again in order, a later value of the same BSON
type bracket (`$gt`/`$lt`, which compare within a bracket only) and then each later bracket
in MongoDB's order of types. Each block is a range of an index that serves the list, so their
`$or` (`walk_after`), sorted and limited by the server, is an index walk of `limit + 1` entries
past the position, whatever its depth. Python only classifies a value into its bracket;
every comparison of order is the server's.

Values that a range on an index cannot place where the sort does are left out of the walk: an
array (the sort uses its smallest or largest element, a range matches any element), a regular
expression (MongoDB refuses one in a range), JavaScript with a scope (a deprecated type) and
binary data (which MongoDB orders by length first, and not every engine's range does: the
embedded one compares the bytes first). A document with one of them in any sort key comes
after the walk, in `_id` order, in the *tail*, and appears exactly once in a walk, at its end.
"""

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal

from bson import (
    Code,
    DatetimeMS,
    Decimal128,
    Int64,
    MaxKey,
    MinKey,
    ObjectId,
    Timestamp,
)

NOT_ARRAY = {"$not": {"$type": "array"}}
# A date as the driver reads it: a DatetimeMS beyond Python's years 1 to 9999.
_DATE = dt.datetime | DatetimeMS

# MongoDB's order of BSON types for sorting, as the brackets a walk visits. Null and a missing
# field are one bracket; MinKey and MaxKey are each one value.
_BRACKETS = (
    (MinKey, {"$eq": MinKey()}),
    (type(None), {"$eq": None}),
    (int | float | Int64 | Decimal128, {"$type": "number"}),
    (str, {"$type": "string"}),
    (dict, {"$type": "object"}),
    (ObjectId, {"$type": "objectId"}),
    (bool, {"$type": "bool"}),
    (_DATE, {"$type": "date"}),
    (Timestamp, {"$type": "timestamp"}),
    (Code, {"$type": "javascript"}),
    (MaxKey, {"$eq": MaxKey()}),
)
_NULL, _NUMBER, _CODE = 1, 2, len(_BRACKETS) - 2
_NO_RANGE = {0, _NULL, len(_BRACKETS) - 1}
_ANY_NUMBER = {"$gte": -math.inf}  # every number but NaN, which sorts below them all
# What pymongo reads of the types that sort from the dates on (a regular expression may be
# read as either; JavaScript with a scope is Code too).


def sort_order(sort: list[tuple[str, int]]) -> dict:
    """The requested order, ties broken on `_id` in the last key's direction.

    Following the last key's direction lets one index {key: 1, _id: 1} serve both directions.
    """
    order = dict(sort)
    order["_id"] = sort[-1][1]
    return order


class Unplaceable(ValueError):
    """A value of a type the walk does not place: a forged cursor's, or the tail's."""


def bracket(value) -> int:
    """The index in `_BRACKETS` of the bracket that holds `value`.

    Checked in this order because, to Python, a bool is an int and JavaScript code a str.
    """
    if isinstance(value, bool):
        return _BRACKETS.index((bool, {"$type": "bool"}))
    if isinstance(value, Code):
        if value.scope is None:
            return _CODE
    else:
        for index, (kind, _) in enumerate(_BRACKETS):
            if isinstance(value, kind):
                return index
    raise Unplaceable(f"a sort value of type {type(value).__name__}")


def _is_nan(value) -> bool:
    if isinstance(value, Decimal128):
        return value.to_decimal().is_nan()
    return isinstance(value, float | Decimal) and math.isnan(value)


def _later_in_bracket(value, direction: int) -> list[dict]:
    """Conditions, in order, for the values of `value`'s bracket after it."""
    index = bracket(value)
    if index in _NO_RANGE:
        return []
    if index == _NUMBER:
        if _is_nan(value):
            return [_ANY_NUMBER] if direction == 1 else []
        if direction == 1:
            return [{"$gt": value}]
        return [{"$lt": value, **_ANY_NUMBER}, {"$eq": math.nan}]
    ranged = {"$gt" if direction == 1 else "$lt": value}
    if index == _CODE:
        # Held to its type: the embedded engine's range over code also takes scoped code.
        ranged |= _BRACKETS[_CODE][1]
    return [ranged]


def _brackets(direction: int, after: int | None = None) -> list[dict]:
    conditions = [condition for _, condition in _BRACKETS]
    if direction == 1:
        return conditions[0 if after is None else after + 1 :]
    return conditions[: len(conditions) if after is None else after][::-1]


def later(value, direction: int) -> list[dict]:
    """Conditions, in order, for every value that sorts after `value` in `direction`."""
    return [*_later_in_bracket(value, direction), *_brackets(direction, bracket(value))]


WALK, TAIL = "walk", "tail"


@dataclass(frozen=True)
class Position:
    """The last item of a page: its sort values (in `order`'s keys, `_id` last)."""

    values: tuple

    @classmethod
    def of(cls, document: dict, order: dict) -> "Position":
        return cls(tuple(document.get(field) for field in order))


@dataclass(frozen=True)
class Resume:
    """Where a keyset page resumes: after `position`, in the walk or in its tail.

    A position too long for a cursor (a long name) travels as its item's id, the `anchor`,
    and is read back from that item (repositories/pipelines.py)."""

    phase: str
    position: Position | None
    anchor: object = None


def _walkable(field: str) -> dict:
    """The field holds a value the walk places: a scalar of one of its brackets."""
    return {"$or": [{field: {**condition, **NOT_ARRAY}} for _, condition in _BRACKETS]}


def walk_blocks(order: dict, position: Position | None) -> list[dict]:
    """The walk's blocks after `position` (from its start when None), in order.

    In each block the key it ranges over is held to one bracket and the keys before it to
    their values; a key after it, free in the block, is held to the walk's brackets, so that
    the tail's documents stay out.
    """
    fields = list(order)
    keys = fields[:-1]
    if position is None:
        return [
            _block(keys, 0, {keys[0]: {**condition, **NOT_ARRAY}})
            for condition in _brackets(order[keys[0]])
        ]
    blocks = []
    for depth in range(len(keys), -1, -1):  # `_id`, the last field, first
        field, value = fields[depth], position.values[depth]
        equal = {fields[i]: {"$eq": position.values[i], **NOT_ARRAY} for i in range(depth)}
        for condition in later(value, order[field]):
            ranged = condition if field == "_id" else {**condition, **NOT_ARRAY}
            blocks.append(_block(keys, depth, {**equal, field: ranged}))
    return blocks


def _block(keys: list[str], depth: int, conditions: dict) -> dict:
    free = [_walkable(field) for field in keys[depth + 1 :]]
    return {"$and": [conditions, *free]} if free else conditions


def walk_after(order: dict, position: Position | None) -> dict:
    """One filter for the whole walk after `position` (from its start when None): its
    blocks as one `$or`, which the server sorts in the walk's order. On MongoDB each block
    is one range of the list's index, read in order and merged."""
    return _any(walk_blocks(order, position))


def tail_after(order: dict, position: Position | None) -> dict:
    """The tail after `position` (its start when None), in `_id` order: the documents with
    a value the walk does not place in any sort key, which is what no block holds."""
    keys = list(order)[:-1]
    tail = {"$nor": [{"$and": [_walkable(field) for field in keys]}]}
    if position is None:
        return tail
    after = [{"_id": condition} for condition in later(position.values[-1], order["_id"])]
    return {"$and": [tail, _any(after)]}


def _any(filters: list[dict]) -> dict:
    """OR of `filters`; none selects nothing (MongoDB refuses an empty `$or`)."""
    if not filters:
        return {"_id": {"$in": []}}
    return filters[0] if len(filters) == 1 else {"$or": filters}
