"""Errors gunicorn answers before Flask sees the request carry the JSON error body too.

Only raw bytes reach these: an HTTP client library refuses to send most of them.
"""

import json
import re
import socket
from email.utils import parsedate_to_datetime

import pytest

from tests.support.checks import problem_checked
from web.errors import unread_request_message
from web.request_ids import PATTERN as REQUEST_ID_PATTERN

LINE_TOO_LONG = b"GET /" + b"a" * 8200 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
FIELD_TOO_LARGE = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n"
TOO_MANY_FIELDS = (
    b"GET / HTTP/1.1\r\nHost: x\r\n"
    + b"".join(b"X-Field-%d: 1\r\n" % n for n in range(120))
    + b"\r\n"
)

SENTENCES = {
    400: "The request is malformed and could not be read.",
    414: "The request line is too long.",
    417: "The expectation in the Expect header cannot be met.",
    431: "The request headers are too large.",
    501: "The request uses a feature the server does not support.",
}

# The request was never read: a 400 there is a malformed request, not invalid parameters.
TITLES = {
    400: "Malformed request",
    414: "Request-URI Too Long",
    417: "Expectation Failed",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
}


def _exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers with lower-case names, body) of the one answer to `raw`."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    headers = {}
    for field in fields:
        name, _, value = field.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split(" ")[1]), headers, body


@pytest.mark.parametrize(
    "raw, statuses",
    [
        pytest.param(LINE_TOO_LONG, {414}, id="request line too long"),
        pytest.param(FIELD_TOO_LARGE, {400, 431}, id="header field too large"),
        pytest.param(TOO_MANY_FIELDS, {400, 431}, id="too many header fields"),
        pytest.param(b"GARBAGE\r\n\r\n", {400}, id="malformed request line"),
        pytest.param(b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", {400}, id="invalid method"),
        pytest.param(b"GET / HTTP/7.1\r\nHost: x\r\n\r\n", {400}, id="invalid HTTP version"),
        pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\nExpect: tea\r\n\r\n", {417}, id="expect"),
        pytest.param(
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: zstd\r\n\r\n",
            {501},
            id="unsupported transfer coding",
        ),
    ],
)
def test_an_error_before_the_app_has_the_json_error_body(module_gunicorn, raw, statuses):
    status, headers, body = _exchange(module_gunicorn.port, raw)

    assert status in statuses
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    assert problem_checked(json.loads(body), headers["x-request-id"]) == {
        "code": status,
        "message": SENTENCES[status],
    }
    assert json.loads(body)["title"] == TITLES[status]


def test_bytes_that_would_break_json_are_not_echoed(module_gunicorn):
    status, _, body = _exchange(module_gunicorn.port, b'GET /"<b>\\\xff HTTP/1.1\r\n\r\n')

    assert status == 400
    assert problem_checked(json.loads(body)) == {"code": 400, "message": SENTENCES[400]}


def test_a_status_a_newer_gunicorn_may_add_still_gets_a_sentence():
    assert unread_request_message(505) == "HTTP Version Not Supported."


def test_it_carries_the_headers_of_every_response(module_gunicorn):
    _, headers, _ = _exchange(module_gunicorn.port, b"GARBAGE\r\n\r\n")
    _, again, _ = _exchange(module_gunicorn.port, b"GARBAGE\r\n\r\n")

    assert headers["cache-control"] == "private, no-cache"
    assert parsedate_to_datetime(headers["date"]).tzinfo is not None
    assert re.fullmatch(REQUEST_ID_PATTERN, headers["x-request-id"])
    assert headers["x-request-id"] != again["x-request-id"]


def test_gunicorn_still_logs_its_warning(module_gunicorn):
    _exchange(module_gunicorn.port, LINE_TOO_LONG)

    log = module_gunicorn.log()
    assert "Invalid request from ip=127.0.0.1" in log


def test_a_well_formed_request_is_still_served_by_the_app(module_gunicorn):
    _exchange(module_gunicorn.port, b"GARBAGE\r\n\r\n")

    status, headers, body = _exchange(
        module_gunicorn.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )

    assert status == 200
    assert json.loads(body) == {"status": "ok"}


def test_a_request_line_of_8000_octets_is_served(module_gunicorn):
    """HTTP asks a server to serve request lines of at least 8,000 octets; gunicorn's
    default stops at 4,094."""
    start, end = b"GET /healthz?pad=", b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    line = start + b"a" * (8000 - len(start) - len(b" HTTP/1.1")) + end
    assert len(line.split(b"\r\n")[0]) == 8000

    status, _, body = _exchange(module_gunicorn.port, line)

    assert status == 200
    assert json.loads(body) == {"status": "ok"}
