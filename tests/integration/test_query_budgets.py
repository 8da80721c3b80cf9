"""The read budgets of repositories/pipelines.py, counted on the wire with a command listener
(docs/performance.md#round-trips-per-warm-request), on the wire-protocol server or MONGODB_URI.

A list page sends at most one query per visibility branch and one to fetch its documents,
plus a count per branch when counted: at page 1 as deep in the list, offset or keyset; a
single request or bot, one query; an export, one query per branch (and one to fetch, of
several) for each 1,000 rows it sends, and a few more (`_export_budget`).
Only the commands on the list's own collection are counted: the caller's lookup,
the summaries and a filter's lookup of bots have budgets of their own
(tests/integration/test_round_trips.py). Caches are off (TEST_SETTINGS).
"""

import datetime as dt
import math
import os
import uuid

import pymongo
import pytest

from app import create_app
from repositories.indexes import ensure_indexes
from tests.conftest import TEST_SETTINGS
from tests.support.command_log import CommandLog
from tests.support.factories import World, bearer

REQUESTS = 400
BIG = 4_500  # Globex's requests, every 17 minutes
# path: (collection, visibility branches of Ada, a member of Acme: her own requests and
# Acme's others; the public bots and Acme's)
LISTS = {
    "4.1": ("/v1/requests/", "botrequests", 2),
    "4.2": ("/v1/organizations/{acme}/requests/", "botrequests", 1),
    "4.5": ("/v1/bots/", "bots", 2),
    "4.6": ("/v1/organizations/{acme}/bots/", "bots", 1),
}
# The pages of a list, and whether they are counted (offset pages are, by default).
PAGES = {
    "offset page 1": ("limit=10", True),
    "offset page 20": ("limit=10&page=20", True),
    "offset page 20, uncounted": ("limit=10&page=20&count=none", False),
    "keyset page 1": ("pagination=keyset&limit=10", False),
    "keyset page 1, counted": ("pagination=keyset&limit=10&count=exact", True),
}


@pytest.fixture(scope="module")
def scene(wire_uri, wire_client):
    """Ada, a member of Acme, sees 460 bots and REQUESTS requests from January on (her own
    and Acme's others), enough for 20 pages of 10 of each list; Globex holds BIG requests of
    its member Gil, which its token exports. Indexed once written: building an index once is
    quicker than keeping it at every insert."""
    log = CommandLog()
    client = pymongo.MongoClient(
        wire_uri, event_listeners=[log], datetime_conversion="DATETIME_AUTO"
    )
    db = wire_client[f"budgets_{uuid.uuid4().hex[:12]}"]
    world = World(db)
    acme = world.organization("Acme")
    ada, bob = world.user("Ada", organizations=[acme]), world.user("Bob", organizations=[acme])
    bots = [world.bot(f"public-{n:03d}") for n in range(230)]
    bots += [world.bot(f"acme-{n:03d}", organization=acme, is_public=False) for n in range(230)]
    start = dt.datetime(2026, 1, 1)
    for n in range(REQUESTS):
        world.bot_request(
            bot=bots[n % 3], created_by=ada if n % 3 else bob, organization=acme,
            createdAt=start + dt.timedelta(hours=1.8 * n),
        )  # fmt: skip
    big = world.organization("Globex")
    gil = world.user("Gil", organizations=[big])
    db.botrequests.insert_many(
        {"bot": bots[0], "createdBy": gil, "organization": big, "ip": "10.0.0.1",
         "createdAt": start + dt.timedelta(minutes=17 * n), "updatedAt": start}
        for n in range(BIG)
    )  # fmt: skip
    ensure_indexes(db)
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": db.name}, mongo_client=client)
    yield {
        "client": app.test_client(),
        "log": log,
        "token": world.token(user=ada),
        "acme": str(acme),
        "big": str(big),
        "big_token": world.token(organization=big),
        "request": world.bot_request(bot=bots[0], created_by=ada, organization=acme),
    }
    client.close()
    # Dropped only on a server of MONGODB_URI: the session's own server is thrown away whole,
    # and a drop would keep it busy for seconds.
    if os.environ.get("MONGODB_URI"):
        wire_client.drop_database(db.name)


def _queries(scene, url: str, collection: str, token: str = "token") -> tuple[list[dict], dict]:
    """The commands on `collection` that a warm `url` sends, and its answer."""
    commands, response = scene["log"].warm(scene["client"], url, bearer(scene[token]))
    return [c for c in commands if next(iter(c.values())) == collection], response


