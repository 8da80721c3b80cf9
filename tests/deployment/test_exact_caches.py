"""The exact caches where processes and servers come and go (docs/deployment.md#the-exact-caches):
the bot catalogue in every worker of a gunicorn, a worker replaced, a worker stopping, a stream
broken and resumed, a database restarted, a standalone server with no streams at all, and a database
kept busy by uncached load.
"""

import datetime as dt
import os
import signal
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import psutil
import pymongo
import pytest

from app import create_app
from runtime.bearer_tokens import hash_token
from tests.conftest import wait_until
from tests.support.command_log import CommandLog
from tests.support.factories import World, bearer
from tests.support.gunicorn_server import GunicornServer
from tests.support.json_log import parse_lines
from tests.support.metrics import scrape
from tests.support.wire_server import free_port
from tests.support.workers import (
    cached_in_every_worker,
    every_worker,
    lookups,
    statuses,
    within_a_second,
)

WARNING = "No change stream"


@pytest.fixture(scope="module")
def server(module_gunicorns):
    """The default settings, figures on a metrics port."""
    return module_gunicorns({"METRICS_PORT": str(free_port())})


def _catalogue(stored: World) -> dict:
    """A bot of its own for each test (the module shares one database), with what it names."""
    slug = f"bot-{uuid.uuid4().hex[:8]}"
    service = stored.service(f"Service {slug}", slug)
    fun, dull = stored.tag(f"fun {slug}"), stored.tag(f"dull {slug}")
    stored.bot(slug, name=slug, service=service, tags=[fun])
    return {"slug": slug, "service": service, "fun": fun, "dull": dull}


@pytest.mark.parametrize(
    "change", ["rename", "delete", "unpublish", "publish", "retag", "rename service"]
)
def test_a_catalogue_change_reaches_every_worker_within_a_second(
    server, open_connections, module_database, stored, change
):
    bot = _catalogue(stored)
    slug = {"slug": bot["slug"]}
    if change == "publish":
        module_database.bots.update_one(slug, {"$set": {"isPublic": False}})
    token = stored.token(user=stored.user("Ada"))
    paths = {
        "detail": f"/v1/bots/{bot['slug']}/",
        "by name": f"/v1/bots/?name={bot['slug']}",
        "by tag": f"/v1/bots/?tags={bot['fun']}",
        "by service": f"/v1/bots/?service=Service%20{bot['slug']}",
    }
    write, path, shown = {
        "rename": (
            {"$set": {"name": "Renamed"}},
            "detail",
            lambda status, body: body.get("name") == "Renamed",
        ),
        "delete": (None, "detail", lambda status, body: status == 404),
        "unpublish": (
            {"$set": {"isPublic": False}},
            "by name",
            lambda status, body: body["totalResults"] == 0,
        ),
        "publish": (
            {"$set": {"isPublic": True}},
            "by name",
            lambda status, body: body["totalResults"] == 1,
        ),
        "retag": (
            {"$set": {"tags": [bot["dull"]]}},
            "by tag",
            lambda status, body: body["totalResults"] == 0,
        ),
        "rename service": (None, "by service", lambda status, body: body["totalResults"] == 0),
    }[change]
    connections = open_connections(server)
    cached_in_every_worker(server, connections, paths[path], token, cache="catalogue")

    if change == "delete":
        module_database.bots.delete_one(slug)
    elif change == "rename service":
        module_database.services.update_one({"_id": bot["service"]}, {"$set": {"name": "Prose"}})
    else:
        module_database.bots.update_one(slug, write)

    within_a_second(server, connections, paths[path], token, shown)


