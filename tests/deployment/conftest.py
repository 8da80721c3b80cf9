"""A wire server of a module's own, with MongoDB's `failCommand` fail point; gunicorns of a
module's own; connections held by each worker of one; and the live feeds' `scene`.

A fail point is server-wide, and a stall would hold up every other test: each module that
arms one gets a server to itself (`fault_server`, module-scoped).
"""

import pymongo
import pytest

from tests.support.factories import World
from tests.support.gunicorn_server import servers_over
from tests.support.wire_server import StandaloneServer, WireServer


@pytest.fixture(scope="module")
def fault_server():
    wire = WireServer().start()
    yield wire
    wire.close()


@pytest.fixture(scope="module")
def fault_admin(fault_server):
    client = pymongo.MongoClient(fault_server.uri, serverSelectionTimeoutMS=5000)
    yield client
    client.close()


class FailPoint:
    def __init__(self, admin: pymongo.MongoClient):
        self._admin = admin

    def arm(self, commands, mode, **data) -> None:
        self._admin.admin.command(
            "configureFailPoint",
            "failCommand",
            mode=mode,
            data={"failCommands": list(commands), **data},
        )

    def off(self) -> None:
        self._admin.admin.command("configureFailPoint", "failCommand", mode="off")


@pytest.fixture
def fail_point(fault_admin):
    """`failCommand` on `fault_server`, always disarmed at the end of the test."""
    point = FailPoint(fault_admin)
    yield point
    point.off()


@pytest.fixture
def open_connections():
    """Opens one keep-alive connection held by each worker of a server; closed at teardown."""
    opened = []

    def open_for(server) -> list:
        found = list(server.connections_per_worker().values())
        opened.extend(found)
        return found

    yield open_for
    for connection in opened:
        connection.close()


@pytest.fixture(scope="module")
def module_gunicorns(wire_uri, module_database):
    """Starts gunicorn over `module_database` with extra environment, for the module's tests
    to share; stopped when the module ends."""
    yield from servers_over(wire_uri, module_database.name)


@pytest.fixture
def stored(module_database):
    return World(module_database)


@pytest.fixture(scope="module")
def standalone():
    """A wire-protocol server that is no replica set: no change stream can run on it."""
    server = StandaloneServer().start()
    yield server
    server.close()


@pytest.fixture
def scene(wire_db):
    """A member of Acme with a token, Acme's bot, and another organization: what the live
    feeds' tests write requests for."""
    world = World(wire_db)
    acme, other = world.organization("Acme"), world.organization("Other")
    ada = world.user("Ada", organizations=[acme])
    bot = world.bot("writer", organization=acme)
    return {
        "world": world,
        "db": wire_db,
        "acme": acme,
        "other": other,
        "ada": ada,
        "bot": bot,
        "token": world.token(user=ada),
    }
