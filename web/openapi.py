"""The OpenAPI document's shared parts: settings, components and field types.

The document is also the source clients are generated from (docs/api.md, Clients), so every
operation carries an `operationId` (the generated method's name, part of the client's
interface: never rename one), a summary and a description from its view's docstring; tags
carry their blueprint's description, and `servers` is the host that serves the document.

The views document their own query and body; what every operation shares (the Bearer
scheme, ETag and 304, X-Request-ID, rate limit headers and 429, 405, 401 and 503 behind
authentication) happens in hooks around the views: its components are written here, once,
and `web/blueprint.py` refers each operation to them. So are our fields' types.
"""

import flask_smorest
from apispec.ext.marshmallow.field_converter import make_type_list
from flask import Flask

from runtime.bearer_tokens import QUERY_TOKEN
from schemas.cursors import MAX_LENGTH as CURSOR_LENGTH
from schemas.cursors import CursorField
from schemas.fields import BsonNumber, IdText, TimestampField
from schemas.query_fields import CommaSeparatedIds, ObjectIdString, QueryText, SortBy
from schemas.selection import FieldSelection
from web.caching import CACHE_CONTROL
from web.errors import PROBLEM_JSON, status_message
from web.rate_limits import POLICIES
from web.request_ids import HEADER as REQUEST_ID_HEADER
from web.request_ids import PATTERN as REQUEST_ID_PATTERN

BEARER_SCHEME = "bearerAuth"
QUERY_TOKEN_SCHEME = "queryToken"

SETTINGS = {
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "v1/openapi.json",
    "OPENAPI_SWAGGER_UI_PATH": "docs",
    "OPENAPI_SWAGGER_UI_URL": "/docs/assets/",
    # Swagger UI would otherwise send the document to an online validator.
    "OPENAPI_SWAGGER_UI_CONFIG": {"validatorUrl": None},
    "API_SPEC_OPTIONS": {
        "info": {
            "description": "Read-only catalogue of bots and bot requests, for users and "
            "organizations, behind Bearer tokens. Every error has the `Error` body: RFC 9457 "
            "problem details, as `application/problem+json` when `Accept` names it.",
            "contact": {"name": "Bot Catalogue Service"},
            # Of this description, not of the service: clients generated from it are their
            # authors' to use freely, as with GitHub's and Stripe's descriptions.
            "license": {"name": "MIT", "url": "https://spdx.org/licenses/MIT.html"},
        },
        # Relative: the host that served this document, whatever name it is reached by.
        "servers": [{"url": "/", "description": "The host that serves this document."}],
    },
}

_ID = "[0-9a-fA-F]{24}"

_FIELD_TYPES = (
    (ObjectIdString, "string", None),
    (IdText, "string", None),
    (TimestampField, "string", "date-time"),
    (BsonNumber, "number", None),
    (CommaSeparatedIds, "string", None),
    (SortBy, "string", None),
    (CursorField, "string", None),
    (FieldSelection, "string", None),
)

_CONSTRAINTS = (
    (ObjectIdString, {"pattern": f"^{_ID}$"}),
    (CursorField, {"maxLength": CURSOR_LENGTH, "pattern": "^[A-Za-z0-9_-]+$"}),
    (IdText, {"description": "Usually 24 lowercase hexadecimal characters (an ObjectId)."}),
    (CommaSeparatedIds, {"pattern": f"^{_ID}(,{_ID}){{0,{CommaSeparatedIds.MAX_IDS - 1}}}$"}),
    (
        QueryText,
        {
            "maxLength": QueryText.MAX_LENGTH,
            "pattern": f"^[^{QueryText.CONTROL_CHARACTERS}]*$",
        },
    ),
)


def _header(description: str, **schema) -> dict:
    return {"description": description, "schema": schema}


