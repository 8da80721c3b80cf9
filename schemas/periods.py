"""Periods (usage, 7.3; exports, 7.6) and the usage summaries' query-string schemas."""

import datetime as dt

from marshmallow import ValidationError, post_load
from marshmallow.validate import OneOf

from domain import timestamps
from repositories.usage import UsageQuery
from schemas.queries import StrictQuerySchema, built
from schemas.query_fields import QueryText, QueryTimestamp

PERIOD_DAYS = 30
MAX_PERIOD_DAYS = 366


def period(start, end, names: tuple[str, str]) -> tuple[dt.datetime, dt.datetime]:
    """A period of usage (7.3) or of an export (7.6), `end` exclusive: by default the
    PERIOD_DAYS before `end`, which is now; at most MAX_PERIOD_DAYS long. `names` are the
    parameters' own, for the 400."""
    end = end or timestamps.now()
    start = start or end - min(dt.timedelta(days=PERIOD_DAYS), end - dt.datetime.min)
    if not start < end:
        raise ValidationError(f"Must be later than {names[0]}.", names[1])
    if end - start > dt.timedelta(days=MAX_PERIOD_DAYS):
        message = f"Must be at most {MAX_PERIOD_DAYS} days after {names[0]}."
        raise ValidationError(message, names[1])
    return start, end


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
