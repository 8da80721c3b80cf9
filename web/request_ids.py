"""Every request has an id: the caller's `X-Request-ID` when it is sane, else a fresh one.

The id ties what a client saw to our log lines. It is echoed in a header and written to logs,
so only a bounded, plain set of characters is taken from the caller. A fresh one is 128 random
bits as 32 hexadecimal characters: unique, not secret, so they come from `random` (reseeded in
each forked worker) rather than the operating system, whose call was 6% of a cached request.
"""

import logging
import random
import re

from flask import Flask, Response, g, has_request_context, request

HEADER = "X-Request-ID"
PATTERN = r"[A-Za-z0-9\-_.:]{1,128}"
_SANE = re.compile(PATTERN)
_ENVIRON_KEY = "HTTP_" + HEADER.upper().replace("-", "_")  # as WSGI names it, read directly


def new_request_id() -> str:
    return f"{random.getrandbits(128):032x}"


def current_request_id() -> str:
    """Decided on first use, so hooks that run before ours (or fail) still see one id.
    `g` is read through its proxy once: each read costs about as much as the rest."""
    request_globals = g._get_current_object()
    request_id = request_globals.get("request_id")
    if request_id is None:
        given = request._get_current_object().environ.get(_ENVIRON_KEY, "")
        request_id = given if _SANE.fullmatch(given) else new_request_id()
        request_globals.request_id = request_id
    return request_id


class RequestIdFilter(logging.Filter):
    """On the log handler (runtime/logs.py), so records of every logger get the field,
    libraries' and gunicorn's included, when they are made while a request is served."""

    def filter(self, record: logging.LogRecord) -> bool:
        if has_request_context():
            record.requestId = current_request_id()
        return True


def _echo(response: Response) -> Response:
    response.headers[HEADER] = current_request_id()
    return response


def init_app(app: Flask) -> None:
    app.after_request(_echo)