def test_a_burst_right_after_each_rename_is_served_not_refused(server, module_database, stored):
    """16 clients at once on the 2 workers ask the bot endpoints the moment a bot is renamed,
    five times over: lookups waiting for the change stream's proof or for another request's
    read hold no database permit, and the permits keep coming back, so nothing is refused
    (docs/decisions/2026-11-29-busy-or-stalled.md)."""
    bot = _catalogue(stored)
    token = bearer(stored.token(user=stored.user("Ada")))
    paths = [f"/v1/bots/{bot['slug']}/", f"/v1/bots/?name={bot['slug']}",
             f"/v1/bots/?tags={bot['fun']}", "/v1/bots/?limit=100"]  # fmt: skip
    answers = []
    with ThreadPoolExecutor(16) as clients:
        for round_ in range(5):
            module_database.bots.update_one(
                {"slug": bot["slug"]}, {"$set": {"name": f"Renamed {round_}"}}
            )
            answers += clients.map(
                lambda n: (paths[n % 4], server.request("GET", paths[n % 4], token)[0]),
                range(64),
            )

    refused = [(path, status) for path, status in answers if status != 200]
    assert not refused, refused


def _summaries_read(server) -> float:
    """The summary lookups the workers' caches could not answer."""
    return lookups(server, "summaries", "miss") + lookups(server, "summaries", "off")


def _texts(connections: list, path: str, token: str) -> list[str]:
    """The body each worker sends for `path`, as text (a list, a request, an export file)."""
    texts = []
    for connection in connections:
        connection.request("GET", path, headers=bearer(token))
        response = connection.getresponse()
        assert response.status == 200, (path, response.status)
        texts.append(response.read().decode())
    return texts


@pytest.mark.parametrize(
    "change", ["rename bot", "rename user", "rename organization", "delete user"]
)
def test_a_summary_change_reaches_every_workers_requests_and_exports_within_a_second(
    server, open_connections, module_database, stored, change
):
    """docs/deployment.md#the-exact-caches: a request's summaries come from each worker's summary
    cache, and a rename or deletion reaches every worker's lists, single requests and exports in a
    second."""
    tag = uuid.uuid4().hex[:8]
    acme = stored.organization(f"Acme {tag}")
    bob = stored.user(f"Bob {tag}", organizations=[acme])
    bot = stored.bot(f"writer-{tag}", name=f"Writer {tag}")
    request = stored.bot_request(bot=bot, created_by=bob, organization=acme)
    token = stored.token(user=stored.user("Ada", organizations=[acme]))
    period = "createdFrom=2026-01-01&createdTo=2026-12-31"
    paths = [
        f"/v1/organizations/{acme}/requests/",
        f"/v1/requests/{request}/",
        f"/v1/organizations/{acme}/requests/export?format=ndjson&{period}",
        f"/v1/organizations/{acme}/requests/export?format=csv&{period}",
    ]
    connections = open_connections(server)
    for path in paths:

        def from_the_cache(path=path) -> bool:
            before = _summaries_read(server)
            texts = _texts(connections, path, token)
            return all(f"Bob {tag}" in text for text in texts) and _summaries_read(server) == before

        wait_until(from_the_cache, f"every worker answered {path} from its summary cache")
    collection, id_, old, new = {
        "rename bot": ("bots", bot, f"Writer {tag}", f"Scribe {tag}"),
        "rename user": ("users", bob, f"Bob {tag}", f"Robert {tag}"),
        "rename organization": ("organizations", acme, f"Acme {tag}", f"Zenith {tag}"),
        "delete user": ("users", bob, f"Bob {tag}", None),
    }[change]

    if new is None:
        module_database[collection].delete_one({"_id": id_})
    else:
        module_database[collection].update_one({"_id": id_}, {"$set": {"name": new}})

    start = time.monotonic()
    for path in paths:
        while not all(
            old not in text and (new is None or new in text)
            for text in _texts(connections, path, token)
        ):
            assert time.monotonic() - start < 1, f"{path}: not within a second of the write"
            time.sleep(0.02)


def test_a_worker_replaced_by_gunicorn_follows_changes_of_its_own(
    server, open_connections, module_database, stored
):
    token = stored.token(user=stored.user("Ada"))
    replaced = min(server.worker_pids())
    os.kill(replaced, signal.SIGKILL)
    wait_until(
        lambda: len(server.worker_pids()) == 2 and replaced not in server.worker_pids(),
        "gunicorn started a new worker",
    )
    connections = open_connections(server)
    assert statuses(cached_in_every_worker(server, connections, "/v1/bots/", token)) == [200] * 2

    module_database.tokens.update_one(
        {"tokenHash": hash_token(token)}, {"$set": {"revokedAt": dt.datetime.now(dt.UTC)}}
    )

    within_a_second(server, connections, "/v1/bots/", token, lambda status, _: status == 401)


