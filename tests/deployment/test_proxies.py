"""TRUSTED_PROXIES: whose X-Forwarded-For / X-Forwarded-Proto the app believes, through a real
gunicorn, and what that means for the failed-authentication budget of each client address.

Every test client here talks to gunicorn from 127.0.0.1, which gunicorn's own default
`forwarded_allow_ips` would trust: the app's setting alone must decide.
"""

import contextlib
import json

import mongomock
import pytest
from flask import request

from app import create_app
from runtime.config import settings_from_env
from tests.conftest import TEST_SETTINGS
from tests.support.factories import World, bearer

BUDGET = {"RATELIMIT_DEFAULT": "100 per minute", "RATELIMIT_AUTH_FAILURES": "3 per minute"}


@pytest.fixture
def closing():
    with contextlib.ExitStack() as stack:
        yield stack


def _one_worker(server, closing):
    """A keep-alive connection: all its requests reach one worker, hence one memory store."""
    connection = server.connection()
    closing.callback(connection.close)
    return connection


def _guess(server, connection, forwarded_for: str, guess: str) -> int:
    headers = {**bearer(f"bcs_{guess}"), "X-Forwarded-For": forwarded_for}
    return server.request("GET", "/v1/bots/", headers, connection)[0]


def _logged_addresses(server) -> set[str]:
    lines = [json.loads(line) for line in server.log().splitlines() if '"requestId"' in line]
    return {line["clientAddress"] for line in lines if line["path"] == "/v1/bots/"}


def test_behind_one_proxy_each_forwarded_client_has_its_own_failure_budget(
    gunicorn, wire_db, closing
):
    token = World(wire_db).token(user=World(wire_db).user("Ada"))
    server = gunicorn({"TRUSTED_PROXIES": "1", **BUDGET})
    connection = _one_worker(server, closing)
    guesser, neighbour = "198.51.100.7", "198.51.100.8"

    # The client may write anything before the entry its proxy appends; only that entry counts.
    guesses = [_guess(server, connection, f"10.0.0.{n}, {guesser}", f"g{n}") for n in range(4)]
    neighbour_guess = _guess(server, connection, neighbour, "n0")
    valid_behind_guesser = server.request(
        "GET", "/v1/bots/", {**bearer(token), "X-Forwarded-For": guesser}, connection
    )

    assert guesses == [401, 401, 401, 429]
    assert neighbour_guess == 401
    assert valid_behind_guesser[0] == 200
    assert _logged_addresses(server) == {guesser, neighbour}


def test_without_trusted_proxies_forwarded_for_is_ignored(gunicorn, wire_db, closing):
    token = World(wire_db).token(user=World(wire_db).user("Ada"))
    server = gunicorn(BUDGET)
    connection = _one_worker(server, closing)

    invented = [_guess(server, connection, f"203.0.113.{n}", f"g{n}") for n in range(4)]
    valid = server.request(
        "GET", "/v1/bots/", {**bearer(token), "X-Forwarded-For": "203.0.113.9"}, connection
    )

    assert invented == [401, 401, 401, 429]
    assert valid[0] == 200
    assert _logged_addresses(server) == {"127.0.0.1"}


def test_gunicorn_reads_no_forwarded_scheme_header_itself(gunicorn):
    """Trusted, gunicorn would refuse these contradicting scheme headers with a 400."""
    server = gunicorn()

    status, _, _ = server.request(
        "GET", "/healthz", {"X-Forwarded-Proto": "https", "X-Forwarded-Ssl": "off"}
    )

    assert status == 200


@pytest.mark.parametrize(
    ("proxies", "expected"),
    [
        (0, {"address": "192.0.2.1", "scheme": "http"}),
        (1, {"address": "198.51.100.2", "scheme": "https"}),
        (2, {"address": "198.51.100.1", "scheme": "https"}),
    ],
)
def test_the_client_address_and_scheme_follow_trusted_proxies(proxies, expected):
    app = create_app(
        {**TEST_SETTINGS, "TRUSTED_PROXIES": proxies}, mongo_client=mongomock.MongoClient()
    )
    app.add_url_rule(
        "/probe", "probe", lambda: {"address": request.remote_addr, "scheme": request.scheme}
    )

    response = app.test_client().get(
        "/probe",
        headers={
            "X-Forwarded-For": "198.51.100.1, 198.51.100.2",
            "X-Forwarded-Proto": "https, https",
        },
        environ_base={"REMOTE_ADDR": "192.0.2.1"},
    )

    assert response.get_json() == expected


def test_trusted_proxies_come_from_the_environment():
    assert settings_from_env({})["TRUSTED_PROXIES"] == 0
    assert settings_from_env({"TRUSTED_PROXIES": "2"})["TRUSTED_PROXIES"] == 2
