"""Fixtures: the same API tests run on mongomock and on a real wire-protocol server.

The wire-protocol server is SecantusDB, started once per session on a free loopback port,
or whatever `MONGODB_URI` names (a real MongoDB, say).
"""

import contextlib
import os
import socket
import time
import uuid

import mongomock
import pymongo
import pytest
from flask import Flask

from app import create_app
from repositories import change_images
from runtime import logs
from tests.support import mongomock_types
from tests.support.factories import World
from tests.support.gunicorn_server import GunicornServer, servers_over
from tests.support.json_log import capture as json_log_capture
from tests.support.openapi_check import ValidatingClient
from tests.support.wire_server import WireServer


@pytest.fixture(scope="session")
def wire_uri():
    if os.environ.get("MONGODB_URI"):
        yield os.environ["MONGODB_URI"]
        return
    server = WireServer().start()
    try:
        yield server.uri
    finally:
        server.close()


@pytest.fixture(scope="session")
def wire_client(wire_uri):
    client = pymongo.MongoClient(
        wire_uri, serverSelectionTimeoutMS=5000, datetime_conversion="DATETIME_AUTO"
    )
    yield client
    client.close()


def _fresh_database(client):
    """Empty; on a real server, keeping the requests' pre-images as `flask db init` leaves a
    deployment's, which the live feeds need."""
    name = f"test_{uuid.uuid4().hex[:16]}"
    if not isinstance(client, mongomock.MongoClient):
        change_images.keep(client[name])
    yield client[name]
    client.drop_database(name)


def _backend(request):
    """A client of the backend a fixture's parameter names."""
    if request.param == "mongomock":
        return mongomock.MongoClient()
    return request.getfixturevalue("wire_client")


@pytest.fixture(params=["mongomock", "wire"])
def db(request):
    """A fresh, empty database on each backend."""
    yield from _fresh_database(_backend(request))


@pytest.fixture(scope="module", params=["mongomock", "wire"])
def module_db(request):
    """Like `db`, shared by a module's tests: for data they only read, stored once."""
    yield from _fresh_database(_backend(request))


@pytest.fixture
def wire_db(wire_client):
    """A fresh, empty database on the wire server, for what other processes must see too."""
    yield from _fresh_database(wire_client)


@pytest.fixture(scope="module")
def module_database(wire_client):
    """A fresh database on the wire server for a module's own gunicorn; each test of the
    module stores documents of its own there."""
    yield from _fresh_database(wire_client)


@pytest.fixture
def gunicorn(wire_uri, wire_db):
    """Starts `gunicorn wsgi:app` over `wire_db` with extra environment; stopped at teardown."""
    yield from servers_over(wire_uri, wire_db.name)


@pytest.fixture(scope="module")
def module_gunicorn(wire_uri, wire_client):
    """Each start costs seconds; a module whose tests store nothing can share one server."""
    with contextlib.contextmanager(_fresh_database)(wire_client) as database:
        settings = {"MONGODB_URI": wire_uri, "MONGODB_DB": database.name}
        with GunicornServer(settings) as server:
            yield server


# The caches are exact within a second of a write (runtime/changes.py), not at the next
# request: tests that write while an app runs turn them on where they test them (`cached_app`).
TEST_SETTINGS = {
    "TESTING": True,
    "RATELIMIT_ENABLED": False,
    "TOKEN_CACHE_SECONDS": 0,
    "CATALOGUE_CACHE_SIZE": 0,
    "SUMMARY_CACHE_SIZE": 0,
    # A developer's OTEL_* variables stay out of the tests' apps (tests/deployment/test_tracing.py).
    "TRACING": False,
}


def _stop_streams(app: Flask) -> None:
    """The change streams an app may have started (the caches', the live feeds'), stopped
    before its database goes: a stream left running logs its lost client."""
    app.extensions["changes"].stop()
    app.extensions["request_feeds"].stream.stop()


@pytest.fixture
def app(db):
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": db.name}, mongo_client=db.client)
    yield app
    _stop_streams(app)


@pytest.fixture
def make_app():
    """Apps of a test's own settings, their change streams stopped at teardown."""
    apps = []

    def make(settings: dict, mongo_client) -> Flask:
        apps.append(create_app(settings, mongo_client=mongo_client))
        return apps[-1]

    yield make
    for made in apps:
        _stop_streams(made)


@pytest.fixture
def cached_app(wire_db):
    """Apps over `wire_db` with the exact caches on, their change stream already live; closed at
    teardown. `mongo_client` may be a client of the test's own (counting commands, say)."""
    apps = []

    def make(mongo_client=None, **config) -> Flask:
        settings = {"TESTING": True, "RATELIMIT_ENABLED": False, "MONGODB_DB": wire_db.name}
        app = create_app({**settings, **config}, mongo_client=mongo_client or wire_db.client)
        apps.append(app)
        wait_until(lambda: app.extensions["changes"].live, "the change stream is live")
        return app

    yield make
    for app in apps:
        _stop_streams(app)


def wait_until(condition, what: str, seconds: float = 10.0):
    """`condition()`'s first true value, asked again until `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while not (result := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"Not within {seconds} s: {what}.")
        time.sleep(0.02)
    return result


@pytest.fixture
def offline_app():
    """For what needs no stored data (documents, pages, headers): mongomock, nothing in it."""
    return create_app(TEST_SETTINGS, mongo_client=mongomock.MongoClient())


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def module_client(module_db):
    """A client of an app over `module_db`, for tests that only read."""
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": module_db.name}, mongo_client=module_db.client)
    yield app.test_client()
    _stop_streams(app)


@pytest.fixture
def busy_port():
    """A loopback port something listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def json_log():
    """The JSON lines logged in this process during the test (tests/support/json_log.py)."""
    with json_log_capture() as lines:
        yield lines


@pytest.fixture
def world(db):
    return World(db)


def pytest_collection_modifyitems(items):
    """Mark `wire` whatever needs the wire-protocol server, so `make test-fast` can leave it
    out: a test on a fixture of it, or a test's `wire` case of a backend parameter."""
    for item in items:
        params = getattr(item, "callspec", None)
        on_wire = params is not None and "wire" in params.params.values()
        if on_wire or "wire_uri" in item.fixturenames:
            item.add_marker(pytest.mark.wire)


def pytest_configure(config):
    """The service's logging, applied as its processes do at start (`create_app` then finds it
    done), and before pytest's log capture adds its handlers to the root logger.

    A developer's `.env` would reach every `flask`, gunicorn and `make run` a test starts in
    the project folder, behind the settings the test chose: Flask's own switch turns it off
    for them all (tests/tooling/test_env_file.py turns it back on).

    Every app's test client checks each response against the app's OpenAPI document
    (tests/support/openapi_check.py), and mongomock knows the BSON types the keyset walk
    names (tests/support/mongomock_types.py)."""
    logs.configure()
    os.environ["FLASK_SKIP_DOTENV"] = "1"
    Flask.test_client_class = ValidatingClient
    mongomock_types.teach()