def test_each_worker_opens_its_stream_after_the_fork_and_closes_it_promptly_on_exit(
    gunicorn, open_connections, wire_db
):
    server = gunicorn({"METRICS_PORT": str(free_port())})
    world = World(wire_db)
    token = world.token(user=world.user("Ada"))
    cached_in_every_worker(server, open_connections(server), "/v1/bots/", token)
    database_port = int(server.env["MONGODB_URI"].split(":")[2].split("/")[0])
    master = psutil.Process(server.worker_pids().pop()).parent()
    assert _connections_to(master, database_port) == 0, "the master opens no stream"
    assert all(_connections_to(psutil.Process(pid), database_port) for pid in server.worker_pids())

    started = time.monotonic()
    server.stop()

    assert time.monotonic() - started < 5
    assert "Traceback" not in server.log()
    assert not [line for line in parse_lines(server.log()) if line["level"] == "ERROR"]
    assert server.log().count("Worker exiting") == 2


def _connections_to(process: psutil.Process, port: int) -> int:
    return sum(1 for c in process.net_connections(kind="tcp") if c.raddr and c.raddr.port == port)


def test_on_a_standalone_server_the_caches_are_off_and_say_so_once(standalone, open_connections):
    name = f"standalone_{uuid.uuid4().hex[:8]}"
    settings = {"MONGODB_URI": standalone.uri, "MONGODB_DB": name, "METRICS_PORT": str(free_port())}
    with GunicornServer(settings) as server, pymongo.MongoClient(standalone.uri) as client:
        world = World(client[name])
        token = world.token(user=world.user("Ada"))
        connections = open_connections(server)
        for _ in range(5):
            assert statuses(every_worker(server, connections, "/v1/bots/", token)) == [200] * 2
        time.sleep(2)  # the stream is tried again, at 0.5, 1 and 2 s
        client[name].tokens.update_one(
            {"tokenHash": hash_token(token)}, {"$set": {"revokedAt": dt.datetime.now(dt.UTC)}}
        )

        assert statuses(every_worker(server, connections, "/v1/bots/", token)) == [401] * 2
        assert lookups(server, "tokens", "hit") == 0
        assert lookups(server, "tokens", "off") >= 10
        log = server.log()
    assert log.count(WARNING) == 2, "one line for each worker"
    assert "only supported on replica sets" in log


def test_the_metrics_port_says_how_long_and_why_the_caches_were_off(standalone, open_connections):
    """Summed over the workers: off from the start (`opening`), and since each worker's first
    try, for want of a stream (`unavailable`), counted as it goes on."""
    name = f"standalone_{uuid.uuid4().hex[:8]}"
    port = free_port()
    settings = {"MONGODB_URI": standalone.uri, "MONGODB_DB": name, "METRICS_PORT": str(port)}
    with GunicornServer(settings) as server, pymongo.MongoClient(standalone.uri) as client:
        world = World(client[name])
        token = world.token(user=world.user("Ada"))
        every_worker(server, open_connections(server), "/v1/bots/", token)

        def off(sample: str, reason: str) -> float:
            labels = (("reason", reason),)
            return scrape(port)[f"botcatalogue_cache_off_{sample}_total", labels]

        wait_until(lambda: off("seconds", "unavailable") >= 2, "2 worker-seconds counted", 10)
        assert off("periods", "opening") == 2, "one period for each worker, begun at its start"
        assert off("periods", "unavailable") == 0, "and still under way"


