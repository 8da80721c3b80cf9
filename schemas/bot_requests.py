"""BotRequest responses with their nested bot, createdBy and organization summaries."""

from marshmallow import fields

from schemas.documents import DocumentSchema
from schemas.fields import BsonValue, ObjectIdString, TimestampField


class BotSummarySchema(DocumentSchema):
    creditCost = BsonValue(dump_default=None, required=True, metadata={"type": "number"})
    name = fields.String(dump_default=None, required=True)
    slug = fields.String(dump_default=None, required=True)


class NameSummarySchema(DocumentSchema):
    name = fields.String(dump_default=None, required=True)


class BotRequestSchema(DocumentSchema):
    id = ObjectIdString(attribute="_id", required=True)
    bot = fields.Nested(BotSummarySchema, dump_default=None, required=True, allow_none=True)
    createdBy = fields.Nested(NameSummarySchema, dump_default=None, required=True, allow_none=True)
    organization = fields.Nested(
        NameSummarySchema, dump_default=None, required=True, allow_none=True
    )
    inputs = BsonValue(dump_default=None, required=True, metadata={"type": "object"})
    ip = fields.String(dump_default=None, required=True, allow_none=True)
    response = BsonValue(dump_default=None, required=True, metadata={"type": "object"})
    createdAt = TimestampField(dump_default=None, required=True, metadata={"format": "date-time"})
    updatedAt = TimestampField(dump_default=None, required=True, metadata={"format": "date-time"})
