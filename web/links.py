"""`Link` headers on every page of a list (contract 7.2), as GitHub sends them (RFC 8288).

Each link is the request's own URL with only `page` (or a keyset page's `cursor`) changed,
so a client follows `next` without rebuilding its query. Scheme and host are the request's:
behind trusted proxies, ProxyFix has already put the forwarded scheme in place.
"""

from urllib.parse import quote, urlencode

from flask import request

HEADER = "Link"


def _url(name: str, value) -> str:
    """The other parameters keep their order; `name` keeps its place, or comes last, or is
    left out when `value` is None."""
    pairs = list(request.args.items(multi=True))
    if name in request.args:
        pairs = [(key, value if key == name else given) for key, given in pairs]
    else:
        pairs.append((name, value))
    pairs = [(key, given) for key, given in pairs if given is not None]
    query = urlencode(pairs, quote_via=quote)
    return f"{request.base_url}?{query}" if query else request.base_url


def _header(relations: dict, name: str) -> str:
    return ", ".join(f'<{_url(name, value)}>; rel="{rel}"' for rel, value in relations.items())


def header(page: int, total_pages: int | None, full: bool) -> str:
    """`first` always; `prev` after page 1; `next` before the last page, or, uncounted
    (`count=none`), after a `full` page; `last` if any was counted."""
    relations = {"first": 1}
    if page > 1:
        relations["prev"] = page - 1
    if page < total_pages if total_pages is not None else full:
        relations["next"] = page + 1
    if total_pages:
        relations["last"] = total_pages
    return _header(relations, "page")


def keyset_header(cursor: str | None) -> str:
    """`first` (the URL without `cursor`), and `next` while there is a next page (7.4)."""
    relations = {"first": None}
    if cursor is not None:
        relations["next"] = cursor
    return _header(relations, "cursor")
