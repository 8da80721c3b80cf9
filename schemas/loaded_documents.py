"""The stored documents (docs/api.md, Stored data), as `db load` and `db seed-demo` accept them.

Loading turns a data file into exactly what the service expects to read: ObjectIds,
naive UTC datetimes, strict JSON types (a string is never taken for a number or a boolean).
Plain JSON works too: ids may be 24-hex strings, timestamps ISO 8601 strings.

Field metadata drives the cross-document checks of the loader: `references` names the
collection an id points into, `unique` marks a value no two documents may share.
Unknown extra fields are kept, as the writing system may store more than the service reads.
"""

import datetime as dt
import math
from decimal import Decimal

from bson import Decimal128, ObjectId
from marshmallow import INCLUDE, Schema, ValidationError, fields, validates_schema
from marshmallow.validate import Length, OneOf, Regexp

from domain import timestamps

MAX_TEXT = 10_000


class LoadedObjectId(fields.Field):
    """An ObjectId: Extended JSON `{"$oid": ...}` or 24 hexadecimal characters."""

    default_error_messages = {"invalid": "Not a valid id: expected an ObjectId or 24 hex digits."}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, ObjectId):
            return value
        if isinstance(value, str) and ObjectId.is_valid(value):
            return ObjectId(value)
        raise self.make_error("invalid")


class LoadedDateTime(fields.Field):
    """A UTC instant: Extended JSON `{"$date": ...}` or an ISO 8601 string (no offset = UTC).

    Stored naive and truncated to milliseconds, BSON's own precision, so every backend
    holds the same value.
    """

    default_error_messages = {"invalid": "Not a valid timestamp: expected $date or ISO 8601."}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            try:
                value = dt.datetime.fromisoformat(value)
            except ValueError as error:
                raise self.make_error("invalid") from error
        if not isinstance(value, dt.datetime):
            raise self.make_error("invalid")
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return timestamps.whole_milliseconds(value)


class StrictNumber(fields.Field):
    """A finite JSON number or `{"$numberDecimal": ...}`; never a string or a boolean."""

    default_error_messages = {"invalid": "Not a valid number."}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal128):
            raise self.make_error("invalid")
        number = value.to_decimal() if isinstance(value, Decimal128) else value
        finite = number.is_finite() if isinstance(number, Decimal) else math.isfinite(number)
        if not finite:
            raise ValidationError("Must be a finite number.")
        return value


class StrictBoolean(fields.Field):
    default_error_messages = {"invalid": "Not a valid boolean: expected true or false."}

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


def _text(**kwargs):
    return fields.String(validate=Length(min=1, max=MAX_TEXT), **kwargs)


def _reference(collection: str, **kwargs):
    return LoadedObjectId(metadata={"references": collection}, **kwargs)


def _optional_reference(collection: str):
    return _reference(collection, allow_none=True, load_default=None)


def _references(collection: str):
    return fields.List(_reference(collection), load_default=list)


class LoadedDocument(Schema):
    class Meta:
        unknown = INCLUDE

    _id = LoadedObjectId(required=True)


class OrganizationDocument(LoadedDocument):
    name = _text(required=True)


class UserDocument(LoadedDocument):
    name = _text(required=True)
    # Neither required nor unique (docs/api.md#stored-data): users may share one, or have none.
    email = fields.Email(allow_none=True)
    role = fields.String(validate=OneOf(["user", "admin"]), load_default="user")
    organizations = _references("organizations")


class TokenDocument(LoadedDocument):
    tokenHash = fields.String(
        required=True,
        validate=Regexp(r"^[0-9a-f]{64}\Z", error="Must be a lowercase hex SHA-256 digest."),
        metadata={"unique": True},
    )
    kind = fields.String(required=True, validate=OneOf(["user", "organization"]))
    user = _optional_reference("users")
    organization = _optional_reference("organizations")
    label = fields.String(allow_none=True, load_default=None, validate=Length(max=200))
    createdAt = LoadedDateTime(required=True)
    expiresAt = LoadedDateTime(allow_none=True, load_default=None)
    revokedAt = LoadedDateTime(allow_none=True, load_default=None)

    @validates_schema
    def one_principal(self, data, **kwargs):
        """A token stands for exactly the principal its kind names."""
        owner, other = ("user", "organization")
        if data.get("kind") == "organization":
            owner, other = other, owner
        if data.get(owner) is None:
            raise ValidationError(f"Required for a token of kind {data.get('kind')!r}.", owner)
        if data.get(other) is not None:
            raise ValidationError(f"Must be null for a token of kind {data['kind']!r}.", other)


class ServiceDocument(LoadedDocument):
    name = _text(required=True)
    slug = _text(required=True)
    directory = fields.String(allow_none=True, load_default=None, validate=Length(max=MAX_TEXT))


class TagDocument(LoadedDocument):
    name = _text(required=True)


class BotDocument(LoadedDocument):
    slug = fields.String(
        required=True,
        validate=[
            Length(min=1, max=200),
            Regexp(
                r"^[A-Za-z0-9._~-]+\Z",
                error="Must be letters, digits and . _ ~ - only: it is used in paths.",
            ),
        ],
        metadata={"unique": True},
    )
    name = _text(required=True)
    description = fields.String(allow_none=True, load_default=None, validate=Length(max=MAX_TEXT))
    creditCost = StrictNumber(required=True)
    modelKey = fields.String(allow_none=True, load_default=None, validate=Length(max=200))
    applyToApi = StrictBoolean(load_default=False)
    inputs = fields.List(fields.Dict(), load_default=list)
    isPublic = StrictBoolean(required=True)
    organization = _optional_reference("organizations")
    service = _optional_reference("services")
    tags = _references("tags")
    createdAt = LoadedDateTime(required=True)
    updatedAt = LoadedDateTime(required=True)


class BotRequestDocument(LoadedDocument):
    bot = _reference("bots", required=True)
    createdBy = _reference("users", required=True)
    organization = _optional_reference("organizations")
    inputs = fields.Dict(load_default=dict)
    response = fields.Dict(load_default=dict)
    # Whatever the writer recorded: proxies' lists, "unknown", a port after the address...
    ip = fields.String(allow_none=True, load_default=None)
    createdAt = LoadedDateTime(required=True)
    updatedAt = LoadedDateTime(required=True)


# In the order they are written: referenced collections before those referring to them.
COLLECTIONS: dict[str, Schema] = {
    "organizations": OrganizationDocument(),
    "users": UserDocument(),
    "tokens": TokenDocument(),
    "services": ServiceDocument(),
    "tags": TagDocument(),
    "bots": BotDocument(),
    "botrequests": BotRequestDocument(),
}
