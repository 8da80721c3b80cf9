"""Every error leaves as one body, with its headers kept: RFC 9457 problem details (`type`,
`title`, `status`, `detail`, `instance`) beside our own `code` and `message` (plus `details`
on a 400), which clients written before the problem members still read (docs/api.md#errors).

HTTP errors, domain exceptions, query validation, database outages and requests refused by
admission control all pass through here, so no handler elsewhere builds an error body or lets
a stack trace reach the client. The errors gunicorn answers before the app
(gunicorn_worker.py) take their body and sentence from here too.
"""

import logging
import re
from http import HTTPStatus

import flask_smorest
from flask import Flask, Response, has_request_context, json, request
from pymongo.errors import PyMongoError
from werkzeug.exceptions import HTTPException, InternalServerError, ServiceUnavailable

from domain.errors import DomainError, InvalidParameter
from runtime import database
from runtime.admission import DatabaseBusy, DatabaseStalled
from schemas.errors import ErrorSchema
from web.metrics import ADMISSION_REFUSED, count_database_error
from web.request_ids import current_request_id

log = logging.getLogger(__name__)

# Seconds a client should wait before retrying a 503: what we answer 503 for (an election, a
# dropped connection, a stalled node) is mostly over within a second or two.
DATABASE_RETRY_AFTER = 1

_MESSAGES = {
    400: "The request has invalid parameters.",
    401: "A valid bearer token is required.",
    403: "The server refuses this request.",
    404: "The requested resource was not found.",
    405: "This method is not allowed on this resource.",
    410: "What was asked for is no longer held.",
    414: "The request line is too long.",
    417: "The expectation in the Expect header cannot be met.",
    429: "Too many requests: retry after the number of seconds in Retry-After.",
    431: "The request headers are too large.",
    500: "The server encountered an internal error.",
    501: "The request uses a feature the server does not support.",
    503: "The database is unavailable; try again shortly.",
}
_UNREADABLE = "The request is malformed and could not be read."
# A 503 of a healthy database that was busy for the whole of the request's deadline.
BUSY = "The service is busy; try again shortly."

# A problem type names a kind of error, not a page: a tag URI (RFC 4151) never changes with
# the host that serves it. Each is listed in docs/api.md#problem-types.
PROBLEM_TYPES = "tag:bot-catalogue-service,2026:problems/"
PROBLEM_JSON = "application/problem+json"
# Each kind's title, fixed here rather than taken from `HTTPStatus`, whose phrases change
# between Python versions (414's became "URI Too Long"): a type never changes.
TITLES = {
    400: "Invalid parameters",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    410: "Gone",
    414: "Request-URI Too Long",
    417: "Expectation Failed",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
}
UNREADABLE_TITLE = "Malformed request"
# What comes with each kind besides its body, for docs/api.md#problem-types (`make docs`).
NOTES = {
    400: "a parameter unknown, repeated or invalid",
    UNREADABLE_TITLE: "gunicorn could not read the request",
    401: "`WWW-Authenticate: Bearer`",
    404: "unknown, or not visible to the caller",
    405: "`Allow`",
    410: "a live feed resumed after its history",
    414: "over 8,190 octets; `Connection: close`",
    417: "`Connection: close`",
    429: "`Retry-After`",
    431: "`Connection: close`",
    500: "logged with its request id",
    501: "`Connection: close`",
    503: "the database, or [admission control](deployment.md#admission-control-a-stalled-"
    "database-never-holds-up-healthz); `Retry-After: 1`",
}


def problem_title(code: int, unread: bool = False) -> str:
    """A status we have no kind for (a newer gunicorn's) gets its phrase."""
    if unread and code == 400:
        return UNREADABLE_TITLE
    return TITLES.get(code) or HTTPStatus(code).phrase


def problem_type(title: str) -> str:
    return PROBLEM_TYPES + re.sub(r"[^a-z0-9]+", "-", title.lower())


def error_body(
    code: int, message: str, details: dict | None = None, *, request_id: str, unread=False
) -> dict:
    """The problem members first, as RFC 9457 shows them; `instance` is this occurrence,
    the request id that our logs and `X-Request-ID` carry."""
    title = problem_title(code, unread)
    body = {
        "type": problem_type(title),
        "title": title,
        "status": code,
        "detail": message,
        "instance": f"urn:request:{request_id}",
        "code": code,
        "message": message,
    }
    if details is not None:
        body["details"] = details
    return body


