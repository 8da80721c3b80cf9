"""What every blueprint shares: strict query parsing, and the Link header of a page."""

from functools import wraps

from marshmallow import ValidationError
from webargs.flaskparser import FlaskParser

from repositories.keyset_pages import KeysetPage
from schemas import cursors
from schemas.common import KeysetBody, PageSchema
from schemas.selection import selected
from web import links, openapi


class QueryParser(FlaskParser):
    """webargs' parser, made strict.

    A repeated parameter is refused instead of silently taking its first value, and the
    schemas' own `unknown = RAISE` applies, so an unknown parameter is a 400 naming it.
    """

    DEFAULT_VALIDATION_STATUS = 400

    def load_querystring(self, req, schema):
        repeated = sorted({key for key, values in req.args.lists() if len(values) > 1})
        if repeated:
            raise ValidationError({key: ["Given more than once."] for key in repeated})
        return req.args.to_dict()


class Blueprint(openapi.Blueprint):
    ARGUMENTS_PARSER = QueryParser(unknown=None)

    def response(self, status_code, schema=None, **kwargs):
        """flask-smorest's response; a page (`PageSchema`) also gets its `Link` header.

        Here the view's `Page`, with its totals, is at hand: no list view builds links. A
        `KeysetPage` is sent with its cursor and the keyset links. The query's field
        selection goes with the page to its dump.
        """
        if not (isinstance(schema, type) and issubclass(schema, PageSchema)):
            return super().response(status_code, schema, **kwargs)
        headers = {**(kwargs.pop("headers", None) or {}), links.HEADER: openapi.LINK_HEADER}
        dump = super().response(status_code, schema, headers=headers, **kwargs)

        def decorator(func):
            @wraps(func)
            def with_links(*args, **kwargs):
                page, query = func(*args, **kwargs), kwargs["query"]
                if isinstance(page, KeysetPage):
                    body, headers = _keyset_body(page, query.sort)
                else:
                    full = len(page.results) == page.limit
                    body = page
                    headers = {links.HEADER: links.header(page.page, page.total_pages, full)}
                return selected(body, query.fields), headers

            return dump(with_links)

        return decorator


def _keyset_body(page: KeysetPage, sort: list) -> tuple[KeysetBody, dict]:
    """The keyset page as sent: its resume position made into the cursor of `next`."""
    cursor = None if page.next is None else cursors.encode(page.next, sort)
    body = KeysetBody(page.results, page.limit, cursor, page.total_results, page.total_pages)
    return body, {links.HEADER: links.keyset_header(cursor)}
