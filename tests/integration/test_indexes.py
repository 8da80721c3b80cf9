"""No repository query needs a collection scan of `bots` or `botrequests` (wire backend).

Every command the API sends while serving a broad set of representative requests (each
caller kind, endpoint, filter, sort attribute and direction, a deep page) is captured with
command monitoring, then judged on the indexes of repositories/indexes.py:

- by `explain`, where it reports an index: both MongoDB and the embedded engine (SecantusDB)
  tell the truth when they say IXSCAN;
- else by time, because the embedded engine's explain says COLLSCAN for some filters it in
  fact serves from an index (it plans on the first indexed field alone). The collections
  hold thousands of documents that no representative query selects, so a query that scans
  takes about as long as a scan, and one served by an index a small fraction of it.

One query shape may read the whole catalogue: a case-insensitive substring of a bot's name
with nothing else to narrow it (an admin's search, the bots a request name filter names).
No B-tree bound serves a substring; MongoDB scans the `name` index keys, and an engine
that cannot test index keys reads the documents. It is never allowed on `botrequests`.

Two shapes on `bots` are judged by MongoDB's rules instead, where the embedded engine scans
(its own limit): a pipeline that starts with a `$sort` on the keys an index starts with (an
admin's whole catalogue), since "$sort can take advantage of an index if it is used in the
first stage of a pipeline" (the `$sort` stage's documentation); and a `$match` that names
the first key of an index by equality (a branch beside a tag or service filter), which
bounds that index's scan (MongoDB's index prefixes).
"""

import os
import statistics
import time
import uuid

import pymongo
import pytest
from bson import ObjectId

from app import create_app
from repositories.indexes import INDEXES, ensure_indexes
from schemas.queries import (
    BotListQuerySchema,
    BotRequestListQuerySchema,
    OrganizationBotListQuerySchema,
    OrganizationBotRequestListQuerySchema,
)
from tests.conftest import TEST_SETTINGS
from tests.support.command_log import CommandLog
from tests.support.factories import World, bearer

# Thousands of documents, each query timed: a minute of the engine's CPU, so `make test-slow`
# runs it (CI runs both tiers).
pytestmark = pytest.mark.slow

FILLER_BOTS = 6_000
FILLER_REQUESTS = 15_000
SCAN_FRACTION = 4
META = {"lsid", "$db", "$clusterTime", "$readPreference", "txnNumber", "signature"}


def _fill(db) -> None:
    """Documents of another organization that no representative caller can see."""
    outsider, stranger = ObjectId(), ObjectId()
    db.bots.insert_many(
        {"slug": f"filler-{n}", "name": f"Filler {n}", "isPublic": False, "organization": outsider}
        for n in range(FILLER_BOTS)
    )
    bot = db.bots.find_one({"organization": outsider})["_id"]
    db.botrequests.insert_many(
        {"bot": bot, "createdBy": stranger, "organization": outsider, "createdAt": None}
        for _ in range(FILLER_REQUESTS)
    )


def _sortable(query) -> tuple[str, ...]:
    """What a list accepts in `sortBy`, from its schema: every one must be served."""
    return query().fields["sort"].attributes