def _media_type() -> str:
    """`application/problem+json` where the request's `Accept` names it (a wildcard does not),
    else `application/json`, which every client of this API before it reads."""
    if has_request_context():
        for value, quality in request.accept_mimetypes:
            if value.split(";")[0].strip().lower() == PROBLEM_JSON and quality > 0:
                return PROBLEM_JSON
    return "application/json"


def _body(code: int, message: str, details: dict | None = None) -> str:
    return json.dumps(error_body(code, message, details, request_id=current_request_id()))


def status_message(code: int) -> str:
    """The sentence of a status; one we have none for (a newer gunicorn's) gets its phrase."""
    return _MESSAGES.get(code) or f"{HTTPStatus(code).phrase}."


def unread_request_message(code: int) -> str:
    """For an error the HTTP server answers before the app reads the request.

    A 400 there means the request could not be parsed, not that a parameter is wrong.
    """
    return _UNREADABLE if code == 400 else status_message(code)


def json_error(code: int, message: str, details: dict | None = None) -> Response:
    return Response(_body(code, message, details), status=code, mimetype=_media_type())


def _validation_details(error: HTTPException) -> dict | None:
    """webargs keys its messages by location first; clients know parameters only."""
    messages = (getattr(error, "data", None) or {}).get("messages")
    if not messages:
        return None
    details = {}
    for by_parameter in messages.values():
        for parameter, problems in by_parameter.items():
            details.setdefault(parameter, []).extend(problems)
    return details


def http_error(error: HTTPException) -> Response:
    """The Flask docs' recipe: start from the exception's response, replace the body."""
    if isinstance(error, InternalServerError):
        if isinstance(error.original_exception, PyMongoError):
            count_database_error(error.original_exception)
        log.error("unhandled exception", exc_info=error.original_exception or error)
    response = error.get_response()
    details = _validation_details(error)
    message = _MESSAGES.get(error.code) or error.description
    response.set_data(_body(error.code, message, details))
    response.content_type = _media_type()
    return response


def _domain_error(error: DomainError) -> Response:
    if isinstance(error, InvalidParameter):
        return json_error(400, status_message(400), {error.parameter: [error.message]})
    return json_error(error.status, error.message)


def _database_error(error: PyMongoError) -> Response:
    """A database that cannot serve is a 503 the client may retry; anything else the
    database refuses is our mistake: a 500, logged with its traceback like any other
    (and counted by `http_error`)."""
    if not database.unavailable(error):
        return http_error(InternalServerError(original_exception=error))
    log.warning("database unavailable: %s: %s", type(error).__name__, database.describe(error))
    count_database_error(error)
    return http_error(database_unavailable())


def _database_busy(error: DatabaseBusy) -> Response:
    """Refused before any database work (runtime/admission.py): as a database that cannot
    serve when the permits stalled, else as a busy service; either may be retried shortly."""
    ADMISSION_REFUSED.inc()
    if isinstance(error, DatabaseStalled):
        log.warning("database stalled: %s; refused at once", error)
        return http_error(database_unavailable())
    log.warning("database busy: %s for the request's deadline; refused", error)
    return json_error(503, BUSY)


def database_unavailable() -> ServiceUnavailable:
    """The 503 a client may retry shortly, with its Retry-After."""
    return ServiceUnavailable(retry_after=DATABASE_RETRY_AFTER)


def _retry_after(response: Response) -> Response:
    """Retry-After only on a 429 and a 503 (why: docs/api.md, Rate limits).

    This hook runs after Flask-Limiter's, which sets the header on every limited response,
    because it is registered before it (`create_app` sets up errors first; Flask runs these
    hooks in reverse)."""
    if response.status_code == HTTPStatus.SERVICE_UNAVAILABLE:
        response.headers["Retry-After"] = str(DATABASE_RETRY_AFTER)
    elif response.status_code != HTTPStatus.TOO_MANY_REQUESTS:
        # `remove` rather than `pop`: werkzeug's lookup of a header that is not there raises
        # an HTTP exception inside, which cost more than the rest of this hook on every 200.
        response.headers.remove("Retry-After")
    return response


class Api(flask_smorest.Api):
    """flask-smorest's Api with our error body, in handling and in the OpenAPI document."""

    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error: HTTPException) -> Response:
        return http_error(error)


def init_app(app: Flask) -> None:
    app.register_error_handler(DomainError, _domain_error)
    app.register_error_handler(PyMongoError, _database_error)
    app.register_error_handler(DatabaseBusy, _database_busy)
    app.after_request(_retry_after)
