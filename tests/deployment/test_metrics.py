"""Prometheus figures on METRICS_PORT: by endpoint and status, summed over gunicorn's workers,
served by one process only, and nowhere when METRICS_PORT is unset."""

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import mongomock
import psutil
import pytest
from prometheus_client import REGISTRY
from pymongo.errors import OperationFailure

from app import create_app
from repositories.tokens import TokenRepository
from runtime.bearer_tokens import new_token
from tests.conftest import TEST_SETTINGS
from tests.support import ROOT
from tests.support.factories import World, bearer
from tests.support.metrics import scrape
from tests.support.wire_server import free_port

FLASK = Path(sys.executable).with_name("flask")
DURATION = "botcatalogue_http_request_duration_seconds"


def _requests(endpoint: str, status: int) -> tuple:
    return f"{DURATION}_count", (("endpoint", endpoint), ("status", str(status)))


def _database_errors(error: str) -> tuple:
    return "botcatalogue_database_errors_total", (("error", error),)


def _rate_limited(limit: str) -> tuple:
    return "botcatalogue_rate_limited_total", (("limit", limit),)


def _sample(key: tuple) -> float:
    """The same figure from this process's own registry, as the in-process tests keep it."""
    return REGISTRY.get_sample_value(key[0], dict(key[1])) or 0.0


def _delta(before: Counter, after: Counter) -> Counter:
    return Counter({key: after[key] - before[key] for key in after if after[key] != before[key]})


@pytest.fixture
def world():
    return World(mongomock.MongoClient().db)


@pytest.fixture
def per_worker():
    """`server.connections_per_worker()`, each connection closed after the test."""
    with contextlib.ExitStack() as closing:

        def open_on(server) -> dict:
            connections = server.connections_per_worker()
            for connection in connections.values():
                closing.callback(connection.close)
            return connections

        yield open_on


def _app(world: World, **settings):
    config = {**TEST_SETTINGS, "MONGODB_DB": world.db.name, "METRICS_PORT": 9, **settings}
    return create_app(config, mongo_client=world.db.client)


def test_the_endpoint_label_is_the_route_never_the_path(world):
    client = _app(world).test_client()
    token = world.token(user=world.user("Ada"))
    keys = [
        _requests("/v1/bots/<slug>/", 404),
        _requests("unmatched", 404),
        _requests("/healthz", 200),
    ]
    before = [_sample(key) for key in keys]

    for slug in ("no-such-bot", "nor-this-one"):
        client.get(f"/v1/bots/{slug}/", headers=bearer(token))
    client.get("/v1/nowhere/12345")
    client.get("/healthz")

    assert [_sample(key) - value for key, value in zip(keys, before, strict=True)] == [2, 1, 1]


def test_without_a_metrics_port_nothing_is_counted(world):
    client = _app(world, METRICS_PORT=None).test_client()
    before = _sample(_requests("/healthz", 200))

    client.get("/healthz")

    assert _sample(_requests("/healthz", 200)) == before


def test_refusals_are_counted_by_the_limit_reached(world):
    client = _app(
        world,
        RATELIMIT_ENABLED=True,
        RATELIMIT_DEFAULT="1 per minute",
        RATELIMIT_AUTH_FAILURES="1 per minute",
    ).test_client()
    token = world.token(user=world.user("Ada"))
    keys = [_rate_limited("RATELIMIT_DEFAULT"), _rate_limited("RATELIMIT_AUTH_FAILURES")]
    before = [_sample(key) for key in keys]

    by_token = [client.get("/v1/bots/", headers=bearer(token)).status_code for _ in range(2)]
    guesses = [client.get("/v1/bots/", headers=bearer(new_token())).status_code for _ in range(2)]

    assert (by_token, guesses) == ([200, 429], [401, 429])
    assert [_sample(key) - value for key, value in zip(keys, before, strict=True)] == [1, 1]


def test_a_database_error_that_is_a_500_is_counted_too(world, monkeypatch):
    def refused(self, token_hash):
        raise OperationFailure("BadValue", code=2)

    monkeypatch.setattr(TokenRepository, "find", refused)
    client = _app(world, PROPAGATE_EXCEPTIONS=False).test_client()
    before = _sample(_database_errors("OperationFailure"))

    response = client.get("/v1/bots/", headers=bearer(new_token()))

    assert response.status_code == 500
    assert _sample(_database_errors("OperationFailure")) == before + 1


def _drive(server, connection, token: str, other_token: str) -> Counter:
    """Requests on one worker's connection; what each endpoint and status should count."""
    statuses = Counter()
    for _ in range(4):  # RATELIMIT_DEFAULT lets two through in each worker's memory store
        status = server.request("GET", "/v1/bots/", bearer(token), connection)[0]
        statuses[_requests("/v1/bots/", status)] += 1
    status = server.request("GET", "/v1/bots/no-such-bot/", bearer(other_token), connection)[0]
    statuses[_requests("/v1/bots/<slug>/", status)] += 1
    status, _, body = server.request("GET", "/metrics", connection=connection)
    assert (status, body["code"]) == (404, 404)
    statuses[_requests("unmatched", status)] += 1
    return statuses


