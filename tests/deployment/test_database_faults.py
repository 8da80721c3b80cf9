"""Database outages: the API answers 503 promptly and recovers by itself, without a restart.

Runs against its own wire-protocol server, which it stops and starts again on the same port
and data while one application instance keeps serving.
"""

import time
import uuid

import pytest

from app import create_app
from runtime.database import admitted_db
from tests.conftest import TEST_SETTINGS
from tests.support.checks import problem_checked
from tests.support.factories import World, bearer
from tests.support.wire_server import WireServer

DRIVER_TIMEOUT_MS = 1000
# Generous: the driver gives up after DRIVER_TIMEOUT_MS; this bounds everything around it.
PROMPT_SECONDS = 10


@pytest.fixture
def server():
    wire = WireServer().start()
    yield wire
    wire.close()


@pytest.fixture
def app(server):
    """An app that builds its own client from the configuration, as in production."""
    app = create_app(
        {
            **TEST_SETTINGS,
            "MONGODB_URI": server.uri,
            "MONGODB_DB": f"faults_{uuid.uuid4().hex[:8]}",
            "MONGODB_TIMEOUT_MS": DRIVER_TIMEOUT_MS,
            "RATELIMIT_ENABLED": False,
        }
    )
    yield app
    app.extensions["mongo"].close()


def test_outage_is_a_prompt_503_and_the_service_recovers(server, app):
    client = app.test_client()
    with app.app_context():
        world = World(admitted_db())
        world.bot("steady")
        token = world.token(user=world.user("Ada"))

    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 200
    assert client.get("/readyz").status_code == 200

    server.stop()
    started = time.monotonic()
    readiness = client.get("/readyz")
    assert readiness.status_code == 503
    assert readiness.get_json()["code"] == 503
    assert time.monotonic() - started < PROMPT_SECONDS
    for path in ("/v1/bots/", "/v1/bots/steady/", "/v1/requests/"):
        started = time.monotonic()
        response = client.get(path, headers=bearer(token))
        elapsed = time.monotonic() - started

        assert response.status_code == 503, path
        assert problem_checked(response.get_json()) == {
            "code": 503,
            "message": "The database is unavailable; try again shortly.",
        }
        assert response.headers["Retry-After"] == "1"
        assert elapsed < PROMPT_SECONDS

    server.start()
    deadline = time.monotonic() + 30
    statuses = []
    while time.monotonic() < deadline:
        statuses.append(client.get("/v1/bots/", headers=bearer(token)).status_code)
        if statuses[-1] == 200:
            break
        time.sleep(0.5)
    assert statuses[-1] == 200, statuses
    assert set(statuses) <= {200, 503}
    assert client.get("/readyz").status_code == 200
