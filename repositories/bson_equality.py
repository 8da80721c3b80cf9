"""MongoDB's equality of stored values, as Python keys: how the repositories tell documents
and references apart where another writer's values may be documents, arrays or numbers of
several types, which Python's own equality or hashing gets wrong or refuses."""

from decimal import Decimal

import bson
from bson import DBRef, Decimal128, Int64, ObjectId


def equality_key(value):
    """`value` as a key equal to another exactly where MongoDB's equality makes them equal:
    numbers by value whatever their type (a bool is no number), text apart from other
    types, a document field by field in order and an array element by element, each value
    by the same rule. An ObjectId, what nearly every reference is, is its own key: it equals
    nothing but the same ObjectId."""
    if type(value) is ObjectId:
        return value
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float | Int64 | Decimal128):
        number = value.to_decimal() if isinstance(value, Decimal128) else Decimal(value)
        return ("number", "NaN" if number.is_nan() else number)
    if isinstance(value, dict):
        return ("document", tuple((name, equality_key(item)) for name, item in value.items()))
    if isinstance(value, list):
        return ("array", tuple(equality_key(item) for item in value))
    if isinstance(value, DBRef):
        return ("document", equality_key(value.as_doc()))
    try:
        hash(value)
    except TypeError:
        return ("bson", bson.encode({"v": value}))
    return (type(value).__name__, value)
