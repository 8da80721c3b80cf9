"""Faults the driver sees: a closed connection, a node shutting down or stepping down, a stall.

Against a wire server of its own with MongoDB's `failCommand` fail point (a fail point is
server-wide: tests/deployment/conftest.py), through an app that builds its client from the
configuration, as in production. Every request runs under one deadline, MONGODB_TIMEOUT_MS,
and pymongo retries a read for as long as that deadline allows (the client-side operation
timeout's rule): a fault that clears within it costs time, not the answer; one that lasts
gives a 503 with `Retry-After` when the deadline is reached, never a 500.
"""

import contextlib
import json
import logging
import math
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pymongo
import pytest
from pymongo import monitoring

from app import create_app
from tests.conftest import TEST_SETTINGS
from tests.support.checks import assert_error, problem_checked
from tests.support.factories import World, bearer
from tests.support.gunicorn_server import GunicornServer

DEADLINE_MS = 2000
# What the machine may add to a deadline: a shared two-core machine, other tests running.
MARGIN = 1.5
UNAVAILABLE = {"code": 503, "message": "The database is unavailable; try again shortly."}
# The kinds of command the endpoints send (test_the_endpoints_send_these_commands checks it).
COMMANDS = ("find", "aggregate", "distinct")
# ShutdownInProgress, InterruptedAtShutdown, PrimarySteppedDown, NotWritablePrimary,
# HostUnreachable, SocketException.
NODE_GOING_AWAY = (91, 11600, 189, 10107, 6, 9001)


@pytest.fixture(scope="module")
def database(fault_admin):
    name = f"faults_{uuid.uuid4().hex[:12]}"
    yield fault_admin[name]
    fault_admin.drop_database(name)


@pytest.fixture(scope="module")
def stored(database):
    """A user who belongs to an organization, so that lists run one query per visibility
    branch, side by side; a service and a name filter add `distinct`. Returns the user's
    bearer header and one path of every endpoint."""
    world = World(database)
    org = world.organization("Acme")
    ada = world.user("Ada", organizations=[org])
    bot = world.bot("echo", organization=org, is_public=False, service=world.service())
    world.bot("public-bot")
    request = world.bot_request(bot=bot, created_by=ada, organization=org)
    return bearer(world.token(user=ada)), [
        "/v1/bots/",
        "/v1/bots/?service=writing",
        "/v1/bots/echo/",
        f"/v1/organizations/{org}/bots/",
        f"/v1/organizations/{org}/bots/echo/",
        "/v1/requests/",
        "/v1/requests/?name=echo",
        f"/v1/requests/{request}/",
        f"/v1/organizations/{org}/requests/",
        f"/v1/organizations/{org}/requests/{request}/",
        "/v1/usage/?from=2026-01-01&to=2026-02-01",
        f"/v1/organizations/{org}/usage/?from=2026-01-01&to=2026-01-08&groupBy=day",
    ]


def _app(server, database, mongo_client=None):
    settings = {
        **TEST_SETTINGS,
        "MONGODB_URI": server.uri,
        "MONGODB_DB": database.name,
        "MONGODB_TIMEOUT_MS": DEADLINE_MS,
        "RATELIMIT_ENABLED": False,
    }
    return create_app(settings, mongo_client=mongo_client)


@pytest.fixture(scope="module")
def app(fault_server, database):
    app = _app(fault_server, database)
    yield app
    app.extensions["mongo"].close()


class _Recorder(monitoring.CommandListener):
    """The commands a client sends, by name, with their bodies; not its monitoring."""

    def __init__(self):
        self.sent: list[tuple[str, dict]] = []

    def started(self, event):
        if event.command_name not in ("hello", "isMaster", "endSessions"):
            self.sent.append((event.command_name, event.command))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.fixture(scope="module")
def sent_by_path(fault_server, database, stored):
    """{path: [(command name, command)]} for one request to each endpoint, and its body."""
    token, paths = stored
    recorder = _Recorder()
    client = pymongo.MongoClient(fault_server.uri, event_listeners=[recorder])
    app = _app(fault_server, database, mongo_client=client)
    sent = {}
    for path in paths:
        recorder.sent.clear()
        response = app.test_client().get(path, headers=token)
        assert response.status_code == 200, path
        sent[path] = (list(recorder.sent), response.get_json())
    client.close()
    return sent


def _paths_sending(sent_by_path, command: str) -> list[str]:
    return [path for path, (sent, _) in sent_by_path.items() if command in dict(sent)]


