"""Usage summaries (docs/api.md#usage): the query string, a period grouped by bot, day or user, and
the summary sent."""

from marshmallow import Schema, fields, post_load, pre_dump
from marshmallow.validate import OneOf

from repositories.usage import UsageQuery
from schemas.fields import BsonValue, TimestampField, json_safe
from schemas.periods import MAX_PERIOD_DAYS, PERIOD_DAYS, period
from schemas.queries import StrictQuerySchema, built
from schemas.query_fields import QueryText, QueryTimestamp

_CREDITS = {
    "type": ["number", "null"],
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
                "id": {"type": ["string", "null"]},
                "slug": {"type": ["string", "null"]},
                "name": {"type": ["string", "null"]},
            },
            "required": ["id", "slug", "name"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "title": "UsageUserKey",
            "properties": {
                "id": {"type": ["string", "null"]},
                "name": {"type": ["string", "null"]},
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


def _group_by(*groups: str):
    return QueryText(
        data_key="groupBy",
        load_default=groups[0],
        validate=OneOf(groups),
        metadata={"description": f"What the results are grouped by: {', '.join(groups)}."},
    )


class UsageQuerySchema(StrictQuerySchema):
    """7.3: a period, `to` exclusive; by default the 30 days before `to`, which is now."""

    start = QueryTimestamp(
        data_key="from",
        metadata={
            "description": "Start of the period (inclusive): ISO 8601 with `Z` or an offset, or "
            f"a date alone for midnight UTC. Default: {PERIOD_DAYS} days before `to`."
        },
    )
    end = QueryTimestamp(
        data_key="to",
        metadata={
            "description": "End of the period (exclusive), written as `from`; later than "
            f"`from`, and at most {MAX_PERIOD_DAYS} days after it. Default: now."
        },
    )
    group_by = _group_by("bot", "day")

    @post_load
    def period(self, data, **kwargs) -> UsageQuery:
        start, end = period(data.get("start"), data.get("end"), ("from", "to"))
        return built(UsageQuery, self, {**data, "start": start, "end": end})


class OrganizationUsageQuerySchema(UsageQuerySchema):
    group_by = _group_by("bot", "day", "user")
