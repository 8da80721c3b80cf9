"""Bot requests: the lists of 4.1 and 4.2 and the single requests of 4.3 and 4.4."""

from bson import ObjectId
from pymongo.database import Database

from access.exceptions import NotFound
from access.policy import Visibility
from repositories.paging import Page, contains, fetch_page, get_one, lookup_one

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


class BotRequestRepository:
    def __init__(self, db: Database):
        self._db = db
        self._requests = db.botrequests

    def find_page(
        self,
        visibility: Visibility,
        *,
        sort: list[tuple[str, int]],
        page: int,
        limit: int,
        name: str | None = None,
    ) -> Page:
        """The name filter becomes the matching bots' ids, which trail the requests' indexes."""
        filters = {}
        if name:
            filters["bot"] = {"$in": self._db.bots.distinct("_id", {"name": contains(name)})}
        return fetch_page(
            self._requests, visibility, filters, sort=sort, page=page, limit=limit, joins=_JOINS
        )

    def get(self, visibility: Visibility, request_id: ObjectId) -> dict:
        bot_request = get_one(self._requests, visibility, {"_id": request_id}, _JOINS)
        if bot_request is None:
            raise NotFound("No bot request with this id.")
        return bot_request
