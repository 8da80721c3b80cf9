"""Bot responses: the public view, the organization list item, the admin view, 4.8's pair."""

from marshmallow import Schema, fields

from schemas.document_dump import DocumentSchema
from schemas.fields import BsonNumber, BsonValue, IdText, TimestampField, stored_as_is
from schemas.selection import Selected, keep
from schemas.summaries import (
    OrganizationSummarySchema,
    ServiceSummarySchema,
    TagSummarySchema,
)


class BotSchema(DocumentSchema):
    """The public view (every item of 4.5, and 4.7 for non-admins).

    Only `id` is required: `fields` may leave out any other (docs/api.md#field-selection); the items
    of the response schemas here and in schemas/bot_requests.py are documented so.
    """

    id = IdText(attribute="_id", required=True)
    slug = fields.String(dump_default=None)
    name = fields.String(dump_default=None)
    description = fields.String(dump_default=None, allow_none=True)
    creditCost = BsonNumber(dump_default=None)
    modelKey = fields.String(dump_default=None, allow_none=True)
    applyToApi = fields.Boolean(dump_default=None, allow_none=True)
    inputs = BsonValue(dump_default=None, metadata=stored_as_is("an array of objects"))


class OrganizationBotListItemSchema(BotSchema):
    organizationId = IdText(attribute="organization")


class BotDetailSchema(BotSchema):
    """The admin view of 4.7."""

    organizationId = IdText(attribute="organization", dump_default=None, allow_none=True)
    isPublic = fields.Boolean(dump_default=None)
    service = fields.Nested(ServiceSummarySchema, dump_default=None, allow_none=True)
    tags = fields.List(fields.Nested(TagSummarySchema), dump_default=())
    createdAt = TimestampField(dump_default=None, metadata={"format": "date-time"})
    updatedAt = TimestampField(dump_default=None, metadata={"format": "date-time"})


class OneBotSchema(Schema):
    """4.7: the admin view (BotDetail) or the public one (Bot), as the repository read it.

    It has no fields of its own: the OpenAPI document shows it as `documented_as`, `anyOf`
    since a selection of public fields is both.
    """

    documented_as = {"anyOf": [BotDetailSchema, BotSchema]}
    views = {True: BotDetailSchema, False: BotSchema}  # by `OneBot.detailed`
    _dumpers = {detailed: view() for detailed, view in views.items()}

    def dump(self, obj, *, many=None):
        if isinstance(obj, Selected):
            return keep(self.dump(obj.value), obj.fields)
        return self._dumpers[obj.detailed].dump(obj.document)


class OrganizationBotSchema(Schema):
    """4.8: the bot without its organization id, beside the organization."""

    bot = fields.Nested(BotSchema, required=True)
    organization = fields.Nested(OrganizationSummarySchema, required=True)

    def dump(self, obj, *, many=None):
        """A selection is of the bot's fields (docs/api.md#field-selection); the organization comes
        whole."""
        if isinstance(obj, Selected):
            pair = super().dump(obj.value)
            return {**pair, "bot": keep(pair["bot"], obj.fields)}
        return super().dump(obj, many=many)
