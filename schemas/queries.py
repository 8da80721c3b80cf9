"""Query-string schemas of the lists and single items, typed (docs/api.md, Query parameters);
usage's are in schemas/usage.py, exports' in schemas/exports.py.

A list query loads into a `Listing`: the repository's own query object (`BotListQuery`...),
and the field selection that only the answer keeps.
"""

from dataclasses import dataclass
from typing import ClassVar

from marshmallow import RAISE, Schema, ValidationError, post_load, pre_load, validates_schema
from marshmallow.validate import OneOf, Range

from repositories.bot_requests import BotRequestListQuery
from repositories.bots import BotListQuery
from repositories.indexes import BOT_SORTS, REQUEST_SORTS
from repositories.pages import ListQuery, keyset_asked
from schemas.bot_requests import BotRequestSchema
from schemas.bots import BotDetailSchema, BotSchema, OrganizationBotListItemSchema
from schemas.cursors import CursorField
from schemas.query_fields import (
    CommaSeparatedIds,
    ObjectIdString,
    QueryBoolean,
    QueryInteger,
    QueryText,
    QueryTimestamp,
    SortBy,
)
from schemas.selection import FieldSelection, names, stored_paths

MAX_LIMIT = 100
MAX_OFFSET = 10_000_000


def built(query_type, schema: Schema, data: dict, **also):
    """The repository's query, from every field of the schema by name, given or not, but the
    field selection (`fields`), and `also`: a field that either side renames fails every
    load, not only those that give the parameter.

    A keyset cursor becomes its position once it is known to be made for this order."""
    cursor = data.get("cursor")
    if cursor is not None:
        if cursor.sort != data["sort"]:
            raise ValidationError({"cursor": ["Made for another sortBy: start again."]})
        data = {**data, "cursor": cursor.resume}
    names = [name for name in schema.load_fields if name != "fields"]
    return query_type(**{name: data.get(name) for name in names}, **also)


@dataclass(frozen=True)
class Listing:
    """A list's query string as loaded: the repository's query, which reads the stored paths
    of the selection (`reads`), and the selection the answer keeps (None: every field)."""

    query: ListQuery
    selection: frozenset[str] | None


class StrictQuerySchema(Schema):
    """Known parameters only: an unknown one is a 400 naming it.

    As it is, it takes no parameter: the query of the single-item endpoints.

    `EMPTY_LOADS_ALIKE`: an empty query string always loads to the same (frozen) query, since
    no default depends on the moment, as the periods of usage and exports do; the parser then
    loads it once (web/blueprint.py).
    """

    EMPTY_LOADS_ALIKE: ClassVar[bool] = False

    class Meta:
        unknown = RAISE

    error_messages = {"unknown": "Unknown parameter."}


class BotRequestItemQuerySchema(StrictQuerySchema):
    """4.3 and 4.4: a field selection (docs/api.md#field-selection)."""

    EMPTY_LOADS_ALIKE = True
    fields = FieldSelection(names(BotRequestSchema))


class BotItemQuerySchema(StrictQuerySchema):
    """4.7: the names of the admin view; a caller gets those of its own (blueprints/bots.py)."""

    EMPTY_LOADS_ALIKE = True
    fields = FieldSelection(names(BotDetailSchema))


class OrganizationBotItemQuerySchema(StrictQuerySchema):
    """4.8: a selection of the bot's fields."""

    EMPTY_LOADS_ALIKE = True
    fields = FieldSelection(names(BotSchema))


class EmptyIsUnset(StrictQuerySchema):
    @pre_load
    def drop_empty_values(self, data, **kwargs):
        """An empty value (`name=`) means the parameter was not given.

        Only for known parameters: an unknown one stays, to be refused even when empty.
        """
        known = {field.data_key or name for name, field in self.load_fields.items()}
        return {key: value for key, value in data.items() if value != "" or key not in known}


