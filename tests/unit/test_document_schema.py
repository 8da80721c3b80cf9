"""DocumentSchema dumps exactly what marshmallow's own field-by-field path dumps."""

import datetime as dt

import pytest
from bson import Decimal128, ObjectId
from bson.datetime_ms import DatetimeMS
from marshmallow import Schema

from repositories.pages import OffsetPage
from schemas.bot_requests import BotRequestSchema
from schemas.bots import BotDetailSchema, BotSchema, OrganizationBotListItemSchema
from schemas.document_dump import DocumentSchema
from schemas.pages import page_schema

STAMP = dt.datetime(2026, 1, 2, 3, 4, 5, 678000)
DOCUMENTS = [
    {},
    {"_id": ObjectId(), "bot": None, "createdBy": None, "organization": None, "extra": 1},
    {
        "_id": ObjectId(),
        "bot": {"creditCost": Decimal128("1.50"), "name": "A", "slug": "a", "secret": 1},
        "createdBy": {"name": None},
        "organization": {},
        "inputs": {"when": STAMP, "id": ObjectId(), "deep": [{"n": float("inf")}]},
        "response": None,
        "ip": "203.0.113.7",
        "createdAt": STAMP.replace(tzinfo=dt.timezone(dt.timedelta(hours=2))),
        "updatedAt": DatetimeMS(2**62),
    },
    {
        "_id": ObjectId(),
        "slug": "s",
        "name": 5,
        "description": None,
        "creditCost": 2.5,
        "applyToApi": "yes",
        "inputs": [{"name": "prompt"}],
        "organization": ObjectId(),
        "isPublic": True,
        "service": {"_id": ObjectId(), "name": "S", "slug": "s"},
        "tags": [{"_id": ObjectId(), "name": "t"}, {"_id": ObjectId()}],
        "createdAt": STAMP,
    },
]
SCHEMAS = [BotRequestSchema, BotSchema, OrganizationBotListItemSchema, BotDetailSchema]


def _marshmallow_dump(schema, data, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(DocumentSchema, "_document_fields", lambda self: None)
        return schema.dump(data)


@pytest.mark.parametrize("schema_class", SCHEMAS)
@pytest.mark.parametrize("document", DOCUMENTS)
def test_same_output_as_marshmallow(schema_class, document, monkeypatch):
    schema = schema_class()
    assert schema.dump(document) == _marshmallow_dump(schema, document, monkeypatch)


def test_a_page_dumps_the_same(monkeypatch):
    schema = page_schema(BotRequestSchema)()
    page = OffsetPage(DOCUMENTS * 3, 2, 10, 31)
    assert schema.dump(page) == _marshmallow_dump(schema, page, monkeypatch)


def test_a_plain_document_is_read_without_marshmallows_accessor(monkeypatch):
    """The fast path is taken where it can be, and marshmallow's where a key needs it."""

    def refuse(*args, **kwargs):
        raise AssertionError("marshmallow's accessor")

    monkeypatch.setattr(Schema, "get_attribute", refuse)

    class Odd(DocumentSchema):
        items = BotSchema._declared_fields["name"]

    assert BotRequestSchema().dump(DOCUMENTS[2])["ip"] == "203.0.113.7"
    with pytest.raises(AssertionError, match="accessor"):
        Odd().dump({"items": "a key that `dict` has as a method"})
