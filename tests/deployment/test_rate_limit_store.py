"""A rate-limit store shared by gunicorn's workers (a real Redis), and what an outage does.

The limit is shared while Redis answers; while it is down each worker keeps the same limit in
its own memory, says so once, and nothing becomes a 500; once Redis is back the limit is
shared again.
"""

import contextlib
import time

import http_sf
import pytest
import redis

from tests.support import redis_server
from tests.support.factories import World, bearer

pytestmark = pytest.mark.skipif(
    not redis_server.available(),
    reason=f"needs {redis_server.BINARY} on PATH (Debian: apt-get install redis-server)",
)

OUTAGE_WARNING = "Rate limit storage unreachable"


@pytest.fixture
def closing():
    with contextlib.ExitStack() as stack:
        yield stack


@pytest.fixture
def store():
    server = redis_server.RedisServer().start()
    yield server
    server.close()


def _statuses(server, token: str, connections: list, rounds: int) -> list[int]:
    """`rounds` requests on each connection, taking turns."""
    return [
        server.request("GET", "/v1/bots/", bearer(token), connection=connection)[0]
        for _ in range(rounds)
        for connection in connections
    ]


def _wait_until_shared(server, store, connections: list, timeout: float = 90.0) -> None:
    """Until each worker writes to Redis again: it checks the store with growing pauses."""
    keys = redis.Redis.from_url(store.uri)
    try:
        for number, connection in enumerate(connections):
            deadline = time.monotonic() + timeout
            probe = 0
            while True:
                before = keys.dbsize()
                probe += 1
                headers = bearer(f"bcs_probe-{number}-{probe}")
                assert server.request("GET", "/v1/openapi.json", headers, connection)[0] == 200
                if keys.dbsize() > before:
                    break
                assert time.monotonic() < deadline, f"worker {number} never used Redis again"
                time.sleep(0.5)
    finally:
        keys.close()


def test_a_limit_is_shared_by_the_workers_and_survives_the_store_going_down(
    gunicorn, wire_db, store, closing
):
    world = World(wire_db)
    tokens = [world.token(user=world.user(f"User {n}")) for n in range(4)]
    server = gunicorn({"RATELIMIT_STORAGE_URI": store.uri, "RATELIMIT_DEFAULT": "4 per minute"})
    connections = list(server.connections_per_worker().values())
    for connection in connections:
        closing.callback(connection.close)

    shared = _statuses(server, tokens[0], connections, rounds=3)

    store.stop()
    per_process = _statuses(server, tokens[1], connections, rounds=5)
    warnings_in_outage = server.log().count(OUTAGE_WARNING)

    store.start()
    _wait_until_shared(server, store, connections)
    shared_again = _statuses(server, tokens[2], connections, rounds=3)

    store.stop()
    second_outage = _statuses(server, tokens[3], connections, rounds=1)

    assert shared == [200, 200, 200, 200, 429, 429]
    assert per_process == [200] * 8 + [429, 429]
    assert warnings_in_outage == len(connections)
    assert shared_again == [200, 200, 200, 200, 429, 429]
    assert second_outage == [200, 200]
    assert server.log().count(OUTAGE_WARNING) == 2 * len(connections)
    assert "Traceback" not in server.log()


def test_the_failed_authentication_budget_lives_in_the_same_store(gunicorn, store, closing):
    server = gunicorn(
        {
            "RATELIMIT_STORAGE_URI": store.uri,
            "RATELIMIT_DEFAULT": "100 per minute",
            "RATELIMIT_AUTH_FAILURES": "3 per minute",
        }
    )
    connections = list(server.connections_per_worker().values())
    for connection in connections:
        closing.callback(connection.close)
    guesses = (f"bcs_guess-{n}" for n in range(100))

    def guess(connection) -> int:
        return server.request("GET", "/v1/bots/", bearer(next(guesses)), connection)[0]

    shared = [guess(connection) for connection in connections * 2]
    store.stop()
    per_process = [guess(connection) for connection in connections * 4]

    assert shared == [401, 401, 401, 429]
    assert per_process == [401, 401] * 3 + [429, 429]


def test_the_standard_fields_tell_the_shared_count_then_each_workers(
    gunicorn, wire_db, store, closing
):
    """`RateLimit` counts in Redis while it answers (one count for both workers) and in each
    worker's memory while it is down, a valid structured field throughout."""
    world = World(wire_db)
    shared_token, outage_token = (world.token(user=world.user(name)) for name in "AB")
    server = gunicorn({"RATELIMIT_STORAGE_URI": store.uri, "RATELIMIT_DEFAULT": "4 per minute"})
    connections = list(server.connections_per_worker().values())
    for connection in connections:
        closing.callback(connection.close)

    def remaining(token: str, connection) -> list:
        status, headers, _ = server.request("GET", "/v1/bots/", bearer(token), connection)
        assert status == 200
        policies = http_sf.parse(headers["RateLimit-Policy"].encode(), tltype="list")
        assert policies == [("default", {"q": 4, "w": 60})]
        [(name, parameters)] = http_sf.parse(headers["RateLimit"].encode(), tltype="list")
        return [name, parameters["r"]]

    shared = [remaining(shared_token, connection) for connection in connections]
    store.stop()
    outage = [remaining(outage_token, connection) for connection in connections]

    assert shared == [["default", 3], ["default", 2]]
    assert outage == [["default", 3], ["default", 3]]