class ListQuerySchema(EmptyIsUnset):
    """A list's paging. Each list's schema names its items (`item`) and the list its cursors
    are made for (`cursor_scope`, schemas/cursors.py)."""

    EMPTY_LOADS_ALIKE = True
    item: type[Schema]
    cursor_scope: str

    # No default in the document: a generated client would then send `page=1` on every
    # request, keyset ones included, which take no page.
    page = QueryInteger(
        validate=Range(min=1),
        metadata={"description": "Page number, from 1 (the first when not given)."},
    )
    limit = QueryInteger(
        load_default=10,
        validate=Range(min=1, max=MAX_LIMIT),
        metadata={"description": f"Items per page, 1 to {MAX_LIMIT}."},
    )

    pagination = QueryText(
        validate=OneOf(["offset", "keyset"]),
        metadata={
            "description": "`offset` (the default): numbered pages. `keyset`: pages that follow "
            "`nextCursor`, each for the cost of the first, whatever its depth."
        },
    )
    cursor = CursorField(
        metadata={
            "description": "A keyset page's `nextCursor`: the page after it (implies "
            "`pagination=keyset`). Repeat the other parameters with it, as `Link: next` does."
        },
    )
    count = QueryText(
        validate=OneOf(["exact", "none"]),
        metadata={
            "description": "`exact`: the totals and `last` link (the default of offset pages). "
            "`none`: no count is run, and they are left out (the default of keyset pages)."
        },
    )

    @validates_schema
    def one_way_of_paging(self, data, **kwargs):
        keyset = keyset_asked(data.get("pagination"), data.get("cursor"))
        if keyset and "page" in data:
            raise ValidationError("Keyset pages have no number: leave out page.", "page")
        if data.get("cursor") is not None and data.get("pagination") == "offset":
            raise ValidationError("Offset pages take no cursor.", "cursor")
        if not keyset and (data.get("page", 1) - 1) * data["limit"] > MAX_OFFSET:
            raise ValidationError(f"(page - 1) * limit must not exceed {MAX_OFFSET}.", "page")


def _name():
    return QueryText(metadata={"description": "Case-insensitive substring of the bot's name."})


def _tags():
    return CommaSeparatedIds(
        metadata={"description": "Comma-separated tag ids; a bot matches if it has any of them."}
    )


def _sort(attributes: tuple[str, ...], default: list[tuple[str, int]]):
    return SortBy(
        attributes,
        data_key="sortBy",
        load_default=default,
        metadata={
            "description": "Comma-separated `attr[:asc|:desc]`; ties break on id. "
            f"Attributes: {', '.join(attributes)}."
        },
    )


class RequestFiltersSchema(EmptyIsUnset):
    """The filters and order of a request list (4.1, 4.2), which its export shares
    (docs/api.md#exports)."""

    name = _name()
    sort = _sort(REQUEST_SORTS, [("createdAt", -1)])
    bot = QueryText(metadata={"description": "A bot's slug: only requests of that bot."})
    created_from = QueryTimestamp(
        data_key="createdFrom",
        metadata={
            "description": "Only requests created at or after this instant: ISO 8601 with `Z` "
            "or an offset, or a date alone for midnight UTC."
        },
    )
    created_to = QueryTimestamp(
        data_key="createdTo",
        metadata={
            "description": "Only requests created before this instant (exclusive), written "
            "as `createdFrom`; it must be later than `createdFrom`."
        },
    )

    @validates_schema
    def ordered_period(self, data, **kwargs):
        start, end = data.get("created_from"), data.get("created_to")
        if start is not None and end is not None and not start < end:
            raise ValidationError("Must be later than createdFrom.", "createdTo")


class BotRequestListQuerySchema(ListQuerySchema, RequestFiltersSchema):
    item = BotRequestSchema
    cursor_scope = "bot_requests.list_bot_requests"
    fields = FieldSelection(names(item))

    @post_load
    def query(self, data, **kwargs) -> Listing:
        reads = stored_paths(self.item, data.get("fields"))
        return Listing(built(BotRequestListQuery, self, data, reads=reads), data.get("fields"))


class OrganizationBotRequestListQuerySchema(BotRequestListQuerySchema):
    cursor_scope = "bot_requests.list_organization_bot_requests"
    created_by = ObjectIdString(
        data_key="createdBy",
        metadata={"description": "A user's id: only the requests that user made."},
    )


class OrganizationBotListQuerySchema(ListQuerySchema):
    item = OrganizationBotListItemSchema
    cursor_scope = "bots.list_organization_bots"
    fields = FieldSelection(names(item))
    name = _name()
    tags = _tags()
    sort = _sort(BOT_SORTS, [("name", 1)])

    @post_load
    def query(self, data, **kwargs) -> Listing:
        reads = stored_paths(self.item, data.get("fields"))
        return Listing(built(BotListQuery, self, data, reads=reads), data.get("fields"))


class BotListQuerySchema(OrganizationBotListQuerySchema):
    item = BotSchema
    cursor_scope = "bots.list_bots"
    fields = FieldSelection(names(item))
    custom = QueryBoolean(
        load_default=False,
        metadata={"description": "Only bots of the caller's organizations."},
    )
    service_name = QueryText(
        data_key="service", metadata={"description": "Service name, case-insensitive, exact."}
    )
    service_id = ObjectIdString(data_key="serviceId", metadata={"description": "Service id."})
    service_slug = QueryText(data_key="serviceSlug", metadata={"description": "Service slug."})
    service_directory = QueryText(
        data_key="serviceDirectory", metadata={"description": "Service directory."}
    )
