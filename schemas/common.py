"""The page envelope and the error body shared by every endpoint."""

from dataclasses import dataclass

from marshmallow import Schema, fields, post_dump

from schemas.selection import Selected, keep


class ErrorSchema(Schema):
    code = fields.Integer(required=True, metadata={"description": "The HTTP status."})
    message = fields.String(required=True, metadata={"description": "A readable sentence."})
    details = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "On a 400: the messages for each offending parameter."},
    )


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


class PageSchema(Schema):
    """The base of every list envelope (`page_schema`), by which a blueprint knows a page.

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


def page_schema(item_schema: type[Schema]) -> type[PageSchema]:
    """The list envelopes around `item_schema`, named after it for the OpenAPI document."""
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
