"""Database round trips per request (issue 2): no N+1, joins only for the page's items.

Counted with pymongo's command monitoring, so on the wire-protocol server only: mongomock
has no wire and no monitoring.
"""

import uuid

import pymongo
import pytest
from pymongo import monitoring

from app import create_app
from tests.factories import World, bearer


class CommandLog(monitoring.CommandListener):
    def __init__(self):
        self.commands = []

    def started(self, event):
        self.commands.append((event.command_name, event.command))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.fixture
def monitored(wire_uri):
    log = CommandLog()
    client = pymongo.MongoClient(
        wire_uri,
        serverSelectionTimeoutMS=5000,
        datetime_conversion="DATETIME_AUTO",
        event_listeners=[log],
    )
    name = f"test_{uuid.uuid4().hex[:16]}"
    app = create_app({"TESTING": True, "MONGODB_DB": name}, mongo_client=client)
    yield app.test_client(), World(client[name]), log
    client.drop_database(name)
    client.close()


@pytest.fixture
def crowded(monitored):
    """Sixty bots and requests, all visible to one member, with every reference set."""
    client, world, log = monitored
    acme = world.organization()
    user = world.user("Ada", organizations=[acme])
    service, tag = world.service(), world.tag()
    for number in range(60):
        bot = world.bot(f"bot-{number:02d}", organization=acme, service=service, tags=[tag])
        world.bot_request(bot=bot, created_by=user, organization=acme)
    return client, log, world.token(user=user), {"acme": acme, "tag": tag}


LISTS = [
    "/v1/bots/?limit={limit}",
    "/v1/bots/?limit={limit}&custom=true&name=bot&tags={tag}&service=writing",
    "/v1/organizations/{acme}/bots/?limit={limit}",
    "/v1/requests/?limit={limit}",
    "/v1/requests/?limit={limit}&name=bot",
    "/v1/organizations/{acme}/requests/?limit={limit}",
]


def _commands(client, log, path: str, token: str) -> list:
    log.commands.clear()
    response = client.get(path, headers=bearer(token))
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["results"], "the page must hold items for the count to mean anything"
    return list(log.commands)


@pytest.mark.parametrize("template", LISTS)
def test_round_trips_do_not_grow_with_the_page(crowded, template):
    client, log, token, ids = crowded
    counts = {}
    for limit in (1, 10, 50):
        commands = _commands(client, log, template.format(limit=limit, **ids), token)
        counts[limit] = [name for name, _ in commands]
    assert counts[1] == counts[10] == counts[50], counts


@pytest.mark.parametrize("template", LISTS)
def test_joins_run_after_the_page_is_cut(crowded, template):
    """Every $lookup of a pipeline comes after its $limit: joins touch the page only."""
    client, log, token, ids = crowded
    for name, command in _commands(client, log, template.format(limit=5, **ids), token):
        if name != "aggregate":
            continue
        stages = [next(iter(stage)) for stage in command["pipeline"]]
        if "$lookup" in stages:
            assert "$limit" in stages and stages.index("$limit") < stages.index("$lookup"), stages
