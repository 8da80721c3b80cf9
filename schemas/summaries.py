"""The summaries a response nests for a document it references: a bot, a user, an
organization, a service or a tag."""

from marshmallow import fields

from schemas.document_dump import DocumentSchema
from schemas.fields import BsonNumber, IdText


class BotSummarySchema(DocumentSchema):
    creditCost = BsonNumber(dump_default=None, required=True)
    name = fields.String(dump_default=None, required=True)
    slug = fields.String(dump_default=None, required=True)


class NameSummarySchema(DocumentSchema):
    name = fields.String(dump_default=None, required=True)


class ServiceSummarySchema(DocumentSchema):
    id = IdText(attribute="_id", required=True)
    name = fields.String(dump_default=None, required=True)
    slug = fields.String(dump_default=None, required=True)
    directory = fields.String(dump_default=None, required=True, allow_none=True)


class _IdNameSummarySchema(DocumentSchema):
    id = IdText(attribute="_id", required=True)
    name = fields.String(dump_default=None, required=True)


class TagSummarySchema(_IdNameSummarySchema):
    """Named apart from the organization's summary so that a generated client has a type
    for each (the OpenAPI components are named after the schemas)."""


class OrganizationSummarySchema(_IdNameSummarySchema):
    """See TagSummarySchema."""