def _urls(world: World) -> list[tuple[str, str]]:
    acme, beta = world.organization("Acme"), world.organization("Beta")
    ada = world.user("Ada", organizations=[acme, beta])
    admin = world.user("Root", organizations=[acme], role="admin")
    cy = world.user("Cy")
    service = world.service("Writing", "writing", "text")
    tag = world.tag("fun")
    bots = [
        world.bot("public-bot", service=service, tags=[tag]),
        world.bot("acme-bot", organization=acme, is_public=False, service=service, tags=[tag]),
        world.bot("beta-bot", organization=beta, tags=[tag]),
    ]
    request = world.bot_request(bot=bots[1], created_by=ada, organization=acme)
    cy_request = world.bot_request(bot=bots[0], created_by=cy, organization=acme)
    for n in range(12):
        world.bot_request(bot=bots[n % 3], created_by=ada, organization=[None, acme, beta][n % 3])
    tokens = {
        "ada": world.token(user=ada),
        "admin": world.token(user=admin),
        "acme": world.token(organization=acme),
        "cy": world.token(user=cy),
    }
    lists = [
        f"{path}?sortBy={attribute}:{direction}"
        for path, query in (
            ("/v1/bots/", BotListQuerySchema),
            (f"/v1/organizations/{acme}/bots/", OrganizationBotListQuerySchema),
        )
        for attribute in _sortable(query)
        for direction in ("asc", "desc")
    ]
    bot_filters = [
        "name=bot",
        f"tags={tag}",
        "service=writing",
        f"serviceId={service}",
        "serviceSlug=writing",
        "serviceDirectory=text",
        "custom=true",
        f"custom=true&name=acme&tags={tag}&service=writing&sortBy=creditCost:desc,name",
        "page=3&limit=1",
    ]
    lists += [f"/v1/bots/?{query}" for query in bot_filters]
    lists += [f"/v1/organizations/{acme}/bots/?name=bot&tags={tag}"]
    period = "createdFrom=2026-01-02T03:05:00Z&createdTo=2026-01-02T05:00:00%2B01:00"
    request_filters = [
        "",
        "name=bot",
        "bot=acme-bot",
        "bot=no-such-bot",
        "bot=public-bot&name=public",
        "createdFrom=2026-01-02T03:10:00Z",
        "createdTo=2026-01-03",
        period,
        f"bot=acme-bot&name=bot&{period}&page=2&limit=2",
    ]
    member_filters = [
        f"createdBy={ada}",
        f"createdBy={ada}&bot=beta-bot",
        f"createdBy={ada}&name=bot&{period}",
        f"createdBy={cy}&bot=public-bot&{period}&page=2&limit=1",
    ]
    request_lists, organization_request_lists = [], []
    for direction in ("asc", "desc"):
        request_lists += [
            f"?sortBy={attribute}:{direction}&{q}"
            for attribute in _sortable(BotRequestListQuerySchema)
            for q in request_filters
        ]
        organization_request_lists += [
            f"?sortBy={attribute}:{direction}&{q}"
            for attribute in _sortable(OrganizationBotRequestListQuerySchema)
            for q in member_filters
        ]
    request_lists += ["?page=4&limit=3", "?sortBy=createdAt,updatedAt:desc"]
    organization_request_lists += request_lists
    urls = [(caller, url) for caller in ("ada", "admin", "acme") for url in lists]
    urls += [
        (caller, f"/v1/bots/{slug}/")
        for caller in ("ada", "admin", "acme")
        for slug in ("public-bot", "acme-bot")
    ]
    urls += [(caller, f"/v1/organizations/{acme}/bots/acme-bot/") for caller in ("ada", "acme")]
    urls += [("ada", f"/v1/requests/{query}") for query in request_lists]
    urls += [
        (caller, f"/v1/organizations/{acme}/requests/{query}")
        for caller in ("ada", "acme")
        for query in organization_request_lists
    ]
    urls += [("ada", f"/v1/requests/{request}/"), ("cy", f"/v1/requests/{cy_request}/")]
    urls += [
        (caller, f"/v1/organizations/{acme}/requests/{request}/") for caller in ("ada", "acme")
    ]
    urls += [("cy", f"/v1/organizations/{acme}/requests/{cy_request}/")]
    january = "from=2026-01-01&to=2026-02-01"
    urls += [("ada", f"/v1/usage/?{january}&groupBy={group}") for group in ("bot", "day")]
    urls += [
        (caller, f"/v1/organizations/{acme}/usage/?{january}&groupBy={group}")
        for caller in ("ada", "acme")
        for group in ("bot", "day", "user")
    ]
    return [(tokens[caller], url) for caller, url in urls]