@pytest.fixture
def monitored_app(fault_server):
    """An app with the caches on over the module's fault server, counting its commands."""
    log = CommandLog()
    client = pymongo.MongoClient(
        fault_server.uri,
        event_listeners=[log],
        datetime_conversion="DATETIME_AUTO",
        serverSelectionTimeoutMS=2000,
    )
    name = f"resume_{uuid.uuid4().hex[:8]}"
    settings = {"TESTING": True, "RATELIMIT_ENABLED": False, "MONGODB_DB": name}
    app = create_app(settings, mongo_client=client)
    wait_until(lambda: app.extensions["changes"].live, "the change stream is live")
    yield app, World(client[name]), log
    app.extensions["changes"].stop()
    client.drop_database(name)
    client.close()


def _read_tokens(log: CommandLog) -> list:
    return [c for c in log.take() if next(iter(c.values())) == "tokens"]


def _kept_and_revoked(app, world: World, log: CommandLog, breaking, mending) -> None:
    """Two cached tokens; the stream broken by `breaking()`; one revoked while it is down;
    then `mending()`. The other is still answered from the cache, and the revocation arrives
    within a second of the stream's return: the stream resumed from its token, which
    replayed the change, and kept the cache it had."""
    client = app.test_client()
    kept, revoked = (world.token(user=world.user(name)) for name in ("Ada", "Bob"))
    for token in (kept, revoked):
        for _ in range(2):
            assert client.get("/v1/bots/", headers=bearer(token)).status_code == 200

    breaking()
    world.db.tokens.update_one(
        {"tokenHash": hash_token(revoked)}, {"$set": {"revokedAt": dt.datetime.now(dt.UTC)}}
    )
    mending()
    wait_until(lambda: app.extensions["changes"].live, "the change stream is live again", 30)
    log.take()

    assert client.get("/v1/bots/", headers=bearer(kept)).status_code == 200
    assert _read_tokens(log) == [], "the kept token's entry survived the break"
    start = time.monotonic()
    while client.get("/v1/bots/", headers=bearer(revoked)).status_code != 401:
        assert time.monotonic() - start < 1
        time.sleep(0.01)


def _said(json_log, text: str) -> bool:
    return any(text in line["message"] for line in json_log())


def test_a_stream_cut_by_the_network_resumes_and_keeps_the_cache(
    monitored_app, fail_point, json_log
):
    """The stream's connections are closed until the service has seen it; the revocation is
    written meanwhile, on a connection of its own."""
    app, world, log = monitored_app

    def cut():
        fail_point.arm(["getMore", "aggregate"], "alwaysOn", closeConnection=True)
        wait_until(lambda: _said(json_log, WARNING), "the service saw the stream cut", 15)

    _kept_and_revoked(app, world, log, cut, fail_point.off)
    assert _said(json_log, "Change stream open again")


def test_a_stream_resumes_after_the_database_restarts(monitored_app, fault_server, json_log):
    """Down for longer than the driver's own resume waits, so the service reopens it; the
    revocation is written once the server is back, before the stream is."""
    app, world, log = monitored_app

    def stop():
        fault_server.stop()
        wait_until(lambda: _said(json_log, WARNING), "the service saw the stream cut", 15)
        fault_server.start()

    _kept_and_revoked(app, world, log, stop, lambda: None)
    assert _said(json_log, "Change stream open again")


def _first_name(body: dict) -> str:
    """The name of the bot, or of a page's first bot."""
    return body["results"][0]["name"] if "results" in body else body["name"]


class _Driver:
    """Connections asking one path each without pause, each answer kept with when it was asked."""

    def __init__(self, server: GunicornServer):
        self._server = server
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.answers: dict[str, list[tuple[float, int, dict]]] = {}

    def drive(self, name: str, path: str, token: str, connection) -> None:
        answers = self.answers.setdefault(name, [])

        def ask():
            while not self._stop.is_set():
                asked = time.monotonic()
                status, _, body = self._server.request(
                    "GET", path, bearer(token), connection=connection
                )
                answers.append((asked, status, body))

        self._threads.append(threading.Thread(target=ask, daemon=True))
        self._threads[-1].start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)


