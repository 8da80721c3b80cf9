"""An export's file (docs/api.md#exports): its format, negotiated from `Accept` when its query
names none, and its text, batch by batch, as NDJSON or CSV.

The rows come from the same BotRequest items as the list's, after the same field selection;
in CSV each column is an item field or a key of its summary (schemas/exports.py, COLUMNS).
"""

import csv
import io
import json

from flask import request

from schemas.bot_requests import BotRequestSchema
from schemas.exports import COLUMNS, Export, ExportQuery
from schemas.selection import keep

MEDIA_TYPES = {"ndjson": "application/x-ndjson", "csv": "text/csv"}
# What a spreadsheet would run as a formula when a cell starts with it.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_ITEMS = BotRequestSchema(many=True)


def negotiated(asked: ExportQuery) -> Export:
    """The export in the format its query names, else the one `Accept` prefers; NDJSON when
    it names neither."""
    if asked.format is not None:
        return asked.in_format(asked.format)
    preferred = request.accept_mimetypes.best_match(
        list(MEDIA_TYPES.values()), default=MEDIA_TYPES["ndjson"]
    )
    return asked.in_format(next(name for name, media in MEDIA_TYPES.items() if media == preferred))


def head(export: Export) -> str:
    """What the file starts with: CSV's header row."""
    return _csv_rows([_csv_columns(export.selection)]) if export.format == "csv" else ""


def writer(export: Export):
    """What writes a batch of stored requests as the file's text."""
    if export.format == "csv":
        columns = _csv_columns(export.selection)
        return lambda documents: _csv_batch(documents, columns)
    return lambda documents: _ndjson(documents, export.selection)


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
