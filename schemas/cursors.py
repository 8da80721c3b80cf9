"""Keyset cursors (docs/api.md#keyset-pages): opaque, URL-safe, bound to their list and `sortBy`.

A cursor is the BSON of where the next page resumes (the last item's sort values and id, in
the walk or its tail), beside the list and the order it was made for, in base64url. The list
is named by its query schema (`ListQuerySchema.cursor_scope`), which both directions are
given: a cursor is made and read without a request.

A cursor is not signed: it holds nothing the caller did not just receive, and whatever it
says is only a position, every query keeping the caller's visibility. So a forged cursor can
move a walk, never widen it; a cursor that does not decode to a position of this list and
order is a 400 naming `cursor`.
"""

import base64
import binascii
from dataclasses import dataclass

import bson
from bson.codec_options import CodecOptions, DatetimeConversion
from marshmallow import ValidationError, fields

from repositories.bson_order import TAIL, WALK, Position, Resume, Unplaceable, bracket

MAX_LENGTH = 512
# A position may be a date beyond Python's years 1 to 9999, as the database client reads it.
_OPTIONS = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
INVALID = "Not a cursor this service made."


@dataclass(frozen=True)
class Cursor:
    """A decoded cursor: the order it was made for, and where it resumes."""

    sort: list[tuple[str, int]]
    resume: Resume


def encode(resume: Resume, sort: list[tuple[str, int]], scope: str) -> str:
    """The cursor of the list `scope` that resumes at `resume`: the position's values; past
    MAX_LENGTH (a long name), its item's id instead."""
    document = {
        "e": scope,
        "s": [[field, direction] for field, direction in sort],
        "p": resume.phase,
        "v": list(resume.position.values),
    }
    text = _text(document)
    if len(text) > MAX_LENGTH:
        del document["v"]
        text = _text({**document, "a": resume.position.values[-1]})
    return text


def _text(document: dict) -> str:
    return base64.urlsafe_b64encode(bson.encode(document)).decode("ascii").rstrip("=")


def _decode(text: str) -> dict | None:
    """The cursor's document, or None where the text is no base64url BSON."""
    try:
        return bson.decode(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), _OPTIONS)
    except (binascii.Error, ValueError, bson.errors.BSONError):
        return None


def decode(text, scope: str) -> Cursor:
    """The cursor that `text` is, made for the list `scope`; a ValidationError otherwise."""
    if not isinstance(text, str) or len(text) > MAX_LENGTH or not text.isascii():
        raise ValidationError(INVALID)
    document = _decode(text)
    if document is None:
        raise ValidationError(INVALID)
    keys = set(document) - {"e", "s", "p"}
    if keys not in ({"v"}, {"a"}) or document.get("p") not in (WALK, TAIL):
        raise ValidationError(INVALID)
    if document.get("e") != scope:
        raise ValidationError("Made for another list: start again without a cursor.")
    sort, values = document.get("s"), document.get("v")
    if not (isinstance(sort, list) and all(_sort_term(term) for term in sort)):
        raise ValidationError(INVALID)
    sort = [tuple(term) for term in sort]
    if "a" in document:
        return Cursor(sort, Resume(document["p"], None, anchor=document["a"]))
    if not (isinstance(values, list) and len(values) == len(sort) + 1):
        raise ValidationError(INVALID)
    placed = values if document["p"] == WALK else values[-1:]
    try:
        for value in placed:
            bracket(value)
    except Unplaceable as error:
        raise ValidationError(INVALID) from error
    if not all(_literal(value) for value in values):
        raise ValidationError(INVALID)
    return Cursor(sort, Resume(document["p"], Position(tuple(values))))


class CursorField(fields.Field):
    """A list's `cursor` parameter: decoded for the list its schema names
    (`cursor_scope`)."""

    def _deserialize(self, value, attr, data, **kwargs) -> Cursor:
        return decode(value, self.parent.cursor_scope)


def _literal(value) -> bool:
    """No operator hides in an object: a stored document holds no `$` field, and a server
    may refuse one even where it is only compared."""
    if isinstance(value, dict):
        return all(not key.startswith("$") and _literal(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_literal(item) for item in value)
    return True


def _sort_term(term) -> bool:
    return (
        isinstance(term, list)
        and len(term) == 2
        and isinstance(term[0], str)
        and term[1] in (1, -1)
        and not isinstance(term[1], bool)
    )
