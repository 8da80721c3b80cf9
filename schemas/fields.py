"""The one place where BSON values become JSON and query strings become typed values."""

import base64
import datetime as dt
import math
import re
import uuid
from decimal import Decimal

from bson import EPOCH_NAIVE, Binary, DatetimeMS, Decimal128, ObjectId, Regex, Timestamp
from bson.binary import UUID_SUBTYPE
from marshmallow import ValidationError, fields

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


class StoredId(fields.Field):
    """A stored document's id, or a reference to one, as text: an ObjectId as its 24
    lowercase hex characters. Another writer may use ids of another type (text, a number),
    which show as text too; so the OpenAPI document promises a string, not the pattern."""

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else str(value)


class ObjectIdString(fields.Field):
    """An id in a query or a path: loaded from 24 hexadecimal characters."""

    default_error_messages = {"invalid": "Not a valid id: expected 24 hexadecimal characters."}

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str) or not ObjectId.is_valid(value):
            raise self.make_error("invalid")
        return ObjectId(value)


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


class QueryInteger(fields.Integer):
    """Digits only: `1e3`, ` 5`, `+5` or `5.0` are rejected, not reinterpreted."""

    MAX_DIGITS = 9

    def _deserialize(self, value, attr, data, **kwargs):
        if not (isinstance(value, str) and value.isascii() and value.isdigit()):
            raise self.make_error("invalid")
        if len(value) > self.MAX_DIGITS:
            raise ValidationError(f"Must be at most {10**self.MAX_DIGITS - 1}.")
        return int(value)


class QueryBoolean(fields.Boolean):
    truthy = {"true", "1"}
    falsy = {"false", "0"}
    default_error_messages = {"invalid": "Must be one of: true, false, 1, 0."}

    def _deserialize(self, value, attr, data, **kwargs):
        lowered = value.lower() if isinstance(value, str) else value
        if lowered in self.truthy:
            return True
        if lowered in self.falsy:
            return False
        raise self.make_error("invalid")


class QueryText(fields.String):
    """Free text filter: bounded, printable; matched literally by the repositories."""

    MAX_LENGTH = 200
    CONTROL_CHARACTERS = r"\x00-\x1f\x7f-\x9f"
    _CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if len(text) > self.MAX_LENGTH:
            raise ValidationError(f"Must be at most {self.MAX_LENGTH} characters long.")
        if self._CONTROL.search(text):
            raise ValidationError("Must not contain control characters.")
        return text


class QueryTimestamp(fields.AwareDateTime):
    """An instant: an RFC 3339 date-time (ISO 8601 with `Z` or an offset), or a date alone
    for midnight UTC.

    Loaded as a naive UTC datetime, the way stored timestamps compare. A time without an
    offset is refused rather than guessed. An offset's `+` sent unencoded arrives as a space,
    and is read as the `+` it was. An instant that an offset moves out of years 1 to 9999 is
    clamped to their ends, where no stored timestamp lies, so that every RFC 3339 date-time
    is accepted; the upper end is a whole millisecond, as BSON keeps them.
    """

    FIRST = dt.datetime.min
    LAST = dt.datetime.max.replace(microsecond=999000)
    _SHAPE = re.compile(
        r"(?P<date>\d{4}-\d{2}-\d{2})"
        r"(?:[Tt ](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)"
        r"(?:(?P<utc>[Zz])|(?P<sign>[-+ ])(?P<offset>\d{2}:\d{2}))?)?",
        re.ASCII,
    )
    default_error_messages = {
        "invalid": "Not an ISO 8601 timestamp: use 2026-01-02T03:04:05Z, an offset such "
        "as +02:00 instead of Z, or a date alone (2026-01-02).",
        "invalid_awareness": "A time needs Z or an offset such as +02:00.",
    }

    def _deserialize(self, value, attr, data, **kwargs):
        shape = self._SHAPE.fullmatch(value) if isinstance(value, str) else None
        if shape is None:
            raise self.make_error("invalid")
        if shape["time"] is None:
            day = super()._deserialize(shape["date"] + "T00:00Z", attr, data, **kwargs)
            return day.replace(tzinfo=None)
        offset = ""
        if shape["utc"]:
            offset = "Z"
        elif shape["sign"]:
            offset = shape["sign"].replace(" ", "+") + shape["offset"]
        text = f"{shape['date']}T{shape['time']}{offset}"
        moment = super()._deserialize(text, attr, data, **kwargs)
        try:
            utc = moment.astimezone(dt.UTC).replace(tzinfo=None)
        except OverflowError:
            return self.FIRST if moment.year == self.FIRST.year else self.LAST
        return min(utc, self.LAST)


class CommaSeparatedIds(fields.Field):
    MAX_IDS = 50

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str):
            raise ValidationError("Must be a comma-separated list of ids.")
        parts = value.split(",")
        if len(parts) > self.MAX_IDS:
            raise ValidationError(f"At most {self.MAX_IDS} ids are allowed.")
        bad = [part for part in parts if not ObjectId.is_valid(part)]
        if bad:
            raise ValidationError(f"Not a valid id: {bad[0][:40]!r}.")
        return list(dict.fromkeys(ObjectId(part) for part in parts))


_SORT_TERM = re.compile(r"([A-Za-z]+)(?::([A-Za-z]+))?")
_DIRECTIONS = {"asc": 1, "desc": -1}
_DIRECTION_NAMES = {1: "asc", -1: "desc"}


class SortBy(fields.Field):
    """`attr[:asc|:desc]` separated by commas, into [(stored field, 1 | -1), ...]."""

    def __init__(self, attributes: tuple[str, ...], **kwargs):
        super().__init__(**kwargs)
        self.attributes = attributes

    @property
    def pattern(self) -> str:
        """The accepted syntax as a regular expression, for the OpenAPI document.

        The lookahead refuses a value naming one attribute twice.
        """
        attribute = "|".join(self.attributes)
        direction = "(?::(?:[aA][sS][cC]|[dD][eE][sS][cC]))?"
        term = f"(?:{attribute}){direction}"
        repeated = f"(?:.*,)?({attribute})(?::[^,]*)?,(?:.*,)?\\1(?::[^,]*)?(?:,|$)"
        return f"^(?!{repeated}){term}(?:,{term})*$"

    def _serialize(self, value, attr, obj, **kwargs):
        """Back to the query syntax: how the OpenAPI document shows the default order."""
        if value is None:
            return None
        return ",".join(f"{name}:{_DIRECTION_NAMES[direction]}" for name, direction in value)

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str):
            raise ValidationError("Must be a string.")
        order = []
        for term in value.split(","):
            match = _SORT_TERM.fullmatch(term)
            if not match:
                raise ValidationError(f"Malformed sort term {term[:40]!r}: use attr[:asc|:desc].")
            name, direction = match.group(1), (match.group(2) or "asc").lower()
            if name not in self.attributes:
                allowed = ", ".join(self.attributes)
                raise ValidationError(f"Cannot sort by {name!r}; allowed: {allowed}.")
            if direction not in _DIRECTIONS:
                raise ValidationError(f"Unknown sort direction {direction!r}; use asc or desc.")
            if any(name == seen for seen, _ in order):
                raise ValidationError(f"{name!r} appears more than once.")
            order.append((name, _DIRECTIONS[direction]))
        return order
