"""Bot requests: the lists of 4.1 and 4.2, the single requests of 4.3 and 4.4, and the
batches of exports (docs/api.md#exports); each read without a join, its summaries put in after
(repositories/summaries.py)."""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace

from bson import ObjectId
from pymongo.database import Database

from access.policy import Visibility
from domain import timestamps
from domain.errors import NotFound
from repositories.matching import matches
from repositories.pages import KeysetPage, ListPlan, ListQuery, OffsetPage
from repositories.pipelines import read_page
from repositories.reads import contains, fields_of, get_one
from repositories.summaries import Summaries


def _projection(reads: frozenset[str]) -> dict:
    """The fields of what the view or selection `reads`, a reference as its id: a reference
    that is not read is not summarized either (docs/api.md#field-selection)."""
    return dict.fromkeys(sorted(fields_of(reads)), 1)


@dataclass(frozen=True, kw_only=True)
class BotRequestListQuery(ListQuery):
    """A bot request list's parameters (schemas/queries.py builds it).

    `reads`: the stored paths that make the answer's items, or their selection; `whole`:
    they are all of a request's, which an export's windows then read without a projection
    (repositories/exports.py says why)."""

    name: str | None = None
    bot: str | None = None
    created_from: dt.datetime | None = None
    created_to: dt.datetime | None = None
    created_by: ObjectId | None = None
    reads: frozenset[str]
    whole: bool = False


class BotRequestRepository:
    def __init__(self, db: Database, summaries: Summaries):
        self._db = db
        self._requests = db.botrequests
        self._summaries = summaries

    def find_page(
        self, visibility: Visibility, query: BotRequestListQuery, *, summarized: bool = True
    ) -> OffsetPage | KeysetPage:
        """The page `query` asks for; without its summaries when not `summarized` (an
        export's batch, `summarized` as it is written)."""
        plan = ListPlan.of(visibility, self._filters(query), query, _projection(query.reads))
        page = read_page(self._requests, plan)
        if summarized:
            self._summaries.fill(page.results, fields_of(query.reads))
        return page

    def first(self, visibility: Visibility, query: BotRequestListQuery) -> list[dict]:
        """The query's first `limit` requests in its order, without their summaries: an
        export's window (repositories/exports.py)."""
        first = replace(query, pagination="offset", cursor=None, page=1, count="none")
        projection = None if query.whole else _projection(query.reads)
        plan = ListPlan.of(visibility, self._filters(query), first, projection)
        return read_page(self._requests, plan).results

    def summarized(self, requests: list[dict], query: BotRequestListQuery) -> list[dict]:
        """`requests` read without their summaries, with the summaries the query reads."""
        return self._summaries.fill(requests, fields_of(query.reads))

    def _filters(self, query: BotRequestListQuery) -> dict:
        """Every one an indexed field of the requests (repositories/indexes.py)."""
        filters = {} if query.created_by is None else {"createdBy": query.created_by}
        bots = self._bots(query.bot, query.name)
        if bots is not None:
            filters["bot"] = bots
        created = timestamps.between(query.created_from, query.created_to)
        if created:
            filters["createdAt"] = created
        return filters

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

    def judge(
        self, visibility: Visibility, *, bot: str | None, created_by
    ) -> Callable[[dict], bool]:
        """Whether the caller may see a request as a document holds it, and the filters (a
        bot's slug, a creator) keep it: the list's filter, judged in memory
        (repositories/matching.py) for a live feed, on the request as a change left it,
        which the database may no longer hold (blueprints/feeds.py)."""
        if visibility.is_empty:
            return lambda document: False
        filters = {} if created_by is None else {"createdBy": created_by}
        if bot is not None:
            filters["bot"] = self._bots(bot, None)
        query = {"$and": [visibility.as_filter(), filters]}
        return lambda document: matches(query, document)

    def shown(self, documents: list[dict], reads: frozenset[str]) -> list[dict]:
        """`documents` as the list shows them: the fields `reads` names, with their
        summaries; `documents` themselves are left as they are."""
        fields = fields_of(reads)
        projected = [
            {name: value for name, value in document.items() if name == "_id" or name in fields}
            for document in documents
        ]
        return self._summaries.fill(projected, fields)

    def get(self, visibility: Visibility, request_id: ObjectId, reads: frozenset[str]) -> dict:
        projected = [{"$project": _projection(reads)}]
        bot_request = get_one(self._requests, visibility, {"_id": request_id}, projected)
        if bot_request is None:
            raise NotFound("No bot request with this id.")
        return self._summaries.fill([bot_request], fields_of(reads))[0]
