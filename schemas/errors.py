"""The error body every error response holds (web/errors.py writes it): RFC 9457 problem
details, and the members this API had before them, which stay (docs/api.md#errors)."""

from marshmallow import Schema, fields


class ErrorSchema(Schema):
    type = fields.String(
        required=True,
        metadata={
            "description": "A URI naming the kind of error, the same for every error of "
            "that kind (listed in the API reference, Problem types).",
            "format": "uri",
        },
    )
    title = fields.String(
        required=True, metadata={"description": "A short summary of the kind of error."}
    )
    status = fields.Integer(required=True, metadata={"description": "The HTTP status."})
    detail = fields.String(
        required=True, metadata={"description": "A readable sentence about this occurrence."}
    )
    instance = fields.String(
        required=True,
        metadata={
            "description": "This occurrence: `urn:request:` and the response's X-Request-ID.",
            "format": "uri",
        },
    )
    code = fields.Integer(required=True, metadata={"description": "The HTTP status (= status)."})
    message = fields.String(
        required=True, metadata={"description": "A readable sentence (= detail)."}
    )
    details = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "On a 400: the messages for each offending parameter."},
    )
