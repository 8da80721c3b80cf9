"""Exports of requests (contract 7.6): the query, and a batch of requests as NDJSON or CSV.

An export is the request list's filters and order over a period, without paging; the rows
come from the same BotRequest items as the list's, after the same field selection. In CSV,
`fields` names columns, which come from the items' fields (`bot` gives the three `bot…`
columns).
"""

import csv
import io
import json
from dataclasses import dataclass

from flask import request
from marshmallow import ValidationError, post_load
from marshmallow.validate import OneOf

from repositories.bot_requests import BotRequestListQuery
from schemas.bot_requests import BotRequestSchema
from schemas.periods import period
from schemas.queries import RequestFiltersSchema
from schemas.query_fields import ObjectIdString, QueryText
from schemas.selection import FieldSelection, keep, names, outside, stored_paths

# Requests per batch: one keyset page, read within the request deadline, held at a time.
BATCH = 1000

MEDIA_TYPES = {"ndjson": "application/x-ndjson", "csv": "text/csv"}

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
# What a spreadsheet would run as a formula when a cell starts with it.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Export:
    """An export as asked: its format, the query of its batches, and the selected names
    (item fields for NDJSON, columns for CSV; None: all)."""

    format: str
    query: BotRequestListQuery
    selection: frozenset[str] | None

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.format]

    def filename(self, scope: str) -> str:
        moments = (self.query.created_from, self.query.created_to)
        period = "-".join(f"{moment:%Y%m%dT%H%M%SZ}" for moment in moments)
        return f"bot-requests-{scope}-{period}.{self.format}"

    def head(self) -> str:
        """What the file starts with: CSV's header row."""
        return _csv_rows([_csv_columns(self.selection)]) if self.format == "csv" else ""

    def write(self, documents: list[dict]) -> str:
        if self.format == "csv":
            return _csv_batch(documents, _csv_columns(self.selection))
        return _ndjson(documents, self.selection)


def _negotiated() -> str:
    """The format the `Accept` header prefers; NDJSON when it names neither."""
    preferred = request.accept_mimetypes.best_match(
        list(MEDIA_TYPES.values()), default=MEDIA_TYPES["ndjson"]
    )
    return next(name for name, media_type in MEDIA_TYPES.items() if media_type == preferred)


class RequestExportQuerySchema(RequestFiltersSchema):
    fields = FieldSelection(
        dict.fromkeys([*ITEM_FIELDS, *COLUMNS]),
        description="Comma-separated names to export (`id` always is): in NDJSON the item's "
        f"fields ({', '.join(ITEM_FIELDS)}), in CSV its columns ({', '.join(COLUMNS)}). Empty "
        "or left out: all.",
    )
    format = QueryText(
        validate=OneOf(list(MEDIA_TYPES)),
        metadata={
            "description": "`ndjson` or `csv`; when left out, what `Accept` prefers of "
            "`application/x-ndjson` and `text/csv`, else `ndjson`."
        },
    )

    @post_load
    def export(self, data, **kwargs) -> Export:
        start, end = period(
            data.get("created_from"), data.get("created_to"), ("createdFrom", "createdTo")
        )
        format_ = data.get("format") or _negotiated()
        selection = data.get("fields")
        problem = outside(selection, ITEM_FIELDS if format_ == "ndjson" else tuple(COLUMNS))
        if problem:
            raise ValidationError(f"{problem} (format {format_})", "fields")
        read = selection
        if format_ == "csv" and selection is not None:
            read = frozenset(COLUMNS[column][0] for column in selection)
        if read is not None:
            read |= {"createdAt"}  # repositories/exports.py reads it to see arrays
        query = BotRequestListQuery(
            sort=data["sort"],
            page=None,
            limit=BATCH,
            pagination="keyset",
            count="none",
            reads=stored_paths(BotRequestSchema, read),
            name=data.get("name"),
            bot=data.get("bot"),
            created_from=start,
            created_to=end,
            created_by=data.get("created_by"),
        )
        return Export(format_, query, selection)


class OrganizationRequestExportQuerySchema(RequestExportQuerySchema):
    created_by = ObjectIdString(
        data_key="createdBy",
        metadata={"description": "A user's id: only the requests that user made."},
    )


_ITEMS = BotRequestSchema(many=True)


def _ndjson(documents: list[dict], selection: frozenset[str] | None) -> str:
    """One line per request, the list item's shape: JSON, which escapes line breaks."""
    items = _ITEMS.dump(documents)
    if selection is not None:
        items = [keep(item, selection) for item in items]
    return "".join(_compact(item) + "\n" for item in items)


def _csv_columns(selection: frozenset[str] | None) -> list[str]:
    return [column for column in COLUMNS if selection is None or column in selection]


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cell(value) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else _compact(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv_rows(rows: list[list[str]]) -> str:
    """RFC 4180: CRLF line ends, quotes where a cell needs them."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue()


def _csv_batch(documents: list[dict], columns: list[str]) -> str:
    rows = []
    for item in _ITEMS.dump(documents):
        row = []
        for column in columns:
            field, key = COLUMNS[column]
            value = item.get(field)
            if key is not None:
                value = None if value is None else value.get(key)
            row.append(_cell(value))
        rows.append(row)
    return _csv_rows(rows)
