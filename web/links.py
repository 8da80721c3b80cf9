"""`Link` headers on every page of a list (docs/api.md#paging-links), as GitHub sends them (RFC
8288).

Each link is the request's own URL with only `page` (or a keyset page's `cursor`) changed,
so a client follows `next` without rebuilding its query. Scheme and host are the request's:
behind trusted proxies, ProxyFix has already put the forwarded scheme in place.
"""

from urllib.parse import quote, urlencode

from flask import request

from schemas.pages import Links

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


def header(links: Links) -> str:
    """The header of the pages `links` names (schemas/pages.py decides which)."""
    return ", ".join(
        f'<{_url(links.parameter, value)}>; rel="{rel}"' for rel, value in links.relations.items()
    )
