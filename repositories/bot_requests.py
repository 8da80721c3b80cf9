"""Bot requests: the lists of 4.1 and 4.2 and the single requests of 4.3 and 4.4."""

import datetime as dt
from dataclasses import dataclass

from bson import ObjectId
from pymongo.database import Database

from access.exceptions import NotFound
from access.policy import Visibility
from repositories.filters import contains
from repositories.keyset_pages import KeysetPage
from repositories.lists import fetch_list
from repositories.paging import Page, Paging, get_one
from repositories.stages import lookup_one

_JOINS = [
    *lookup_one("bot", "bots"),
    *lookup_one("createdBy", "users"),
    *lookup_one("organization", "organizations"),
    {
        "$project": {
            "bot.creditCost": 1,
            "bot.name": 1,
            "bot.slug": 1,
            "createdBy.name": 1,
            "organization.name": 1,
            "inputs": 1,
            "ip": 1,
            "response": 1,
            "createdAt": 1,
            "updatedAt": 1,
        }
    },
]


def stored_instant(moment: dt.datetime) -> dt.datetime:
    """The first whole millisecond at or after `moment`.

    BSON keeps milliseconds and the driver drops the rest, so a bound between two
    milliseconds would otherwise take in the one before it. For `$gte` and `$lt` alike, the
    next millisecond is the exact bound.
    """
    return moment + dt.timedelta(microseconds=-moment.microsecond % 1000)


@dataclass(frozen=True, kw_only=True)
class BotRequestQuery(Paging):
    """A bot request list's parameters (schemas/queries.py builds it)."""

    name: str | None = None
    bot: str | None = None
    created_from: dt.datetime | None = None
    created_to: dt.datetime | None = None
    created_by: ObjectId | None = None


class BotRequestRepository:
    def __init__(self, db: Database):
        self._db = db
        self._requests = db.botrequests

    def find_page(self, visibility: Visibility, query: BotRequestQuery) -> Page | KeysetPage:
        """Every filter is an indexed field of the requests (repositories/indexes.py).

        `createdBy` goes first: on the embedded engine, which plans on the first indexed
        field, one member's requests are usually fewer than the organization's.
        """
        narrow = {} if query.created_by is None else {"createdBy": query.created_by}
        filters = {}
        bots = self._bots(query.bot, query.name)
        if bots is not None:
            filters["bot"] = bots
        created = {}
        if query.created_from is not None:
            created["$gte"] = stored_instant(query.created_from)
        if query.created_to is not None:
            created["$lt"] = stored_instant(query.created_to)
        if created:
            filters["createdAt"] = created
        return fetch_list(self._requests, visibility, filters, query, narrow=narrow, joins=_JOINS)

    def _bots(self, slug: str | None, name: str | None) -> ObjectId | dict | None:
        """The bots that the slug and name filters leave, found first in one small lookup.

        A slug names at most one bot, an equality on `bot` that the indexes hold before the
        sort key; a name may name many, an `$in`.
        """
        criteria = {}
        if slug:
            criteria["slug"] = slug
        if name:
            criteria["name"] = contains(name)
        if not criteria:
            return None
        ids = self._db.bots.distinct("_id", criteria)
        if slug and ids:
            return ids[0]
        return {"$in": ids}

    def get(self, visibility: Visibility, request_id: ObjectId) -> dict:
        bot_request = get_one(self._requests, visibility, {"_id": request_id}, _JOINS)
        if bot_request is None:
            raise NotFound("No bot request with this id.")
        return bot_request
