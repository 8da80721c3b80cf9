"""The page envelope and the error body shared by every endpoint."""

from marshmallow import Schema, fields


class ErrorSchema(Schema):
    code = fields.Integer(required=True, metadata={"description": "The HTTP status."})
    message = fields.String(required=True, metadata={"description": "A readable sentence."})
    details = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "On a 400: the messages for each offending parameter."},
    )


class PageSchema(Schema):
    """The base of every list envelope (`page_schema`), by which a blueprint knows a page."""


def page_schema(item_schema: type[Schema]) -> type[PageSchema]:
    """The list envelope around `item_schema`, named after it for the OpenAPI document."""
    name = item_schema.__name__.removesuffix("Schema") + "PageSchema"
    return PageSchema.from_dict(
        {
            "results": fields.List(fields.Nested(item_schema), required=True),
            "page": fields.Integer(required=True),
            "limit": fields.Integer(required=True),
            "totalPages": fields.Integer(attribute="total_pages", required=True),
            "totalResults": fields.Integer(attribute="total_results", required=True),
        },
        name=name,
    )
