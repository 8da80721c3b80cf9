"""BotRequest responses with their nested bot, createdBy and organization summaries."""

from marshmallow import fields

from schemas.document_dump import DocumentSchema
from schemas.fields import BsonValue, IdText, TimestampField, stored_as_is
from schemas.summaries import BotSummarySchema, NameSummarySchema


class BotRequestSchema(DocumentSchema):
    id = IdText(attribute="_id", required=True)
    bot = fields.Nested(BotSummarySchema, dump_default=None, allow_none=True)
    createdBy = fields.Nested(NameSummarySchema, dump_default=None, allow_none=True)
    organization = fields.Nested(NameSummarySchema, dump_default=None, allow_none=True)
    inputs = BsonValue(dump_default=None, metadata=stored_as_is("an object"))
    ip = fields.String(dump_default=None, allow_none=True)
    response = BsonValue(dump_default=None, metadata=stored_as_is("an object with a `message`"))
    createdAt = TimestampField(dump_default=None, metadata={"format": "date-time"})
    updatedAt = TimestampField(dump_default=None, metadata={"format": "date-time"})