def test_the_endpoints_send_these_commands(sent_by_path):
    """`count_documents` is an `aggregate`: no endpoint sends `count`."""
    kinds = {name for sent, _ in sent_by_path.values() for name, _ in sent}
    assert kinds == set(COMMANDS)


def test_every_command_of_a_request_carries_what_is_left_of_its_deadline(sent_by_path):
    """Queries that run side by side in the pool's threads too: pymongo sends the rest of
    the request's deadline as maxTimeMS, so a command the client gave up on stops on the
    server as well."""
    for path, (sent, _) in sent_by_path.items():
        for name, command in sent:
            assert 0 < command.get("maxTimeMS", 0) <= DEADLINE_MS, (path, name)


def _assert_answers_as_usual(app, token, sent_by_path, path) -> None:
    response = app.test_client().get(path, headers=token)
    assert response.status_code == 200, (path, response.get_json())
    assert response.get_json() == sent_by_path[path][1]


def _assert_prompt_503(app, token, path) -> float:
    started = time.monotonic()
    response = app.test_client().get(path, headers=token)
    elapsed = time.monotonic() - started
    assert_error(response, 503)
    assert problem_checked(response.get_json()) == UNAVAILABLE
    assert response.headers["Retry-After"] == "1"
    assert elapsed < DEADLINE_MS / 1000 + MARGIN, (path, elapsed)
    return elapsed


@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_connection_closed_then_retried_answers_as_usual(
    app, stored, sent_by_path, fail_point, command, times
):
    """Once or twice in a row: each retry after a network error waits for the monitor to
    find the node again (half a second), well within the deadline."""
    token, _ = stored
    for path in _paths_sending(sent_by_path, command):
        fail_point.arm([command], {"times": times}, closeConnection=True)
        _assert_answers_as_usual(app, token, sent_by_path, path)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_connection_closed_every_time_is_a_503_at_the_deadline(
    app, stored, sent_by_path, fail_point, command
):
    token, _ = stored
    fail_point.arm([command], "alwaysOn", closeConnection=True)
    _assert_prompt_503(app, token, _paths_sending(sent_by_path, command)[0])


@pytest.mark.parametrize("code", NODE_GOING_AWAY)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_node_going_away_once_is_retried(app, stored, sent_by_path, fail_point, command, code):
    token, _ = stored
    path = _paths_sending(sent_by_path, command)[0]
    fail_point.arm([command], {"times": 1}, errorCode=code)
    _assert_answers_as_usual(app, token, sent_by_path, path)


@pytest.mark.parametrize("code", NODE_GOING_AWAY)
def test_a_node_that_stays_away_is_a_503_at_the_deadline(app, stored, fail_point, code, caplog):
    token, _ = stored
    fail_point.arm(COMMANDS, "alwaysOn", errorCode=code)
    with caplog.at_level(logging.WARNING, logger="web.errors"):
        _assert_prompt_503(app, token, "/v1/bots/")
    assert "database unavailable" in caplog.text


def test_a_command_the_server_stopped_at_its_time_limit_is_a_503(app, stored, fail_point):
    """MaxTimeMSExpired: the server gave up on the maxTimeMS the deadline sent, which pymongo
    raises as ExecutionTimeout, an OperationFailure, and does not retry."""
    token, _ = stored
    fail_point.arm(["aggregate"], {"skip": 1}, errorCode=50)  # past the caller's lookup
    _assert_prompt_503(app, token, "/v1/bots/")


def test_any_other_error_of_the_database_is_a_logged_500(app, stored, fail_point, json_log):
    """BadValue: the database refused what we asked, which no retry mends; a 503 would hide
    a bug behind "try again"."""
    token, _ = stored
    fail_point.arm(["aggregate"], {"skip": 1}, errorCode=2)  # past the caller's lookup
    response = app.test_client().get("/v1/bots/", headers={**token, "X-Request-ID": "bad-1"})
    body = assert_error(response, 500)
    assert "failCommand" not in json.dumps(body)
    [error] = [line for line in json_log() if line["level"] == "ERROR"]
    assert error["requestId"] == "bad-1" and "OperationFailure" in error["traceback"]


def test_a_stall_ends_at_the_deadline_and_the_service_recovers(
    app, stored, sent_by_path, fail_point
):
    token, paths = stored
    fail_point.arm(COMMANDS, "alwaysOn", blockConnection=True, blockTimeMS=4 * DEADLINE_MS)
    for path in paths:
        # The deadline, not something sooner, ended it.
        assert _assert_prompt_503(app, token, path) >= DEADLINE_MS / 1000 * 0.9
    fail_point.off()
    for path in paths:
        _assert_answers_as_usual(app, token, sent_by_path, path)


