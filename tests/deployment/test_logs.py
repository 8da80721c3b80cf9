"""Every line the processes write is one JSON object, with the request id, never a token."""

import datetime as dt
import json
import logging
import socket
import subprocess
import sys
import urllib.request

from runtime import logs
from tests.support import ROOT
from tests.support.factories import World, bearer
from tests.support.json_log import parse_lines
from tests.support.wire_server import free_port

TOKEN = "bcs_" + "S3cr3t-t0ken_" * 3
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl"


def test_a_record_in_a_request_carries_its_id_and_one_outside_none(offline_app, json_log):
    with offline_app.test_request_context(headers={"X-Request-ID": "r-7"}):
        logging.getLogger("some.library").warning("inside")
    logging.getLogger("some.library").warning("outside")

    inside, outside = json_log()
    assert (inside["message"], inside["requestId"], inside["level"]) == ("inside", "r-7", "WARNING")
    assert inside["logger"] == "some.library" and inside["time"]
    assert "requestId" not in outside


def test_a_traceback_is_a_field_of_its_one_line(json_log):
    try:
        raise ValueError("the detail")
    except ValueError:
        logging.getLogger("x").exception("failed")

    [line] = json_log()
    assert line["message"] == "failed"
    assert line["traceback"].startswith("Traceback (most recent call last):")
    assert line["traceback"].endswith("ValueError: the detail")


def test_any_value_is_written_as_json(json_log):
    log = logging.getLogger("x")
    log.warning("a path of %s", "/v1/bots/café/", extra={"big": 2**70, "at": dt.date(2026, 1, 2)})
    log.warning("beyond", extra={"ratio": float("nan"), "kind": {"nested": [1, "é"]}})

    first, second = json_log()
    assert first["message"] == "a path of /v1/bots/café/"
    assert (first["big"], first["at"]) == (2**70, "2026-01-02")
    assert (second["ratio"], second["kind"]) == (None, {"nested": [1, "é"]})


def test_token_shapes_are_blanked_wherever_they_are(json_log):
    log = logging.getLogger("x")
    log.warning("request line %r", f"GET /?access_token={TOKEN} HTTP/1.1 junk")
    log.warning("a field", extra={"given": JWT})
    try:
        raise RuntimeError(f"quoted {TOKEN}")
    except RuntimeError:
        log.exception("failed")

    text = json.dumps(json_log())
    assert TOKEN not in text and JWT not in text and "S3cr3t" not in text
    assert text.count(logs.REDACTED) == 3


def test_the_request_line_is_fields(client, world, json_log):
    token = world.token(user=world.user("Ada"))

    client.get("/v1/bots/?name=hush-hush", headers={**bearer(token), "X-Request-ID": "r-1"})

    [line] = [line for line in json_log() if line["logger"] == "bot_catalogue.requests"]
    assert line["message"] == "GET /v1/bots/ 200"
    assert (line["requestId"], line["status"], line["query"]) == ("r-1", 200, ["name"])


def test_warnings_and_the_cli_write_json_lines(tmp_path):
    """`create_app` configures the process: a warning becomes a record like any other."""
    script = (
        "import warnings; from app import create_app; create_app(); "
        "warnings.warn('careful now', UserWarning)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    [line] = parse_lines(result.stderr)
    assert (line["logger"], line["level"]) == ("py.warnings", "WARNING")
    assert "UserWarning: careful now" in line["message"]


def _raw(port: int, data: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        while sock.recv(65536):
            pass


def test_every_line_of_gunicorn_is_json(gunicorn, wire_db):
    world = World(wire_db)
    ada = world.user("Ada", organizations=[world.organization("Acme")])
    token = world.token(user=ada)
    world.bot("writer")
    metrics_port = free_port()
    server = gunicorn({"METRICS_PORT": str(metrics_port)}, app="tests.support.faulty_wsgi:app")
    as_ada = bearer(token)
    etag = server.request("GET", "/v1/bots/", as_ada)[1]["ETag"]
    calls = {
        "ok": ("/v1/bots/", as_ada),
        "not-modified": ("/v1/bots/", {**as_ada, "If-None-Match": etag}),
        "bad": ("/v1/bots/?limit=x", as_ada),
        "anonymous": (f"/v1/bots/?access_token={token}", {}),
        "missing": ("/nowhere", {}),
        "failing": ("/v1/bots/writer/", as_ada),
    }
    statuses = {
        request_id: server.request("GET", path, {"X-Request-ID": request_id, **headers})[0]
        for request_id, (path, headers) in calls.items()
    }
    server.request("GET", "/healthz", {"X-Request-ID": token})
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as scrape:
        assert scrape.status == 200
    # Malformed requests gunicorn answers itself; its warning quotes the bad header line.
    _raw(server.port, f"GET / HTTP/1.1\r\nAuthorization Bearer {token}\r\n\r\n".encode())
    _raw(server.port, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    server.stop()

    codes = {"ok": 200, "not-modified": 304, "bad": 400, "anonymous": 401, "missing": 404}
    assert statuses == {**codes, "failing": 500}
    lines = parse_lines(server.log())
    assert token not in server.log()
    messages = [line["message"] for line in lines]
    assert "Starting gunicorn" in messages[0] and "Shutting down: Master" in messages[-1]
    assert sum("Booting worker" in message for message in messages) == 2
    assert sum("Worker exiting" in message for message in messages) == 2
    invalid = [line for line in lines if "Invalid request from ip=127.0.0.1" in line["message"]]
    assert len(invalid) == 2 and logs.REDACTED in invalid[0]["message"]
    by_id = {}
    for line in lines:
        by_id.setdefault(line.get("requestId"), []).append(line)
    for request_id, code in codes.items():
        [request_line] = by_id[request_id]
        assert (request_line["logger"], request_line["status"]) == ("bot_catalogue.requests", code)
    [error, request_line] = by_id["failing"]
    assert (error["level"], error["message"]) == ("ERROR", "unhandled exception")
    assert error["traceback"].endswith("RuntimeError: planted fault: the bot could not be read")
    assert (request_line["status"], request_line["callerId"]) == (500, str(ada))
    assert by_id[logs.REDACTED][0]["path"] == "/healthz"


def test_outages_are_json_lines_with_the_request_id(gunicorn):
    """The database and the rate-limit store both down: each warning carries the request."""
    closed = f"127.0.0.1:{free_port()}"
    server = gunicorn(
        {
            "MONGODB_URI": f"mongodb://{closed}/?directConnection=true",
            "MONGODB_TIMEOUT_MS": "200",
            "RATELIMIT_STORAGE_URI": f"redis://{closed}/0",
        }
    )

    status = server.request("GET", "/v1/bots/", {**bearer(TOKEN), "X-Request-ID": "dark"})[0]
    server.stop()

    assert status == 503
    lines = parse_lines(server.log())
    assert TOKEN not in server.log()
    mine = {line["logger"]: line for line in lines if line.get("requestId") == "dark"}
    assert mine["web.errors"]["message"].startswith(
        f"database unavailable: ServerSelectionTimeoutError: {closed}: "
    )
    assert "Rate limit storage unreachable" in mine["flask-limiter"]["message"]
    assert mine["bot_catalogue.requests"]["status"] == 503
