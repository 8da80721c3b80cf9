"""Bots: the lists of 4.5 and 4.6 and the single bots of 4.7 and 4.8."""

from dataclasses import dataclass

from bson import ObjectId
from pymongo.database import Database

from access.policy import BotAccess, Visibility
from domain.errors import NotFound
from repositories.pages import KeysetPage, ListPlan, ListQuery, OffsetPage
from repositories.pipelines import read_page
from repositories.reads import (
    contains,
    equals_ignoring_case,
    fields_of,
    get_one,
    lookup_all,
    lookup_one,
)


def _projection(reads: frozenset[str], *also: str) -> dict:
    """Only what the view or its selection shows (docs/api.md#field-selection), `also` besides:
    another writer's bot may hold much more. A summary is joined whole, after it."""
    return dict.fromkeys(sorted({*fields_of(reads), *also}), 1)


@dataclass(frozen=True, kw_only=True)
class BotListQuery(ListQuery):
    """A bot list's parameters (schemas/queries.py builds it); `custom` is the policy's.

    `reads`: the stored fields that make the answer's items, or their selection."""

    custom: bool = False
    name: str | None = None
    tags: list[ObjectId] | None = None
    service_name: str | None = None
    service_id: ObjectId | None = None
    service_slug: str | None = None
    service_directory: str | None = None
    reads: frozenset[str]


@dataclass(frozen=True)
class OneBot:
    """4.7's bot, read for its view: with its service and tags when `detailed`."""

    document: dict
    detailed: bool


class BotRepository:
    def __init__(self, db: Database):
        self._db = db
        self._bots = db.bots

    def find_page(self, visibility: Visibility, query: BotListQuery) -> OffsetPage | KeysetPage:
        filters = {"name": contains(query.name)} if query.name else {}
        if query.tags:
            filters["tags"] = {"$in": query.tags}
        services = self._service_filter(
            query.service_name, query.service_id, query.service_slug, query.service_directory
        )
        if services is not None:
            filters["service"] = services
        plan = ListPlan.of(visibility, filters, query, _projection(query.reads))
        return read_page(self._bots, plan)

    def _service_filter(self, service_name, service_id, slug, directory) -> dict | ObjectId | None:
        """The services that match every given criterion, resolved before the bot query."""
        criteria = {}
        if service_id is not None:
            criteria["_id"] = service_id
        if service_name:
            criteria["name"] = equals_ignoring_case(service_name)
        if slug:
            criteria["slug"] = slug
        if directory:
            criteria["directory"] = directory
        if not criteria:
            return None
        if criteria.keys() == {"_id"}:
            return service_id
        return {"$in": self._db.services.distinct("_id", criteria)}

    def get(self, access: BotAccess, slug: str, reads: frozenset[str]) -> OneBot:
        """`reads`: the stored fields of the caller's view, or of its selection."""
        if access.detailed:
            return OneBot(self._detailed(access.visibility, slug, reads), detailed=True)
        return OneBot(self._one(access.visibility, slug, [{"$project": _projection(reads)}]), False)

    def _detailed(self, visibility: Visibility, slug: str, reads: frozenset[str]) -> dict:
        """The bot as `reads` says, with its service and tags when they are among them."""
        stages, read = [{"$project": _projection(reads)}], fields_of(reads)
        if "service" in read:
            stages += lookup_one("service", "services")
        if "tags" in read:
            stages.append(lookup_all("tags", "tags", "tagDocuments"))
        bot = self._one(visibility, slug, stages)
        if "tagDocuments" in bot:
            by_id = {tag["_id"]: tag for tag in bot.pop("tagDocuments")}
            bot["tags"] = [by_id[tag_id] for tag_id in bot.get("tags") or () if tag_id in by_id]
        return bot

    def get_with_organization(
        self, visibility: Visibility, slug: str, reads: frozenset[str]
    ) -> dict:
        """4.8: the bot beside the organization that owns it."""
        bot = self._one(
            visibility,
            slug,
            [
                {"$project": _projection(reads, "organization")},
                *lookup_one("organization", "organizations", "organizationDocument"),
            ],
        )
        organization = bot.pop("organizationDocument", None)
        if organization is None:
            raise NotFound("No such organization.")
        return {"bot": bot, "organization": organization}

    def _one(self, visibility: Visibility, slug: str, stages: list[dict]) -> dict:
        bot = get_one(self._bots, visibility, {"slug": slug}, stages)
        if bot is None:
            raise NotFound("No bot with this slug.")
        return bot