def test_cached_endpoints_stay_cached_and_exact_while_uncached_load_keeps_the_database_busy(
    module_gunicorns, open_connections, stored
):
    """Four connections read a heavy organization's requests without pause, four more ask
    cached bot endpoints of a catalogue large enough that a miss is slow, and a bot on the
    list's first page is renamed during the load. The stream's answers come late while the
    engine serves the heavy reads: the caches stay on, after the rename too, and never serve
    a stale answer. Answers asked before the write were in the caches, so none is refused;
    what the rename made a miss may be (admission control, docs/deployment.md)."""
    # A heavy read has all the time it needs, as in `make bench`: on a slow machine a 5 s
    # deadline turned every heavy request into a 503, and the database was then not busy.
    server = module_gunicorns(
        {"METRICS_PORT": str(free_port()), "RATELIMIT_ENABLED": "false",
         "MONGODB_TIMEOUT_MS": "60000"},
        threads=5,
    )  # fmt: skip
    heavy, acme = stored.organization("Heavy"), stored.organization("Acme")
    bot = stored.db.bots.find_one({"_id": stored.bot(f"aaa-{uuid.uuid4().hex[:6]}", name="Aaa")})
    for n in range(12):
        stored.bot(f"acme-{uuid.uuid4().hex[:6]}", organization=acme, is_public=n % 2 == 0)
    stored.db.bots.insert_many(
        {"slug": f"b-{uuid.uuid4().hex}", "name": f"B {n}", "isPublic": True} for n in range(2000)
    )
    stored.db.botrequests.insert_many(
        {"bot": bot["_id"], "createdBy": None, "organization": heavy, "inputs": {"n": n},
         "createdAt": dt.datetime(2026, 1, 1) + dt.timedelta(minutes=n)}
        for n in range(1600)
    )  # fmt: skip
    reader = stored.token(user=stored.user("Ada", organizations=[acme]))
    page_one = "/v1/bots/?limit=10&page=1&sortBy=name:asc"
    cached = {
        "list": page_one,
        "list, again": page_one,
        "slug": f"/v1/bots/{bot['slug']}/",
        "organization": f"/v1/organizations/{acme}/bots/",
    }
    # Two of each kind on each worker, so that neither worker's permits are all the heavy
    # load's: one connection per worker at a time, `open_connections` as the other tests do.
    heavy_connections = open_connections(server) + open_connections(server)
    cached_connections = open_connections(server) + open_connections(server)
    load = _Driver(server)
    heavy_token = stored.token(organization=heavy)
    for connection in heavy_connections:
        load.drive("heavy", f"/v1/organizations/{heavy}/requests/", heavy_token, connection)
    for (name, path), connection in zip(cached.items(), cached_connections, strict=True):
        load.drive(name, path, reader, connection)

    def first_answers() -> bool:
        return all(any(status == 200 for _, status, _ in load.answers[name]) for name in cached)

    try:
        wait_until(first_answers, "every cached connection had its first answer", 30)
        warm = time.monotonic()
        before = {result: lookups(server, "catalogue", result) for result in ("hit", "miss", "off")}
        time.sleep(3)
        writing = time.monotonic()
        stored.db.bots.update_one({"_id": bot["_id"]}, {"$set": {"name": "Aab"}})
        renamed = time.monotonic()
        time.sleep(3)
    finally:
        load.stop()
    after = {result: lookups(server, "catalogue", result) for result in before}

    counted = {result: after[result] - before[result] for result in after}
    assert counted["hit"] >= 0.95 * sum(counted.values()), counted
    cached_answers = [(name, *answer) for name in cached for answer in load.answers[name]]
    refused = [
        (name, status, body.get("detail"))
        for name, asked, status, body in cached_answers
        if warm <= asked < writing and status != 200
    ]
    assert refused == [], "an answer in the cache was refused"
    late = {
        (status, _first_name(body) if status == 200 else None)
        for name, asked, status, body in cached_answers
        if asked >= renamed + 1 and name != "organization"
    }
    assert late == {(200, "Aab")}, "a second after the write, never a stale answer"
    heavy = [(status, body and body.get("message")) for _, status, body in load.answers["heavy"]]
    served = [asked for asked, status, _ in load.answers["heavy"] if status == 200]
    assert served and served[-1] >= writing, f"the heavy load ran to the end: {Counter(heavy)}"
