"""The error body every error response holds (web/errors.py writes it)."""

from marshmallow import Schema, fields


class ErrorSchema(Schema):
    code = fields.Integer(required=True, metadata={"description": "The HTTP status."})
    message = fields.String(required=True, metadata={"description": "A readable sentence."})
    details = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "On a 400: the messages for each offending parameter."},
    )
