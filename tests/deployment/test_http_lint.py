"""Real responses through gunicorn, linted by httplint (the library behind REDbot): a scenario
of every kind of answer the service gives, gunicorn's own included, with no note of
httplint's worst level (`bad`), and none saying the answer has no `Date`. Notes of the other
levels are advice, not faults."""

import datetime as dt
import socket

import pytest
from httplint import HttpRequestLinter, HttpResponseLinter, levels

from tests.support.factories import World

EXPORT_PERIOD = "createdFrom=2026-01-01&createdTo=2026-02-01"


def _read_response(sock: socket.socket) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
    """(status line, raw fields, content with any chunked framing removed) of a response
    sent with `Connection: close`, read to the end."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.split(b"\r\n")
    fields = [tuple(part.strip() for part in line.split(b":", 1)) for line in lines]
    if (b"transfer-encoding", b"chunked") in [(n.lower(), v.lower()) for n, v in fields]:
        content, rest = b"", body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            content, rest = content + rest[:size], rest[size + 2 :]
        body = content
    return status_line, fields, body


def _lint(port: int, method: str, target: str, headers: dict | None = None, raw=None):
    """The notes httplint finds in the answer to one request (`raw` bytes, if given)."""
    fields = {"Host": f"127.0.0.1:{port}", "Connection": "close", **(headers or {})}
    request = raw or (
        f"{method} {target} HTTP/1.1\r\n".encode()
        + b"".join(f"{name}: {value}\r\n".encode() for name, value in fields.items())
        + b"\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        status_line, response_fields, content = _read_response(sock)
    asked = HttpRequestLinter()
    asked.process_request_topline(
        method.encode(), f"http://127.0.0.1:{port}{target}".encode(), b"HTTP/1.1"
    )
    asked.process_headers([(name.encode(), value.encode()) for name, value in fields.items()])
    asked.finish_content(True)
    answer = HttpResponseLinter(_related=asked)
    answer.is_head_response = method == "HEAD"
    version, status, *phrase = status_line.split(b" ", 2)
    answer.process_response_topline(version, status, phrase[0] if phrase else None)
    answer.process_headers(response_fields)
    answer.feed_content(content)
    answer.finish_content(True)
    return int(status), answer.notes


def _faults(notes) -> list[str]:
    """The names of the bad notes, and of the one that says `Date` is missing (a warning)."""
    return [
        type(note).__name__
        for note in notes
        if note.level == levels.BAD or type(note).__name__ == "DATE_CLOCKLESS"
    ]


@pytest.fixture
def scenario(gunicorn, wire_db):
    world = World(wire_db)
    acme = world.organization()
    ada = world.user("Ada", organizations=[acme])
    token = world.token(user=ada)
    bot = world.bot("writer", organization=acme)
    request = world.bot_request(
        bot=bot, created_by=ada, organization=acme, createdAt=dt.datetime(2026, 1, 5)
    )
    server = gunicorn({"RATELIMIT_ENABLED": "true"})
    auth = {"Authorization": f"Bearer {token}"}
    _, etag_headers, _ = server.request("GET", "/v1/bots/", auth)
    etag = etag_headers["ETag"]
    return server.port, [
        ("GET", "/healthz", {}, 200),
        ("GET", "/readyz", {}, 200),
        ("GET", "/v1/openapi.json", {}, 200),
        ("GET", "/docs", {}, 200),
        ("GET", "/v1/bots/", auth, 200),
        ("HEAD", "/v1/bots/", auth, 200),
        ("GET", "/v1/bots/", {**auth, "If-None-Match": etag}, 304),
        ("GET", "/v1/bots/writer/", auth, 200),
        ("GET", f"/v1/requests/{request}/", auth, 200),
        ("GET", "/v1/requests/?pagination=keyset&limit=1", auth, 200),
        ("GET", f"/v1/requests/export?{EXPORT_PERIOD}", auth, 200),
        ("GET", f"/v1/requests/export?{EXPORT_PERIOD}", {**auth, "Accept": "text/csv"}, 200),
        ("OPTIONS", "/v1/bots/", auth, 204),
        ("GET", "/v1/bots/", {}, 401),
        ("GET", "/v1/bots/no-such-bot/", auth, 404),
        ("GET", "/v1/bots/?limit=0", auth, 400),
        ("DELETE", "/v1/bots/", auth, 405),
    ]


def test_no_answer_has_a_bad_note(scenario):
    port, exchanges = scenario
    found = {}
    for method, target, headers, expected in exchanges:
        status, notes = _lint(port, method, target, headers)
        assert status == expected, (method, target)
        found[f"{method} {target}"] = _faults(notes)

    assert {exchange: bad for exchange, bad in found.items() if bad} == {}


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"GARBAGE\r\n\r\n", id="malformed"),
        pytest.param(b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", id="line too long"),
        pytest.param(
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", id="field"
        ),
    ],
)
def test_gunicorns_own_answers_have_no_bad_note(module_gunicorn, raw):
    """httplint reports a 414 itself as bad news for the URI it was given, which is what the
    test asked for; any other bad note is the answer's fault."""
    method, target, *_ = raw.split(b"\r\n")[0].split(b" ") + [b"/"]
    status, notes = _lint(module_gunicorn.port, method.decode(), target.decode(), raw=raw)

    bad = set(_faults(notes))
    assert status in {400, 414, 431}
    assert bad == ({"STATUS_URI_TOO_LONG"} if status == 414 else set())
