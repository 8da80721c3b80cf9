"""A list's page as it is sent: its envelope (offset or keyset), its position made into the
cursor, and the pages its `Link` header points to (docs/api.md#paging-links,
docs/api.md#keyset-pages).

`sent` is where a page the repository read becomes what the answer holds; the web layer then
only writes the `Link` URLs (web/links.py) and dumps the body with `page_schema`'s envelope.
"""

import functools
from dataclasses import dataclass

from marshmallow import Schema, fields, post_dump

from repositories.pages import KeysetPage, OffsetPage
from schemas import cursors
from schemas.selection import Selected, keep


class _Envelope(Schema):
    """A list's envelope: its totals are left out where no count was run (`count=none`)."""

    @post_dump
    def leave_out_uncounted(self, data, **kwargs):
        for key in ("totalPages", "totalResults"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


@dataclass(frozen=True)
class KeysetBody:
    """A keyset page as it is sent: its position already made into the opaque cursor."""

    results: list
    limit: int
    next_cursor: str | None
    total_results: int | None
    total_pages: int | None


@dataclass(frozen=True)
class Links:
    """The pages a page's `Link` header points to: each relation's value of `parameter`
    (`page` or `cursor`), None for the list's URL without it."""

    parameter: str
    relations: dict


def sent(
    page: OffsetPage | KeysetPage, sort: list, cursor_scope: str
) -> tuple[OffsetPage | KeysetBody, Links]:
    """(body, links) of a page: a keyset page's resume position becomes the cursor of
    `next` for the list `cursor_scope` (schemas/cursors.py)."""
    if isinstance(page, KeysetPage):
        cursor = None if page.next is None else cursors.encode(page.next, sort, cursor_scope)
        body = KeysetBody(page.results, page.limit, cursor, page.total_results, page.total_pages)
        return body, Links("cursor", _keyset_relations(cursor))
    full = len(page.results) == page.limit
    return page, Links("page", _offset_relations(page.page, page.total_pages, full))


def _offset_relations(page: int, total_pages: int | None, full: bool) -> dict:
    """`first` always; `prev` after page 1; `next` before the last page, or, uncounted
    (`count=none`), after a `full` page; `last` if any was counted."""
    relations = {"first": 1}
    if page > 1:
        relations["prev"] = page - 1
    if page < total_pages if total_pages is not None else full:
        relations["next"] = page + 1
    if total_pages:
        relations["last"] = total_pages
    return relations


def _keyset_relations(cursor: str | None) -> dict:
    """`first` (the URL without `cursor`), and `next` while there is a next page."""
    relations = {"first": None}
    if cursor is not None:
        relations["next"] = cursor
    return relations


class PageSchema(Schema):
    """The base of every list envelope (`page_schema`).

    It dumps an offset page or a keyset page (`KeysetBody`) with its own envelope, and the
    OpenAPI document shows it as either (`documented_as`).
    """

    offset: type[Schema]
    keyset: type[Schema]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._offset, self._keyset = self.offset(), self.keyset()

    def dump(self, obj, *, many=None):
        if isinstance(obj, Selected):
            page = self.dump(obj.value)
            page["results"] = [keep(item, obj.fields) for item in page["results"]]
            return page
        return (self._keyset if isinstance(obj, KeysetBody) else self._offset).dump(obj)


_TOTALS = {
    "totalPages": fields.Integer(
        attribute="total_pages", metadata={"description": "Left out with `count=none`."}
    ),
    "totalResults": fields.Integer(
        attribute="total_results", metadata={"description": "Left out with `count=none`."}
    ),
}


@functools.cache
def page_schema(item_schema: type[Schema]) -> type[PageSchema]:
    """The list envelopes around `item_schema`, named after it for the OpenAPI document: one
    class per item schema, which lists of the same items share."""
    name = item_schema.__name__.removesuffix("Schema")
    results = fields.List(fields.Nested(item_schema), required=True)
    offset = _Envelope.from_dict(
        {
            "results": results,
            "page": fields.Integer(required=True),
            "limit": fields.Integer(required=True),
            **_TOTALS,
        },
        name=f"{name}PageSchema",
    )
    keyset = _Envelope.from_dict(
        {
            "results": results,
            "limit": fields.Integer(required=True),
            "nextCursor": fields.String(
                attribute="next_cursor",
                required=True,
                allow_none=True,
                metadata={"description": "The next page's `cursor`; null on the last page."},
            ),
            **_TOTALS,
        },
        name=f"{name}KeysetPageSchema",
    )
    return type(
        f"{name}ListSchema",
        (PageSchema,),
        {"offset": offset, "keyset": keyset, "documented_as": {"oneOf": [offset, keyset]}},
    )
