"""The one place where BSON values become JSON: the output fields of every schema.

Query strings become typed values in `schemas/query_fields.py`."""

import base64
import datetime as dt
import math
import uuid
from decimal import Decimal

from bson import EPOCH_NAIVE, Binary, DatetimeMS, Decimal128, ObjectId, Regex, Timestamp
from bson.binary import UUID_SUBTYPE
from marshmallow import fields

_INT64_LIMIT = 2**63


def format_timestamp(value: dt.datetime) -> str:
    """ISO 8601 UTC with milliseconds and `Z`, e.g. 2026-01-02T03:04:05.678Z."""
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.isoformat(timespec="milliseconds") + "Z"


def _number(value: float | Decimal):
    """JSON has no NaN or Infinity, and an integer past int64 would print as thousands of digits.

    A Decimal128 such as 1E+6000 is integral: as an int it would not even serialize.
    """
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        if value == value.to_integral_value() and abs(value) < _INT64_LIMIT:
            return int(value)
        value = float(value)
    return value if math.isfinite(value) else None


def json_safe(value):
    """Stored `inputs` and `response` are free-form: any BSON value must dump without a 500.

    bson's Code (JavaScript) is a str, and Int64 an int: they dump as their source and number.
    """
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, ObjectId):
        return str(value)
    if isinstance(value, dt.datetime):
        return format_timestamp(value)
    if isinstance(value, DatetimeMS):
        return _datetime_ms(value)
    if isinstance(value, Decimal128):
        return _number(value.to_decimal())
    if isinstance(value, Binary) and value.subtype == UUID_SUBTYPE and len(value) == 16:
        return str(value.as_uuid())
    if isinstance(value, Binary | bytes):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Timestamp):
        return format_timestamp(value.as_datetime())
    if isinstance(value, Regex):
        return value.pattern if isinstance(value.pattern, str) else value.pattern.decode()
    return str(value)


def _datetime_ms(value: DatetimeMS) -> str | int:
    """A BSON datetime outside Python's range: formatted when possible, else milliseconds."""
    try:
        return format_timestamp(EPOCH_NAIVE + dt.timedelta(milliseconds=int(value)))
    except OverflowError:
        return int(value)


class IdText(fields.Field):
    """A stored document's id, or a reference to one, as text: an ObjectId as its 24
    lowercase hex characters. Another writer may use ids of another type (text, a number),
    which show as text too; so the OpenAPI document promises a string, not the pattern."""

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else str(value)


class TimestampField(fields.Field):
    """A stored date as a timestamp string, or null: never a value of another type, which a
    client told `date-time` could not parse (another writer may store a number or text)."""

    def _serialize(self, value, attr, obj, **kwargs):
        if isinstance(value, dt.datetime):
            return format_timestamp(value)
        if isinstance(value, DatetimeMS | Timestamp):
            shown = json_safe(value)
            return shown if isinstance(shown, str) else None
        return None


def stored_as_is(usually: str) -> dict:
    """The OpenAPI metadata of free-form content: no type, since another writer's value of
    any type is shown, and a client must not be promised `usually`."""
    return {
        "description": f"As stored, made JSON-safe: usually {usually}, but any JSON value, "
        "null included, where the writer stored another."
    }


class BsonValue(fields.Field):
    """Stored free-form content, made JSON-safe."""

    def _serialize(self, value, attr, obj, **kwargs):
        return json_safe(value)


class BsonNumber(fields.Field):
    """A stored number (int, Int64, double, Decimal128) as a JSON number, or null: NaN,
    infinities and values of another type (text, a boolean) have no JSON number."""

    def _serialize(self, value, attr, obj, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal128):
            return None
        return json_safe(value)
