"""Database round trips of a warm request, counted with pymongo's command monitoring.

A warm request (its token already cached) costs a small fixed number of commands per
endpoint, the same for a page of 1 and of 100 and for ten times the data; the page's
documents are fetched by id, never more than `limit` of them, even deep in the list.
"""

import threading
import uuid

import pymongo
import pytest
from pymongo import monitoring

from app import create_app
from repositories.indexes import ensure_indexes
from tests.factories import World, bearer


class CommandLog(monitoring.CommandListener):
    def __init__(self):
        self.commands: list[dict] = []
        self._lock = threading.Lock()

    def started(self, event):
        with self._lock:
            self.commands.append(event.command)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass

    def take(self) -> list[dict]:
        with self._lock:
            taken, self.commands = self.commands, []
        return taken


@pytest.fixture
def log():
    return CommandLog()


@pytest.fixture
def monitored(wire_uri, wire_client, log):
    """A database on the wire-protocol server, and an app whose client reports its commands."""
    client = pymongo.MongoClient(
        wire_uri, event_listeners=[log], datetime_conversion="DATETIME_AUTO"
    )
    db = wire_client[f"round_trips_{uuid.uuid4().hex[:12]}"]
    ensure_indexes(db)
    app = create_app({"TESTING": True, "MONGODB_DB": db.name}, mongo_client=client)
    yield db, app.test_client()
    client.close()
    wire_client.drop_database(db.name)


def _fill(world: World, scene: dict, requests: int) -> None:
    for n in range(requests):
        world.bot_request(
            bot=scene["bots"][n % 2],
            created_by=scene["ada"] if n % 3 else scene["bob"],
            organization=scene["acme"] if n % 2 else None,
        )


def _scene(db) -> dict:
    world = World(db)
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    bob = world.user("Bob", organizations=[acme])
    service = world.service("Writing", "writing")
    tag = world.tag("fun")
    bots = [
        world.bot("public-bot", service=service, tags=[tag]),
        world.bot("acme-bot", organization=acme, is_public=False, service=service, tags=[tag]),
    ]
    scene = {"world": world, "acme": acme, "ada": ada, "bob": bob, "bots": bots}
    scene["token"] = world.token(user=ada)
    scene["request"] = world.bot_request(bot=bots[0], created_by=ada, organization=acme)
    _fill(world, scene, 30)
    return scene


ENDPOINTS = {
    "bots": ("/v1/bots/", 5),
    "bots by name": ("/v1/bots/?name=bot", 5),
    "bots by tags": ("/v1/bots/?tags={tag}", 5),
    "bots by service": ("/v1/bots/?service=writing", 6),
    "bot": ("/v1/bots/acme-bot/", 1),
    "organization bots": ("/v1/organizations/{acme}/bots/", 3),
    "organization bot": ("/v1/organizations/{acme}/bots/acme-bot/", 1),
    "requests": ("/v1/requests/", 5),
    "requests by name": ("/v1/requests/?name=bot", 6),
    "request": ("/v1/requests/{request}/", 1),
    "organization requests": ("/v1/organizations/{acme}/requests/", 3),
    "organization request": ("/v1/organizations/{acme}/requests/{request}/", 1),
}


def _warm_commands(client, log, url: str, token: str) -> list[dict]:
    assert client.get(url, headers=bearer(token)).status_code == 200
    log.take()
    response = client.get(url, headers=bearer(token))
    assert response.status_code == 200
    return log.take()


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_warm_request_costs_a_fixed_number_of_round_trips(monitored, log, endpoint):
    db, client = monitored
    scene = _scene(db)
    path, expected = ENDPOINTS[endpoint]
    url = path.format(acme=scene["acme"], request=scene["request"], tag=db.tags.find_one()["_id"])
    separator = "&" if "?" in url else "?"
    counted = []
    for limit, requests in ((1, 0), (100, 0), (100, 300)):
        _fill(scene["world"], scene, requests)
        commands = _warm_commands(client, log, f"{url}{separator}limit={limit}", scene["token"])
        assert not [c for c in commands if "tokens" in c.values()], "the token was not cached"
        counted.append(len(commands))
    assert counted == [expected] * 3, [sorted(command) for command in commands]


def test_a_deep_page_fetches_only_its_own_documents(monitored, log):
    db, client = monitored
    scene = _scene(db)
    _fill(scene["world"], scene, 300)
    url = "/v1/requests/?limit=10&page=20"
    commands = _warm_commands(client, log, url, scene["token"])

    finds = [command for command in commands if "find" in command]
    assert finds and all(set(c["projection"]) == {"_id", "createdAt"} for c in finds)
    [fetch] = [c for c in commands if "aggregate" in c and "$lookup" in str(c["pipeline"])]
    assert len(fetch["pipeline"][0]["$match"]["_id"]["$in"]) == 10