_POLICY_NAMES = ", ".join(f"`{name}`" for name in POLICIES)
_HEADERS = {
    "X_REQUEST_ID": _header(
        "The request's id: the caller's own when it is 1-128 letters, digits and `-_.:`, "
        "else a new one. Quote it when reporting a problem.",
        type="string",
        pattern=f"^{REQUEST_ID_PATTERN}$",
    ),
    "CACHE_CONTROL": _header(
        "Responses are personal: no shared caching, revalidate before reuse.",
        type="string",
        enum=[CACHE_CONTROL],
    ),
    "ETAG": _header(
        "Strong tag of the body; send it back in If-None-Match to get a 304.", type="string"
    ),
    "RATELIMIT_LIMIT": _header("Requests allowed in the current window.", type="integer"),
    "RATELIMIT_REMAINING": _header("Requests left in the current window.", type="integer"),
    "RATELIMIT_RESET": _header(
        "When the window resets, in seconds since the Unix epoch.", type="integer"
    ),
    "RATELIMIT_POLICY": _header(
        "Each policy that counted this request (draft-ietf-httpapi-ratelimit-headers, an RFC "
        f"8941 list): its name (one of {_POLICY_NAMES}; with its window, as `default-60s`, when a "
        "setting holds several limits), `q` its quota and `w` its window in seconds, e.g. "
        '`"default";q=600;w=60`.',
        type="string",
    ),
    "RATELIMIT": _header(
        "The policy nearest to refusing, the refusing one on a 429: `r` the requests left, `t` "
        'the seconds until its window resets, e.g. `"default";r=599;t=60`.',
        type="string",
    ),
    "RETRY_AFTER": _header("Seconds to wait before retrying.", type="integer"),
    "WWW_AUTHENTICATE": _header("The scheme to authenticate with: `Bearer`.", type="string"),
    "ALLOW": _header("The methods this path allows.", type="string"),
    "CONTENT_DISPOSITION": _header(
        "`attachment`, with a file name naming the scope and the period.", type="string"
    ),
    "LINK": _header(
        "Links to other pages (RFC 8288, as GitHub sends them). Offset pages: `first`, "
        "`prev`, `next` and `last`, each this request's URL with only `page` changed; `prev` "
        "is left out on page 1, `next` on the last page and beyond, and `last` when nothing "
        "matches or nothing was counted (`count=none`). Keyset pages: `first` (this URL "
        "without `cursor`) and, while there is a next page, `next` (with its `cursor`), the "
        "same page `nextCursor` names.",
        type="string",
    ),
}
LINK_HEADER = "LINK"

COMMON_HEADERS = {REQUEST_ID_HEADER: "X_REQUEST_ID", "Cache-Control": "CACHE_CONTROL"}
RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": "RATELIMIT_LIMIT",
    "X-RateLimit-Remaining": "RATELIMIT_REMAINING",
    "X-RateLimit-Reset": "RATELIMIT_RESET",
    "RateLimit-Policy": "RATELIMIT_POLICY",
    "RateLimit": "RATELIMIT",
}

# Component name: (description, headers besides the common ones). flask-smorest names its
# responses after HTTPStatus; DEFAULT_ERROR stands for any other error, such as a 500.
_RESPONSES = {
    "NOT_MODIFIED": (
        "Not modified: If-None-Match holds the current ETag. The body is empty.",
        {"ETag": "ETAG", "Link": LINK_HEADER},
    ),
    "BAD_REQUEST": ("Invalid parameters; `details` names each one with its problems.", {}),
    "UNAUTHORIZED": (
        "Missing, malformed, unknown, expired or revoked token.",
        {"WWW-Authenticate": "WWW_AUTHENTICATE"},
    ),
    "FORBIDDEN": ("The caller may not access this resource.", {}),
    "NOT_FOUND": ("Not found, or not visible to the caller, or a malformed id in the path.", {}),
    "METHOD_NOT_ALLOWED": (
        "This path only serves GET (and HEAD, OPTIONS); `Allow` lists them.",
        {"Allow": "ALLOW"},
    ),
    "GONE": (
        "The events after this id are no longer held: read the list, then start a new feed.",
        {},
    ),
    "TOO_MANY_REQUESTS": (
        "Too many requests for this token (or this address, without a token), or too many "
        "failed authentications from this address.",
        {"Retry-After": "RETRY_AFTER"},
    ),
    "SERVICE_UNAVAILABLE": (status_message(503), {"Retry-After": "RETRY_AFTER"}),
    "DEFAULT_ERROR": ("An unexpected error; quote the X-Request-ID when reporting it.", {}),
}
_BODILESS = {"NOT_MODIFIED"}

IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "description": "An ETag from an earlier response: a 304 answers if nothing changed.",
    "schema": {"type": "string"},
}

_REQUEST_ID = {
    "name": REQUEST_ID_HEADER,
    "in": "header",
    "description": "Your id for this request, echoed back and written to our logs.",
    "schema": _HEADERS["X_REQUEST_ID"]["schema"],
}


def _missing_is_null(converter, field, ret: dict, **kwargs) -> dict:
    """apispec attribute function: a field that dumps null for a key the stored document
    lacks is nullable, as sparse documents from another writer show it: null joins its JSON
    Schema type list. A field with no `type` (free-form content) already admits null."""
    types = make_type_list(ret.get("type"))
    if field.dump_default is None and types and "null" not in types:
        return {"type": [*types, "null"]}
    return {}


def _field_constraints(converter, field, **kwargs) -> dict:
    """apispec attribute function: what our fields check beyond their type."""
    if isinstance(field, SortBy | FieldSelection):
        return {"pattern": field.pattern}
    for field_class, constraints in _CONSTRAINTS:
        if isinstance(field, field_class):
            return dict(constraints)
    return {}


def _register_components(api: flask_smorest.Api) -> None:
    spec = api.spec
    # Registered by flask-smorest for its X-Pagination header; our pages are in the body, and
    # an unused schema would become an unused model in every generated client.
    del spec.components.schemas["PaginationMetadata"]
    spec.components.security_scheme(
        BEARER_SCHEME,
        {
            "type": "http",
            "scheme": "bearer",
            "description": "An opaque user or organization token, or, when the service is "
            "configured for it, a signed JWT access token whose `sub` is a user id.",
        },
    )
    spec.components.security_scheme(
        QUERY_TOKEN_SCHEME,
        {
            "type": "apiKey",
            "in": "query",
            "name": QUERY_TOKEN,
            "description": "The same token, for a browser's `EventSource`, which cannot send "
            "a header: the live feeds only. Not with the header too.",
        },
    )
    for name, header in _HEADERS.items():
        spec.components.header(name, header, lazy=True)
    spec.components.parameter("IF_NONE_MATCH", "header", IF_NONE_MATCH, lazy=True)
    spec.components.parameter("X_REQUEST_ID", "header", _REQUEST_ID, lazy=True)
    # Replaces flask-smorest's lazily registered responses of the same names.
    for name, (description, headers) in _RESPONSES.items():
        # Every response after the rate limit's check carries its headers (Flask-Limiter),
        # those of operations exempt from it (the probes) excepted.
        headers = {**COMMON_HEADERS, **headers, **RATE_LIMIT_HEADERS}
        response = {"description": description, "headers": headers}
        if name not in _BODILESS:
            # application/problem+json where the request's Accept names it (web/errors.py).
            response["content"] = {
                media_type: {"schema": api.ERROR_SCHEMA}
                for media_type in (api.DEFAULT_RESPONSE_CONTENT_TYPE, PROBLEM_JSON)
            }
        spec.components.response(name, response, lazy=True)


def init_app(app: Flask, api: flask_smorest.Api) -> None:
    """Call before registering the API's blueprints, so the field mappings apply to them."""
    for field_class, *openapi_type in _FIELD_TYPES:
        api.register_field(field_class, *openapi_type)
    api.ma_plugin.converter.add_attribute_function(_field_constraints)
    api.ma_plugin.converter.add_attribute_function(_missing_is_null)
    _register_components(api)
