"""Bot responses: the public view, the organization list item, the admin view, 4.8's pair."""

from marshmallow import Schema, fields

from schemas.documents import DocumentSchema
from schemas.fields import BsonNumber, BsonValue, StoredId, TimestampField, stored_as_is


class BotSchema(DocumentSchema):
    """The public view (every item of 4.5, and 4.7 for non-admins)."""

    id = StoredId(attribute="_id", required=True)
    slug = fields.String(dump_default=None, required=True)
    name = fields.String(dump_default=None, required=True)
    description = fields.String(dump_default=None, required=True, allow_none=True)
    creditCost = BsonNumber(dump_default=None, required=True)
    modelKey = fields.String(dump_default=None, required=True, allow_none=True)
    applyToApi = fields.Boolean(dump_default=None, required=True, allow_none=True)
    inputs = BsonValue(
        dump_default=None, required=True, metadata=stored_as_is("an array of objects")
    )


class OrganizationBotListItemSchema(BotSchema):
    organizationId = StoredId(attribute="organization", required=True)


class ServiceSummarySchema(DocumentSchema):
    id = StoredId(attribute="_id", required=True)
    name = fields.String(dump_default=None, required=True)
    slug = fields.String(dump_default=None, required=True)
    directory = fields.String(dump_default=None, required=True, allow_none=True)


class TagSummarySchema(DocumentSchema):
    id = StoredId(attribute="_id", required=True)
    name = fields.String(dump_default=None, required=True)


class BotDetailSchema(BotSchema):
    """The admin view of 4.7."""

    organizationId = StoredId(
        attribute="organization", dump_default=None, required=True, allow_none=True
    )
    isPublic = fields.Boolean(dump_default=None, required=True)
    service = fields.Nested(ServiceSummarySchema, dump_default=None, required=True, allow_none=True)
    tags = fields.List(fields.Nested(TagSummarySchema), dump_default=(), required=True)
    createdAt = TimestampField(dump_default=None, required=True, metadata={"format": "date-time"})
    updatedAt = TimestampField(dump_default=None, required=True, metadata={"format": "date-time"})


class OneBotSchema(Schema):
    """4.7: the admin view (BotDetail) or the public one (Bot), as the repository read it.

    It has no fields of its own: the OpenAPI document shows it as `documented_as`.
    """

    documented_as = {"oneOf": [BotDetailSchema, BotSchema]}
    _views = {True: BotDetailSchema(), False: BotSchema()}

    def dump(self, obj, *, many=None):
        return self._views[obj.detailed].dump(obj.document)


class OrganizationSummarySchema(DocumentSchema):
    id = StoredId(attribute="_id", required=True)
    name = fields.String(dump_default=None, required=True)


class OrganizationBotSchema(Schema):
    """4.8: the bot without its organization id, beside the organization."""

    bot = fields.Nested(BotSchema, required=True)
    organization = fields.Nested(OrganizationSummarySchema, required=True)
