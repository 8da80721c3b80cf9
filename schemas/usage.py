"""The usage summary (7.3)."""

from marshmallow import Schema, fields, pre_dump

from schemas.fields import BsonValue, TimestampField, json_safe

_CREDITS = {
    "type": "number",
    "nullable": True,
    "description": "Credits charged (docs/api.md, Usage); null where a stored cost is no "
    "finite number.",
}
_KEY = {
    "description": "The group: a bot, a user, or a UTC date (YYYY-MM-DD). A deleted bot or "
    "user keeps its id, with null names.",
    "oneOf": [
        {
            "type": "object",
            "title": "UsageBotKey",
            "properties": {
                "id": {"type": "string", "nullable": True},
                "slug": {"type": "string", "nullable": True},
                "name": {"type": "string", "nullable": True},
            },
            "required": ["id", "slug", "name"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "title": "UsageUserKey",
            "properties": {
                "id": {"type": "string", "nullable": True},
                "name": {"type": "string", "nullable": True},
            },
            "required": ["id", "name"],
            "additionalProperties": False,
        },
        {"type": "string", "format": "date"},
    ],
}


class UsageTotalsSchema(Schema):
    requests = fields.Integer(required=True)
    credits = BsonValue(required=True, metadata=_CREDITS)


class UsageResultSchema(Schema):
    key = BsonValue(required=True, metadata=_KEY)
    requests = fields.Integer(required=True)
    credits = BsonValue(required=True, metadata=_CREDITS)


class UsageSchema(Schema):
    start = TimestampField(data_key="from", required=True, metadata={"format": "date-time"})
    end = TimestampField(data_key="to", required=True, metadata={"format": "date-time"})
    group_by = fields.String(data_key="groupBy", required=True)
    totals = fields.Nested(UsageTotalsSchema, required=True)
    results = fields.List(fields.Nested(UsageResultSchema), required=True)

    @pre_dump
    def with_totals(self, usage, **kwargs) -> dict:
        """The repository's sums as JSON numbers, then their totals: a group whose credits
        are no number JSON can hold (a stored NaN, a sum past the float range) shows null,
        and the total of an unknown amount is unknown too."""
        results = [{**row, "credits": json_safe(row["credits"])} for row in usage.results]
        credits = [row["credits"] for row in results]
        totals = {
            "requests": sum(row["requests"] for row in results),
            "credits": None if None in credits else sum(credits),
        }
        return {**vars(usage), "results": results, "totals": totals}