def _deep_keyset_url(scene, path: str) -> str:
    """The keyset page 20 pages into the list, its cursor followed from page 1."""
    url = f"{path}?pagination=keyset&limit=10"
    for _ in range(19):
        body = scene["client"].get(url, headers=bearer(scene["token"])).get_json()
        url = f"{path}?pagination=keyset&limit=10&cursor={body['nextCursor']}"
    return url


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("endpoint", LISTS)
def test_a_list_page_sends_a_query_per_branch_and_one_more(scene, endpoint, page):
    template, collection, branches = LISTS[endpoint]
    query, counted = PAGES[page]
    commands, response = _queries(scene, f"{template.format(**scene)}?{query}", collection)
    assert len(response.get_json()["results"]) == 10
    assert len(commands) <= branches + 1 + (branches if counted else 0), commands


@pytest.mark.parametrize("endpoint", LISTS)
def test_a_deep_keyset_page_costs_what_page_1_costs(scene, endpoint):
    template, collection, branches = LISTS[endpoint]
    url = _deep_keyset_url(scene, template.format(**scene))
    commands, response = _queries(scene, url, collection)
    assert len(response.get_json()["results"]) == 10 and response.get_json()["nextCursor"]
    assert len(commands) <= branches + 1, commands


@pytest.mark.parametrize(
    ("path", "collection"),
    [
        ("/v1/requests/{request}/", "botrequests"),
        ("/v1/organizations/{acme}/requests/{request}/", "botrequests"),
        ("/v1/bots/acme-001/", "bots"),
        ("/v1/organizations/{acme}/bots/acme-001/", "bots"),
    ],
)
def test_a_single_item_is_one_query(scene, path, collection):
    commands, _ = _queries(scene, path.format(**scene), collection)
    assert len(commands) == 1, commands


def _export_budget(rows: int, branches: int, sort: str) -> int:
    """Each read of an export (a window, or a keyset page) asks each branch once, and of
    several branches fetches the batch by id: one read for each 1,000 rows, and besides, by
    `createdAt` the windows that find the density (STARTUP), else the page where the walk
    ends, which asks for the tail."""
    per_read = branches + (branches > 1)
    extra = STARTUP if sort.startswith("createdAt") else 1
    return per_read * (math.ceil(rows / 1000) + extra)


STARTUP = 3  # windows of a minute, 4 hours, 45 days (SPREAD) reach any period


@pytest.mark.parametrize(
    ("path", "branches"),
    [("/v1/requests/export", 2), ("/v1/organizations/{acme}/requests/export", 1)],
)
@pytest.mark.parametrize("sort", ["createdAt:desc", "updatedAt:desc"])
def test_a_small_export_costs_a_few_reads(scene, path, branches, sort):
    url = f"{path.format(**scene)}?createdFrom=2026-01-01T00:00:00Z&createdTo=2026-03-01T00:00:00Z"
    commands, response = _queries(scene, f"{url}&sortBy={sort}", "botrequests")
    rows = response.get_data(as_text=True).count("\n")
    assert rows >= REQUESTS
    assert len(commands) <= _export_budget(rows, branches, sort), commands


@pytest.mark.parametrize("sort", ["createdAt:desc", "createdAt:asc", "updatedAt:desc"])
def test_a_large_export_costs_a_query_for_each_1000_rows_and_a_few_more(scene, sort):
    url = (
        "/v1/organizations/{big}/requests/export?createdFrom=2026-01-01T00:00:00Z"
        "&createdTo=2026-02-25T00:00:00Z&sortBy="
    )
    commands, response = _queries(scene, url.format(**scene) + sort, "botrequests", "big_token")
    rows = response.get_data(as_text=True).count("\n")
    assert rows == BIG
    assert len(commands) <= _export_budget(rows, 1, sort), commands


@pytest.mark.parametrize(("fields", "projected"), [("", False), ("&fields=ip", True)])
def test_an_export_of_every_field_reads_its_windows_whole(scene, fields, projected):
    """repositories/exports.py: without a projection the embedded engine reads a window in
    half the time; with a selection, only what it names is read."""
    url = "/v1/organizations/{big}/requests/export?createdFrom=2026-01-01T00:00:00Z" + fields
    commands, _ = _queries(scene, url.format(**scene), "botrequests", "big_token")
    stages = [stage for command in commands for stage in command["pipeline"]]
    assert any("$project" in stage for stage in stages) is projected, commands