@pytest.fixture(scope="module")
def captured(wire_uri, wire_client):
    """The distinct commands on bots and botrequests, with their database."""
    log = CommandLog()
    client = pymongo.MongoClient(
        wire_uri, event_listeners=[log], datetime_conversion="DATETIME_AUTO"
    )
    db = wire_client[f"indexes_{uuid.uuid4().hex[:12]}"]
    _fill(db)
    urls = _urls(World(db))
    ensure_indexes(db)
    api = create_app({**TEST_SETTINGS, "MONGODB_DB": db.name}, mongo_client=client).test_client()
    for token, url in urls:
        assert api.get(url, headers=bearer(token)).status_code == 200, url
    commands = {}
    for command in log.take():
        command = {key: value for key, value in command.items() if key not in META}
        if next(iter(command.values())) in ("bots", "botrequests"):
            commands.setdefault(repr(command), command)
    yield db, list(commands.values())
    client.close()
    # Dropped only on a server of MONGODB_URI: the session's own server is thrown away whole,
    # and a drop would keep it busy for seconds.
    if os.environ.get("MONGODB_URI"):
        wire_client.drop_database(db.name)


def _has_collscan(plan) -> bool:
    if isinstance(plan, dict):
        return plan.get("stage") == "COLLSCAN" or any(map(_has_collscan, plan.values()))
    if isinstance(plan, list):
        return any(map(_has_collscan, plan))
    return False


def _seconds(db, command: dict) -> float:
    """The best of five runs: load from other processes only ever adds time."""
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        db.command(command)
        timings.append(time.perf_counter() - started)
    return min(timings)


def _filter(command: dict) -> dict:
    if "aggregate" in command:
        return command["pipeline"][0].get("$match", {}) if command["pipeline"] else {}
    return command.get("filter") or command.get("query") or {}


def _whole_catalogue_name_search(command: dict) -> bool:
    return command.get(next(iter(command))) == "bots" and _filter(command).keys() == {"name"}


def _sorted_on_an_index(command: dict) -> bool:
    """A pipeline that starts with a `$sort` whose keys, in one direction or the other, are
    those an index of ours starts with."""
    stages = command.get("pipeline") or [{}]
    sort = list(stages[0].get("$sort", {}).items())
    if not sort:
        return False
    flipped = [(field, -direction) for field, direction in sort]
    starts = [model.document["key"] for model in INDEXES[command[next(iter(command))]]]
    return any(list(keys.items())[: len(sort)] in (sort, flipped) for keys in starts)


def _led_by_an_index(command: dict) -> bool:
    """A `bots` pipeline whose `$match` names the first key of an index of ours by equality
    or `$in`."""
    if command.get("aggregate") != "bots":
        return False
    match = _filter(command)
    firsts = {next(iter(model.document["key"])) for model in INDEXES["bots"]}
    return any(
        field in firsts and (not isinstance(value, dict) or value.keys() == {"$in"})
        for field, value in match.items()
    )


def test_the_representative_requests_issue_every_kind_of_query(captured):
    _, commands = captured
    kinds = {(next(iter(c)), next(iter(c.values()))) for c in commands}
    assert kinds >= {("aggregate", "bots"), ("aggregate", "botrequests"), ("distinct", "bots")}


def test_no_query_scans_bots_or_requests(captured):
    db, commands = captured
    scan = {
        name: statistics.median(
            _seconds(db, {"find": name, "filter": {"noSuchField": 1}}) for _ in range(2)
        )
        for name in ("bots", "botrequests")
    }
    scanning = []
    for command in commands:
        # The shapes judged by MongoDB's rules first: they need neither a plan nor a timing.
        if _whole_catalogue_name_search(command) or _sorted_on_an_index(command):
            continue
        if _led_by_an_index(command):
            continue
        explained = db.command({"explain": command, "verbosity": "queryPlanner"})
        if not _has_collscan(explained):
            continue
        collection = command[next(iter(command))]
        seconds = _seconds(db, command)
        if seconds * SCAN_FRACTION < scan[collection]:
            continue
        scanning.append(
            f"{seconds * 1000:.0f} ms (scan {scan[collection] * 1000:.0f} ms): {command}"
        )
    assert not scanning, "\n".join(scanning)