WORKERS, THREADS = 2, 4
# The measurement: a 6 s stall, three deadlines long.
STALL_MS = 3 * DEADLINE_MS
# How often an orchestrator might probe, and the timeout it would give each probe.
PROBE_EVERY, PROBE_TIMEOUT = 0.2, 1.0


@pytest.fixture(scope="module")
def gunicorn(fault_server, database):
    settings = {
        "MONGODB_URI": fault_server.uri,
        "MONGODB_DB": database.name,
        "MONGODB_TIMEOUT_MS": str(DEADLINE_MS),
        "RATELIMIT_ENABLED": "false",
    }
    with GunicornServer(settings, workers=WORKERS, threads=THREADS) as gunicorn:
        yield gunicorn


def _is_json(line: str) -> bool:
    return line.startswith("{")


def _timed(request) -> tuple:
    started = time.monotonic()
    status, headers, body = request()
    return status, headers.get("Retry-After"), body, time.monotonic() - started


@contextlib.contextmanager
def _probing(gunicorn):
    """`/healthz` on a new connection every PROBE_EVERY seconds, as a liveness probe asks,
    for as long as the block runs; yields the list of (status, seconds) it fills."""
    probes, done = [], threading.Event()

    def probe():
        while not done.is_set():
            status, *_, elapsed = _timed(lambda: gunicorn.request("GET", "/healthz"))
            probes.append((status, elapsed))
            done.wait(PROBE_EVERY)

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        yield probes
    finally:
        done.set()
        prober.join()


@pytest.mark.parametrize("stalled", [20, 100])
def test_a_stalled_database_never_holds_up_healthz_through_gunicorn(
    gunicorn, stored, fail_point, stalled
):
    """Requests at once to a stalled database, 2 workers of 4 threads: each worker lets 3
    of them wait on the database (DATABASE_PERMITS, GUNICORN_THREADS - 1) until their
    deadline and refuses the others at once, so its fourth thread keeps answering /healthz
    within a probe's timeout, however many are stalled. A gthread worker accepts greedily,
    so a burst mostly lands on one worker: without the permits, /healthz would queue behind
    stalled/4 deadlines. Once the stall is over, the service answers as usual at once."""
    token, _ = stored
    log_start = len(gunicorn.log())
    fail_point.arm(COMMANDS, "alwaysOn", blockConnection=True, blockTimeMS=STALL_MS)
    with _probing(gunicorn) as probes:
        started = time.monotonic()
        with ThreadPoolExecutor(stalled) as clients:
            answers = list(
                clients.map(
                    lambda _: _timed(lambda: gunicorn.request("GET", "/v1/bots/", token)),
                    range(stalled),
                )
            )
        everything = time.monotonic() - started
        fail_point.off()
        after = _timed(lambda: gunicorn.request("GET", "/v1/bots/", token))

    served = [
        line["durationMs"] / 1000
        for line in map(json.loads, filter(_is_json, gunicorn.log()[log_start:].splitlines()))
        if (line.get("path"), line.get("query"), line.get("status")) == ("/v1/bots/", [], 503)
    ]
    deadline = DEADLINE_MS / 1000
    waited = sorted(elapsed for *_, elapsed in answers)
    slowest_probe = max(elapsed for _, elapsed in probes)
    ran_to_deadline = sum(elapsed >= deadline * 0.9 for elapsed in served)
    print(
        f"\n{stalled} stalled requests, {WORKERS}x{THREADS} threads, deadline {deadline}s: "
        f"all answered in {everything:.2f}s; each client waited {waited[0]:.2f}-"
        f"{waited[-1]:.2f}s; {ran_to_deadline} ran to the deadline, {stalled - ran_to_deadline} "
        f"were refused at once; {len(probes)} probes of /healthz, the slowest "
        f"{slowest_probe:.2f}s; a request after the stall answered {after[0]} in {after[-1]:.2f}s"
    )
    assert [(status, retry, problem_checked(body)) for status, retry, body, _ in answers] == [
        (503, "1", UNAVAILABLE)
    ] * stalled
    assert waited[-1] < 2 * deadline + MARGIN
    assert len(served) == stalled
    assert 0 < ran_to_deadline <= WORKERS * (THREADS - 1) * math.ceil(waited[-1] / deadline)
    assert len(probes) >= deadline / PROBE_EVERY / 2
    assert {status for status, _ in probes} == {200}
    assert slowest_probe < PROBE_TIMEOUT
    assert after[0] == 200 and after[-1] < MARGIN
