"""Usage summaries (docs/api.md#usage): requests and credits of a period, grouped by bot, day or
user.

One aggregation per call. Its first `$match` is the caller's field and `createdAt`, which an
index of repositories/indexes.py holds in that order (the embedded engine plans an index for
the first stage only). The requests are grouped first by key and bot, so that each bot is
looked up once per group rather than once per request; a group's credits are what its
requests were charged, plus its bot's current cost for each request that stored none.

The stages are those that MongoDB, the embedded engine (SecantusDB) and mongomock all run:
no `$densify` (MongoDB 5.1; mongomock lacks it and SecantusDB ignores it), so days without
requests are added here from the grouped rows; and a looked-up bot is unwound before its
fields are read, as SecantusDB does not read a field through an array.
"""

import datetime as dt
from dataclasses import dataclass

from pymongo.database import Database

from access.policy import Visibility
from domain import timestamps
from repositories.reads import lookup_one

_DAY_FORMAT = "%Y-%m-%d"
_KEYS = {
    "bot": "$bot",
    "day": {"$dateToString": {"format": _DAY_FORMAT, "date": "$createdAt"}},
    "user": "$createdBy",
}
_PRICED = {"$isNumber": "$creditCost"}
# A deleted bot, or a cost another writer stored as something other than a number, is 0.
_BOT_COST = {"$cond": [{"$isNumber": "$bot.creditCost"}, "$bot.creditCost", 0]}


@dataclass(frozen=True, kw_only=True)
class UsageQuery:
    """A usage summary's parameters (schemas/usage.py builds it): `end` exclusive."""

    start: dt.datetime
    end: dt.datetime
    group_by: str


@dataclass(frozen=True)
class Usage:
    start: dt.datetime
    end: dt.datetime
    group_by: str
    results: list[dict]


def pipeline(visibility: Visibility, start: dt.datetime, end: dt.datetime, group_by: str):
    """The whole computation, for the repository and for the benchmark's floor."""
    period = {"createdAt": timestamps.between(start, end)}
    named = {}
    if group_by == "bot":
        named = {"slug": {"$first": "$bot.slug"}, "name": {"$first": "$bot.name"}}
    stages = [
        {"$match": {**visibility.as_filter(), **period}},
        {
            "$group": {
                "_id": {"key": _KEYS[group_by], "bot": "$bot"},
                "requests": {"$sum": 1},
                "charged": {"$sum": {"$cond": [_PRICED, "$creditCost", 0]}},
                "unpriced": {"$sum": {"$cond": [_PRICED, 0, 1]}},
            }
        },
        {
            "$project": {
                "key": "$_id.key",
                "bot": "$_id.bot",
                "requests": 1,
                "charged": 1,
                "unpriced": 1,
            }
        },
        *lookup_one("bot", "bots"),
        {
            "$group": {
                "_id": "$key",
                "requests": {"$sum": "$requests"},
                "credits": {
                    "$sum": {
                        "$add": [
                            "$charged",
                            {"$multiply": ["$unpriced", _BOT_COST]},
                        ]
                    }
                },
                **named,
            }
        },
    ]
    if group_by == "user":
        stages += lookup_one("_id", "users", "userDocument")
        stages.append({"$addFields": {"name": "$userDocument.name"}})
    if group_by != "day":  # days are put in order when the empty ones are added
        stages.append({"$sort": {"credits": -1, "requests": -1, "_id": 1}})
    stages.append({"$project": {"requests": 1, "credits": 1, "slug": 1, "name": 1}})
    return stages


def _key(row: dict, group_by: str):
    if group_by == "day":
        return row["_id"]
    key = {"id": row["_id"]}
    if group_by == "bot":
        key["slug"] = row.get("slug")
    key["name"] = row.get("name")
    return key


def _days(start: dt.datetime, end: dt.datetime) -> list[str]:
    """Every date the period touches: a partial first or last day counts as its date.

    As `$dateToString` writes them: ISO dates, with four-digit years before 1000 too.
    """
    first, last = start.date(), (end - dt.timedelta(microseconds=1)).date()
    return [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]


class UsageRepository:
    def __init__(self, db: Database):
        self._requests = db.botrequests

    def summary(self, visibility: Visibility, query: UsageQuery) -> Usage:
        start, end, group_by = query.start, query.end, query.group_by
        rows = self._requests.aggregate(pipeline(visibility, start, end, group_by))
        results = [
            {
                "key": _key(row, group_by),
                "requests": row["requests"],
                "credits": row["credits"],
            }
            for row in rows
        ]
        if group_by == "day":
            found = {row["key"]: row for row in results}
            results = [
                found.get(day, {"key": day, "requests": 0, "credits": 0})
                for day in _days(start, end)
            ]
        return Usage(start, end, group_by, results)