def test_the_figures_are_summed_over_both_workers(gunicorn, wire_db, per_worker):
    world = World(wire_db)
    token, other_token = world.token(user=world.user("Ada")), world.token(user=world.user("Bob"))
    metrics_port = free_port()
    server = gunicorn({"METRICS_PORT": str(metrics_port), "RATELIMIT_DEFAULT": "2 per minute"})
    connections = per_worker(server)
    before = scrape(metrics_port)

    expected = Counter()
    for connection in connections.values():
        expected += _drive(server, connection, token, other_token)
    after = scrape(metrics_port)

    assert expected == Counter(
        {
            _requests("/v1/bots/", 200): 4,
            _requests("/v1/bots/", 429): 4,
            _requests("/v1/bots/<slug>/", 404): 2,
            _requests("unmatched", 404): 2,
        }
    )
    expected[_rate_limited("RATELIMIT_DEFAULT")] = 4
    delta = _delta(before, after)
    assert {key: delta[key] for key in expected} == expected
    labels = _requests("/v1/bots/", 200)[1]
    every_bucket = tuple(sorted((*labels, ("le", "+Inf"))))
    assert delta[f"{DURATION}_bucket", every_bucket] == 4
    assert delta[f"{DURATION}_sum", labels] > 0
    # Any path on the metrics port serves the same figures; a stopped worker's stay counted.
    victim = next(iter(connections))
    os.kill(victim, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while victim in server.worker_pids() or len(server.worker_pids()) < 2:
        assert time.monotonic() < deadline, server.log()[-2000:]
        time.sleep(0.1)
    kept = scrape(metrics_port, "/")
    assert {key: kept[key] for key in expected} == {key: after[key] for key in expected}


def test_database_errors_are_summed_over_both_workers(gunicorn, per_worker):
    metrics_port = free_port()
    server = gunicorn(
        {
            "METRICS_PORT": str(metrics_port),
            "MONGODB_URI": f"mongodb://127.0.0.1:{free_port()}/?directConnection=true",
            "MONGODB_TIMEOUT_MS": "300",
            "READYZ_TIMEOUT_MS": "300",
        }
    )
    connections = per_worker(server)

    for connection in connections.values():
        assert server.request("GET", "/v1/bots/", bearer(new_token()), connection)[0] == 503
        assert server.request("GET", "/readyz", connection=connection)[0] == 503
    scraped = scrape(metrics_port)

    assert scraped[_database_errors("ServerSelectionTimeoutError")] == 4
    assert scraped[_requests("/v1/bots/", 503)] == 2
    assert scraped[_requests("/readyz", 503)] == 2


def _listening_ports(server) -> set[int]:
    pids = {server._process.pid, *server.worker_pids()}
    return {
        connection.laddr.port
        for pid in pids
        for connection in psutil.Process(pid).net_connections(kind="inet")
        if connection.status == psutil.CONN_LISTEN
    }


def test_without_a_metrics_port_only_the_api_listens(gunicorn, per_worker):
    server = gunicorn({"METRICS_PORT": ""})
    per_worker(server)

    assert _listening_ports(server) == {server.port}


def test_a_metrics_port_in_use_stops_gunicorn_with_one_line(gunicorn):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError) as stopped:
            gunicorn({"METRICS_PORT": str(port)})

    assert f"Error: METRICS_PORT: cannot listen on 127.0.0.1:{port}: " in str(stopped.value)


def _get(port: int, path: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.mark.parametrize("options", [[], ["--debug"]], ids=["flask run", "with the reloader"])
def test_flask_run_serves_its_own_figures(wire_uri, wire_db, options):
    """With the reloader, Flask builds the app in a watching process that serves nothing."""
    api_port, metrics_port = free_port(), free_port()
    env = {**os.environ, "MONGODB_URI": wire_uri, "MONGODB_DB": wire_db.name}
    process = subprocess.Popen(
        [str(FLASK), "--app", "app", *options, "run", "--port", str(api_port)],
        cwd=ROOT,
        env={**env, "METRICS_PORT": str(metrics_port)},
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert _get(api_port, "/healthz") == 200
                before = scrape(metrics_port)
                break
            except OSError:
                assert process.poll() is None, process.communicate()[1][-3000:]
                assert time.monotonic() < deadline
                time.sleep(0.2)
        for _ in range(3):
            assert _get(api_port, "/healthz") == 200

        assert _delta(before, scrape(metrics_port))[_requests("/healthz", 200)] == 3
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.communicate(timeout=15)


def test_other_flask_commands_leave_the_metrics_port_alone(wire_uri, wire_db):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = subprocess.run(
            [str(FLASK), "--app", "app", "routes"],
            cwd=ROOT,
            env={**os.environ, "METRICS_PORT": str(taken.getsockname()[1])},
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "settings, listening",
    # Empty counts as unset, whatever the shell running the tests exports.
    [({"METRICS_HOST": ""}, "127.0.0.1"), ({"METRICS_HOST": "0.0.0.0"}, "0.0.0.0")],
    ids=["loopback by default", "opened on purpose"],
)
def test_the_metrics_listen_on_metrics_host_whatever_host_is(gunicorn, settings, listening):
    """A service opened to a load balancer (HOST=0.0.0.0) keeps its unauthenticated metrics
    on the loopback unless METRICS_HOST opens them too."""
    metrics_port = free_port()
    server = gunicorn({"HOST": "0.0.0.0", "METRICS_PORT": str(metrics_port), **settings}, workers=1)
    bound = {
        connection.laddr.ip
        for connection in psutil.Process(server.master_pid).net_connections(kind="tcp")
        if connection.status == psutil.CONN_LISTEN and connection.laddr.port == metrics_port
    }
    assert bound == {listening}
