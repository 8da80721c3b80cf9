"""Probes: /healthz never asks the database, /readyz pings it with a short timeout."""

import time

import pymongo
import pytest

from app import create_app
from tests.conftest import TEST_SETTINGS
from tests.support.checks import problem_checked
from tests.support.wire_server import free_port


@pytest.fixture
def unreachable_app():
    """A database nobody listens for."""
    client = pymongo.MongoClient(
        f"mongodb://127.0.0.1:{free_port()}/?directConnection=true",
        connect=False,
        serverSelectionTimeoutMS=5000,
    )
    yield create_app({**TEST_SETTINGS, "READYZ_TIMEOUT_MS": 300}, mongo_client=client)
    client.close()


def test_healthz_is_ok_without_a_token(client):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_healthz_does_not_need_the_database(unreachable_app):
    response = unreachable_app.test_client().get("/healthz")

    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_readyz_is_ok_when_the_database_answers(client):
    response = client.get("/readyz")

    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_readyz_is_503_within_its_timeout_when_the_database_is_gone(unreachable_app):
    started = time.monotonic()
    response = unreachable_app.test_client().get("/readyz")
    elapsed = time.monotonic() - started

    assert response.status_code == 503
    assert problem_checked(response.get_json()) == {
        "code": 503,
        "message": "The database is unavailable; try again shortly.",
    }
    assert response.headers["Retry-After"] == "1"
    assert elapsed < 4, "the ping must be bounded by READYZ_TIMEOUT_MS, not the client's 5 s"
