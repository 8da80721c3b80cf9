"""Keyset pages (contract 7.4): the filters that select what comes after a position.

A position is the sort values and `_id` of the last item a page returned. What comes after it
in the order of offset paging, `sort_order`'s lexicographic order, is a sequence of disjoint
blocks, each wholly before the next: first the items equal on every sort key with a later
`_id`, then those equal on all keys but the last with a later last key, and so on up to a
later first key. A key "later" than a value is, again in order, a later value of the same BSON
type bracket (`$gt`/`$lt`, which compare within a bracket only) and then each later bracket
in MongoDB's order of types. So each block is one plain indexed query, sorted and limited by
the server, and a page reads blocks in order until it has `limit + 1` items: at most
`limit + 1` index entries past the position, whatever its depth. Python only classifies a
value into its bracket; every comparison is the server's.

A value that a range on an index cannot place where the sort does, an array (the sort uses
its smallest or largest element, a range matches any element), is left out of the walk: a
document with an array in a sort key comes after the walk, in `_id` order, in the *tail*, and
appears exactly once in a walk, at its end. The deprecated types that pymongo never writes
(symbol, DBPointer, undefined) are not placed.
"""

import datetime as dt
import math
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

NOT_ARRAY = {"$not": {"$type": "array"}}

# MongoDB's order of BSON types for sorting, as the brackets a walk visits (arrays are the
# tail's). Null and a missing field are one bracket.
_BRACKETS = (
    (MinKey, {"$type": "minKey"}),
    (type(None), {"$eq": None}),
    (int | float | Int64 | Decimal128, {"$type": "number"}),
    (str, {"$type": "string"}),
    (dict, {"$type": "object"}),
    (bytes | Binary | uuid.UUID, {"$type": "binData"}),
    (ObjectId, {"$type": "objectId"}),
    (bool, {"$type": "bool"}),
    (dt.datetime, {"$type": "date"}),
    (Timestamp, {"$type": "timestamp"}),
    (Regex | re.Pattern, {"$type": "regex"}),
    (Code, {"$type": "javascript"}),
    (MaxKey, {"$type": "maxKey"}),
)
_NULL, _NUMBER = 1, 2
_NO_RANGE = {0, _NULL, len(_BRACKETS) - 1}
_ANY_NUMBER = {"$gte": -math.inf}  # every number but NaN, which sorts below them all
# Checked before the others: bool is an int, Code a str, to Python.
_FIRST = (bool, Code)


class Unplaceable(ValueError):
    """A position holds a value of a type the walk does not place (a forged cursor's)."""


def bracket(value) -> int:
    """The index in `_BRACKETS` of the bracket that holds `value`."""
    kinds = [kind for kind, _ in _BRACKETS]
    for first in _FIRST:
        if isinstance(value, first):
            return next(i for i, kind in enumerate(kinds) if kind is first)
    for index, kind in enumerate(kinds):
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
    return [{"$gt" if direction == 1 else "$lt": value}]


def _brackets(direction: int, after: int | None = None) -> list[dict]:
    conditions = [condition for _, condition in _BRACKETS]
    if direction == 1:
        return conditions[0 if after is None else after + 1 :]
    return conditions[: len(conditions) if after is None else after][::-1]


def later(value, direction: int) -> list[dict]:
    """Conditions, in order, for every value that sorts after `value` in `direction`."""
    return [*_later_in_bracket(value, direction), *_brackets(direction, bracket(value))]


@dataclass(frozen=True)
class Position:
    """The last item of a page: its sort values (in `order`'s keys, `_id` last)."""

    values: tuple

    @classmethod
    def of(cls, document: dict, order: dict) -> "Position":
        return cls(tuple(document.get(field) for field in order))


def in_tail(document: dict, order: dict) -> bool:
    return any(isinstance(document.get(field), list) for field in order)


def walk_blocks(order: dict, position: Position | None) -> list[dict]:
    """The walk's blocks after `position` (from its start when None), in order.

    Every block leaves out the tail: an array in any sort key.
    """
    fields = list(order)
    excluded = {field: NOT_ARRAY for field in fields if field != "_id"}
    if position is None:
        first = fields[0]
        return [_combined(excluded, {first: c}) for c in _brackets(order[first])]
    blocks = []
    for depth in range(len(fields) - 1, -1, -1):
        field, value = fields[depth], position.values[depth]
        equal = {fields[i]: {"$eq": position.values[i]} for i in range(depth)}
        for condition in later(value, order[field]):
            blocks.append(_combined(excluded, {**equal, field: condition}))
    return blocks


def tail_blocks(order: dict, position: Position | None) -> list[dict]:
    """The tail's blocks after `position` (its start when None), in `_id` order."""
    keys = [field for field in order if field != "_id"]
    arrays = [{field: {"$type": "array"}} for field in keys]
    tail = arrays[0] if len(arrays) == 1 else {"$or": arrays}
    if position is None:
        return [tail]
    return [_combined(tail, {"_id": c}) for c in later(position.values[-1], order["_id"])]


def _combined(base: dict, conditions: dict) -> dict:
    """Each field's conditions beside the base's on the same field, flat where possible."""
    if any(key.startswith("$") for key in base):
        return {"$and": [base, conditions]}
    merged = {field: dict(condition) for field, condition in base.items()}
    for field, condition in conditions.items():
        merged[field] = {**merged.get(field, {}), **condition}
    return merged
