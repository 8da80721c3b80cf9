"""The one place where query strings and path segments become typed values: strict, so that
a value is refused with a 400 rather than reinterpreted."""

import datetime as dt
import re

from bson import ObjectId
from marshmallow import ValidationError, fields


class ObjectIdString(fields.Field):
    """An id in a query or a path: loaded from 24 hexadecimal characters."""

    default_error_messages = {"invalid": "Not a valid id: expected 24 hexadecimal characters."}

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str) or not ObjectId.is_valid(value):
            raise self.make_error("invalid")
        return ObjectId(value)


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
