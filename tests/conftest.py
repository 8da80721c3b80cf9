"""Fixtures: the same API tests run on mongomock and on a real wire-protocol server.

The wire-protocol server is SecantusDB, started once per session on a free loopback port,
or whatever `MONGODB_URI` names (a real MongoDB, say).
"""

import os
import uuid

import mongomock
import pymongo
import pytest

from app import create_app
from tests.factories import World
from tests.wire_server import WireServer


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


@pytest.fixture(params=["mongomock", "wire"])
def db(request):
    """A fresh, empty database on each backend."""
    if request.param == "mongomock":
        client = mongomock.MongoClient()
    else:
        client = request.getfixturevalue("wire_client")
    name = f"test_{uuid.uuid4().hex[:16]}"
    yield client[name]
    client.drop_database(name)


TEST_SETTINGS = {"TESTING": True, "RATELIMIT_ENABLED": False}


@pytest.fixture
def app(db):
    return create_app({**TEST_SETTINGS, "MONGODB_DB": db.name}, mongo_client=db.client)


@pytest.fixture
def offline_app():
    """For what needs no stored data (documents, pages, headers): mongomock, nothing in it."""
    return create_app(TEST_SETTINGS, mongo_client=mongomock.MongoClient())


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def world(db):
    return World(db)
