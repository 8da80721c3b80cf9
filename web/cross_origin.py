"""Cross-origin reads: a dashboard served from another origin may call the API from the
browser when `CORS_ORIGINS` names that origin (docs/api.md#browsers-on-other-origins).

Off unless set: without it a browser keeps other origins' pages from reading any answer.
Flask-CORS answers the preflight and puts `Access-Control-*` on every answer, errors
included, so that a page can read a 401's or a 429's problem details too. Tokens travel in
`Authorization`, never in cookies, so credentials are not allowed, and `*` is safe to set.

A page reads only the response headers it is allowed to: those the OpenAPI document declares
(`ETag`, `Link`, the rate-limit fields, `X-Request-ID`, …) are exposed, read from the
document itself so that a header added there is exposed too.
"""

import re

from flask import Flask, Response, request
from flask_cors import CORS
from flask_smorest import Api

# How long a browser may keep a preflight's answer; Chromium keeps it two hours at most.
PREFLIGHT_SECONDS = 7200


def init_app(app: Flask, api: Api) -> None:
    """After the blueprints are registered: the document must list every path."""
    origins = app.config["CORS_ORIGINS"]
    if not origins:
        return
    anywhere = origins == ("*",)
    CORS(
        app,
        # Flask-CORS reads an origin with any of `*?$^[]()\` as a regular expression that
        # it matches from the start only: each is given as one that matches it alone.
        origins=["*"] if anywhere else [re.compile(re.escape(o) + r"\Z") for o in origins],
        send_wildcard=anywhere,  # `*` itself, not the page's origin echoed
        always_send=False,  # nothing for a request without `Origin`: not a browser's
        vary_header=False,  # `_varies_by_origin` says it on every answer
        methods=["GET", "HEAD", "OPTIONS"],
        expose_headers=sorted(_declared_headers(api.spec.to_dict())),
        max_age=PREFLIGHT_SECONDS,
        supports_credentials=False,
    )
    if not anywhere:
        app.after_request(_varies_by_origin)


def _varies_by_origin(response: Response) -> Response:
    """Every answer, allowed or not: the `Access-Control-*` fields depend on the page's
    origin, so a cache may not give one origin's answer to another (Flask-CORS says so only
    where several origins are allowed)."""
    response.vary.add("Origin")
    return response


def is_preflight() -> bool:
    """The browser's own question before a page's request, which holds no token: it reads
    nothing, and a rate limit would count it against every user behind the same address,
    once for each page a dashboard reads (web/rate_limits.py)."""
    return request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers


def _declared_headers(node) -> set[str]:
    """The names of the headers of every response object the document holds (one has a
    description and may have headers; `components.headers` has neither)."""
    if isinstance(node, list):
        return set().union(*map(_declared_headers, node))
    if not isinstance(node, dict):
        return set()
    response = "description" in node and isinstance(node.get("headers"), dict)
    names = set(node["headers"]) if response else set()
    return names.union(*map(_declared_headers, node.values()))
