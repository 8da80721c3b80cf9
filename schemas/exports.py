"""Exports of requests (docs/api.md#exports): the query string of an export.

An export is the request list's filters and order over a period, without paging. Its
`fields` names item fields in NDJSON and columns in CSV (`COLUMNS`: `bot` gives the three
`bot…` columns), so they are checked once the format is known (`ExportQuery.in_format`):
the format may come from `Accept`, which web/export_files.py reads. The file itself is
written there too.
"""

from dataclasses import dataclass

from marshmallow import post_load
from marshmallow.validate import OneOf

from domain.errors import InvalidParameter
from repositories.bot_requests import BotRequestListQuery
from schemas.bot_requests import BotRequestSchema
from schemas.periods import MAX_PERIOD_DAYS, PERIOD_DAYS, period
from schemas.queries import RequestFiltersSchema
from schemas.query_fields import ObjectIdString, QueryText, QueryTimestamp
from schemas.selection import FieldSelection, names, outside, stored_paths

# Requests per batch: one keyset page, read within the request deadline, held at a time.
BATCH = 1000

FORMATS = ("ndjson", "csv")

# CSV column: the item field it comes from, and the key within that field's summary.
COLUMNS = {
    "id": ("id", None),
    "botSlug": ("bot", "slug"),
    "botName": ("bot", "name"),
    "botCreditCost": ("bot", "creditCost"),
    "createdByName": ("createdBy", "name"),
    "organizationName": ("organization", "name"),
    "ip": ("ip", None),
    "createdAt": ("createdAt", None),
    "updatedAt": ("updatedAt", None),
    "inputs": ("inputs", None),
    "response": ("response", None),
}
ITEM_FIELDS = names(BotRequestSchema)


@dataclass(frozen=True)
class Export:
    """An export as asked: its format, the query of its batches, and the selected names
    (item fields for NDJSON, columns for CSV; None: all)."""

    format: str
    query: BotRequestListQuery
    selection: frozenset[str] | None

    def filename(self, scope: str) -> str:
        moments = (self.query.created_from, self.query.created_to)
        period = "-".join(f"{moment:%Y%m%dT%H%M%SZ}" for moment in moments)
        return f"bot-requests-{scope}-{period}.{self.format}"


@dataclass(frozen=True)
class ExportQuery:
    """An export's query string as loaded: the format, if it names one, and the rest."""

    format: str | None
    selection: frozenset[str] | None
    filters: dict

    def in_format(self, format_: str) -> Export:
        """The export in `format_`, once its selection is known to name that format's
        fields; a 400 naming `fields` otherwise."""
        selection = self.selection
        problem = outside(selection, ITEM_FIELDS if format_ == "ndjson" else tuple(COLUMNS))
        if problem:
            raise InvalidParameter("fields", f"{problem} (format {format_})")
        read = selection
        if format_ == "csv" and selection is not None:
            read = frozenset(COLUMNS[column][0] for column in selection)
        if read is not None:
            read |= {"createdAt"}  # repositories/exports.py reads it to see arrays
        query = BotRequestListQuery(
            page=None,
            limit=BATCH,
            pagination="keyset",
            count="none",
            reads=stored_paths(BotRequestSchema, read),
            whole=read is None,
            **self.filters,
        )
        return Export(format_, query, selection)


class RequestExportQuerySchema(RequestFiltersSchema):
    fields = FieldSelection(
        dict.fromkeys([*ITEM_FIELDS, *COLUMNS]),
        description="Comma-separated names to export (`id` always is): in NDJSON the item's "
        f"fields ({', '.join(ITEM_FIELDS)}), in CSV its columns ({', '.join(COLUMNS)}). Empty "
        "or left out: all.",
    )
    created_from = QueryTimestamp(
        data_key="createdFrom",
        metadata={
            "description": "The period's start (inclusive): ISO 8601 with `Z` or an offset, or "
            f"a date alone for midnight UTC; by default {PERIOD_DAYS} days before `createdTo`."
        },
    )
    created_to = QueryTimestamp(
        data_key="createdTo",
        metadata={
            "description": "The period's end (exclusive), written as `createdFrom`; by default "
            f"now. At most {MAX_PERIOD_DAYS} days after `createdFrom`."
        },
    )
    format = QueryText(
        validate=OneOf(FORMATS),
        metadata={
            "description": "`ndjson` or `csv`; when left out, what `Accept` prefers of "
            "`application/x-ndjson` and `text/csv`, else `ndjson`."
        },
    )

    @post_load
    def export(self, data, **kwargs) -> ExportQuery:
        start, end = period(
            data.get("created_from"), data.get("created_to"), ("createdFrom", "createdTo")
        )
        filters = {
            "sort": data["sort"],
            "name": data.get("name"),
            "bot": data.get("bot"),
            "created_from": start,
            "created_to": end,
            "created_by": data.get("created_by"),
        }
        return ExportQuery(data.get("format"), data.get("fields"), filters)


class OrganizationRequestExportQuerySchema(RequestExportQuerySchema):
    created_by = ObjectIdString(
        data_key="createdBy",
        metadata={"description": "A user's id: only the requests that user made."},
    )
