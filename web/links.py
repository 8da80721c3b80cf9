"""`Link` headers on every page of a list (contract 7.2), as GitHub sends them (RFC 8288).

Each link is the request's own URL with only `page` changed, so a client follows `next`
without rebuilding its query. Scheme and host are the request's: behind trusted proxies,
ProxyFix has already put the forwarded scheme in place.
"""

from urllib.parse import quote, urlencode

from flask import request

HEADER = "Link"


def _url(page: int) -> str:
    """The other parameters keep their order; `page` keeps its place, or comes last."""
    pairs = list(request.args.items(multi=True))
    if "page" in request.args:
        pairs = [(key, page if key == "page" else value) for key, value in pairs]
    else:
        pairs.append(("page", page))
    return f"{request.base_url}?{urlencode(pairs, quote_via=quote)}"


def header(page: int, total_pages: int) -> str:
    """`first` always; `prev` after page 1; `next` before the last page; `last` if any."""
    relations = {"first": 1}
    if page > 1:
        relations["prev"] = page - 1
    if page < total_pages:
        relations["next"] = page + 1
    if total_pages:
        relations["last"] = total_pages
    return ", ".join(f'<{_url(number)}>; rel="{rel}"' for rel, number in relations.items())
