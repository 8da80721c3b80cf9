"""The token cache, the bot catalogue cache and the summary cache, kept exact by a change stream
(docs/deployment.md#the-exact-caches), in one process on the wire-protocol server; every worker
of a gunicorn is proven in tests/deployment/test_revocation.py and test_exact_caches.py.

A change must reach the cache within a second of its write. Each test first proves that the
answer was served from the cache (no command reached the database), so that a test of
invalidation cannot pass by the cache being off.
"""

import datetime as dt
import threading
import time

import pymongo
import pytest

from app import create_app
from runtime.bearer_tokens import hash_token
from tests.conftest import TEST_SETTINGS, wait_until
from tests.support.command_log import CommandLog
from tests.support.factories import World, bearer

SECOND = 1.0


@pytest.fixture
def log():
    return CommandLog()


@pytest.fixture
def monitored_client(wire_uri, log):
    client = pymongo.MongoClient(
        wire_uri, event_listeners=[log], datetime_conversion="DATETIME_AUTO"
    )
    yield client
    client.close()


@pytest.fixture
def world(wire_db):
    return World(wire_db)


@pytest.fixture
def client(cached_app, monitored_client):
    return cached_app(monitored_client).test_client()


def _reads(log: CommandLog, *collections: str) -> list[dict]:
    """The reads sent since the last call, of these collections (of any, when none)."""
    return _addressed(log.take(), *collections)


def _addressed(commands: list[dict], *collections: str) -> list[dict]:
    """Reads of collections, not the change stream's (an aggregate on the database)."""
    return [
        command
        for command in commands
        if (name := _collection(command)) is not None and (not collections or name in collections)
    ]


def _collection(command: dict) -> str | None:
    verb, target = next(iter(command.items()))
    if verb == "getMore":
        target = command["collection"]
    reads = ("find", "aggregate", "count", "distinct", "getMore")
    return target if verb in reads and isinstance(target, str) and "$" not in target else None


def _within_a_second(check) -> float:
    """Seconds until `check()` holds, asked as often as a busy client would; fails past one."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < SECOND, "not within a second of the write"
        time.sleep(0.01)
    return time.monotonic() - start


def _warm(client, path: str, token: str, log: CommandLog):
    """Asks until an answer comes from the caches alone, or is an error (never cached)."""

    def uncached_read():
        log.take()
        response = client.get(path, headers=bearer(token))
        return response if response.status_code != 200 or not _reads(log) else None

    return wait_until(uncached_read, "served from the caches", 5)


def test_twenty_cached_requests_send_no_command_about_their_caller(client, world, log):
    token = world.token(user=world.user("Ada"))
    _warm(client, "/v1/bots/", token, log)

    for _ in range(20):
        assert client.get("/v1/bots/", headers=bearer(token)).status_code == 200
        assert client.get("/v1/requests/", headers=bearer(token)).status_code == 200

    commands = log.take()
    assert _addressed(commands, "tokens", "users", "organizations") == []
    assert _addressed(commands, "botrequests"), "bot requests are never cached"


def test_warm_bot_endpoints_send_no_command_at_all(client, world, log):
    acme = world.organization("Acme")
    token = world.token(user=world.user("Ada", organizations=[acme]))
    world.bot("public-bot", service=world.service(), tags=[world.tag()])
    world.bot("acme-bot", organization=acme, is_public=False)
    paths = [
        "/v1/bots/",
        "/v1/bots/?custom=true&fields=id,name",
        "/v1/bots/?service=writing&sortBy=creditCost:desc",
        "/v1/bots/?pagination=keyset&limit=1",
        "/v1/bots/public-bot/",
        f"/v1/organizations/{acme}/bots/",
        f"/v1/organizations/{acme}/bots/acme-bot/",
    ]
    first = {path: _warm(client, path, token, log).get_json() for path in paths}

    again = {path: client.get(path, headers=bearer(token)).get_json() for path in paths}

    assert _reads(log) == []
    assert again == first


@pytest.mark.parametrize(
    "change, then",
    [
        ("revoke", 401),
        ("expire", 401),
        ("delete token", 401),
        ("delete user", 401),
        ("demote", "no private bot"),
        ("remove membership", 403),
    ],
)
def test_a_change_to_a_caller_reaches_the_cache_within_a_second(
    client, world, wire_db, log, change, then
):
    acme = world.organization("Acme")
    admin = world.user("Root", organizations=[acme], role="admin")
    token = world.token(user=admin)
    world.bot("private-bot", organization=world.organization("Globex"), is_public=False)
    path = f"/v1/organizations/{acme}/bots/" if then == 403 else "/v1/bots/"
    assert _warm(client, path, token, log).status_code == 200
    now = dt.datetime.now(dt.UTC)
    token_filter = {"tokenHash": hash_token(token)}
    {
        "revoke": lambda: wire_db.tokens.update_one(token_filter, {"$set": {"revokedAt": now}}),
        "expire": lambda: wire_db.tokens.update_one(token_filter, {"$set": {"expiresAt": now}}),
        "delete token": lambda: wire_db.tokens.delete_one(token_filter),
        "delete user": lambda: wire_db.users.delete_one({"_id": admin}),
        "demote": lambda: wire_db.users.update_one({"_id": admin}, {"$set": {"role": "user"}}),
        "remove membership": lambda: wire_db.users.update_one(
            {"_id": admin}, {"$pull": {"organizations": acme}}
        ),
    }[change]()

    def applied() -> bool:
        response = client.get(path, headers=bearer(token))
        if then == "no private bot":
            return response.get_json()["totalResults"] == 0
        return response.status_code == then

    _within_a_second(applied)


def test_a_cached_token_is_refused_once_it_expires_without_asking_the_database(client, world, log):
    expires_at = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    token = world.token(user=world.user("Ada"), expires_at=expires_at)
    _warm(client, "/v1/bots/", token, log)

    time.sleep(max(0.0, (expires_at - dt.datetime.now(dt.UTC)).total_seconds()) + 0.05)

    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 401
    assert _reads(log, "tokens", "users") == []


def test_an_unknown_token_is_not_kept_so_a_new_one_works_at_once(client, world, wire_db):
    raw = "bcs_issued-after-a-first-try"
    assert client.get("/v1/bots/", headers=bearer(raw)).status_code == 401

    wire_db.tokens.insert_one({"tokenHash": hash_token(raw), "kind": "user", "user": world.user()})

    assert client.get("/v1/bots/", headers=bearer(raw)).status_code == 200


def test_a_token_of_a_missing_user_works_once_that_user_is_created(client, world, wire_db, log):
    """What a token names is part of its entry even when it was not found."""
    user_id = world.user("Ada")
    token = world.token(user=user_id)
    user = wire_db.users.find_one_and_delete({"_id": user_id})
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 401

    wire_db.users.insert_one(user)

    _within_a_second(lambda: client.get("/v1/bots/", headers=bearer(token)).status_code == 200)


@pytest.mark.parametrize(
    "change",
    [
        "rename",
        "delete",
        "unpublish",
        "publish",
        "retag",
        "rename service",
        "new bot",
        "drop",
        "collection renamed over",
    ],
)
def test_a_change_to_the_catalogue_reaches_the_cache_within_a_second(
    client, world, wire_db, log, change
):
    token = world.token(user=world.user("Ada"))
    service = world.service("Writing", "writing")
    fun, dull = world.tag("fun"), world.tag("dull")
    world.bot("shown", name="Shown", service=service, tags=[fun])
    world.bot("hidden", name="Hidden", is_public=False)
    path = "/v1/bots/?fields=slug,name"
    detail = "/v1/bots/shown/"
    by_tag = f"/v1/bots/?tags={fun}"
    by_service = "/v1/bots/?service=writing"
    for warmed in (path, detail, by_tag, by_service):
        _warm(client, warmed, token, log)
    shown = {"slug": "shown"}
    write, look, expected = {
        "rename": (
            lambda: wire_db.bots.update_one(shown, {"$set": {"name": "Renamed"}}),
            detail,
            lambda body: body["name"] == "Renamed",
        ),
        "delete": (
            lambda: wire_db.bots.delete_one(shown),
            detail,
            lambda body: body.get("code") == 404,
        ),
        "unpublish": (
            lambda: wire_db.bots.update_one(shown, {"$set": {"isPublic": False}}),
            path,
            lambda body: body["totalResults"] == 0,
        ),
        "publish": (
            lambda: wire_db.bots.update_one({"slug": "hidden"}, {"$set": {"isPublic": True}}),
            path,
            lambda body: body["totalResults"] == 2,
        ),
        "retag": (
            lambda: wire_db.bots.update_one(shown, {"$set": {"tags": [dull]}}),
            by_tag,
            lambda body: body["totalResults"] == 0,
        ),
        "rename service": (
            lambda: wire_db.services.update_one({"_id": service}, {"$set": {"name": "Prose"}}),
            by_service,
            lambda body: body["totalResults"] == 0,
        ),
        "new bot": (
            lambda: world.bot("newer", name="Newer"),
            path,
            lambda body: body["totalResults"] == 2,
        ),
        "drop": (
            lambda: wire_db.bots.drop(),
            path,
            lambda body: body["totalResults"] == 0,
        ),
        "collection renamed over": (
            lambda: _replace_collection(wire_db, "bots", [{"slug": "only", "isPublic": True}]),
            path,
            lambda body: [bot["slug"] for bot in body["results"]] == ["only"],
        ),
    }[change]
    write()

    _within_a_second(lambda: expected(client.get(look, headers=bearer(token)).get_json()))


def _replace_collection(db, name: str, documents: list) -> None:
    """As a writer that rebuilds a collection aside swaps it in: one rename over the old."""
    db[f"{name}_next"].insert_many(documents)
    db[f"{name}_next"].rename(name, dropTarget=True)


def test_a_change_between_a_misss_read_and_its_storing_is_not_lost(cached_app, world, wire_db):
    """The classic race, made to happen: the load reads the token, then the revocation is
    written and reaches the stream, then the load's stale answer comes back to be stored."""
    app = cached_app()
    cache = app.extensions["token_cache"]
    token = world.token(user=world.user("Ada"))
    token_hash = hash_token(token)
    revoked = threading.Event()
    generation = cache._generation

    def load_then_revoke():
        document = wire_db.tokens.find_one({"tokenHash": token_hash})
        wire_db.tokens.update_one(
            {"tokenHash": token_hash}, {"$set": {"revokedAt": dt.datetime.now(dt.UTC)}}
        )
        # The revocation itself, not any change: the writes that made the token may still be
        # on their way to the stream, and one of them alone let the stale answer be stored.
        revocation = frozenset({("tokens", document["_id"])})

        def arrived() -> bool:
            with cache._lock:
                return cache._changed_since(generation, revocation)

        wait_until(arrived, "the stream saw the revocation")
        revoked.set()
        return document

    stale = cache.get(token_hash, load_then_revoke, lambda doc: [("tokens", doc["_id"])])

    assert stale["revokedAt"] is None and revoked.is_set()
    fresh = cache.get(
        token_hash, lambda: wire_db.tokens.find_one({"tokenHash": token_hash}), lambda d: []
    )
    assert fresh["revokedAt"] is not None


def test_callers_who_see_different_bots_never_share_an_answer(client, world, log):
    """Keys are the caller's visibility: members of other organizations, an organization
    token and an admin each get their own page, though the query is the same."""
    acme, globex = world.organization("Acme"), world.organization("Globex")
    world.bot("public-bot")
    world.bot("acme-bot", organization=acme, is_public=False)
    world.bot("globex-bot", organization=globex, is_public=False)
    callers = {  # the admin first: its detailed bot, cached, must reach no one else
        "admin": world.token(user=world.user("Root", role="admin")),
        "acme member": world.token(user=world.user("Ada", organizations=[acme])),
        "globex member": world.token(user=world.user("Bob", organizations=[globex])),
        "acme token": world.token(organization=acme),
        "nobody's member": world.token(user=world.user("Carol")),
    }
    expected = {
        "acme member": ["acme-bot", "public-bot"],
        "globex member": ["globex-bot", "public-bot"],
        "acme token": ["public-bot"],
        "admin": ["acme-bot", "globex-bot", "public-bot"],
        "nobody's member": ["public-bot"],
    }
    for token in callers.values():
        _warm(client, "/v1/bots/?sortBy=slug", token, log)

    for caller, token in callers.items():
        body = client.get("/v1/bots/?sortBy=slug", headers=bearer(token)).get_json()
        assert [bot["slug"] for bot in body["results"]] == expected[caller], caller
    assert _reads(log) == []
    for caller, token in callers.items():
        detail = client.get("/v1/bots/acme-bot/", headers=bearer(token))
        assert detail.status_code == (200 if "acme" in caller or caller == "admin" else 404)
        assert ("isPublic" in detail.get_json()) == (caller == "admin")


def _occurrence_aside(body: dict) -> dict:
    return {key: value for key, value in body.items() if key != "instance"}


def test_a_cached_answer_is_the_answer_without_the_cache(client, world, wire_db, log):
    """Every bot endpoint, many parameters, several callers: once warm, the cache changes
    nothing a client can see, headers included."""
    uncached = create_app(
        {**TEST_SETTINGS, "MONGODB_DB": wire_db.name}, mongo_client=wire_db.client
    )
    acme = world.organization("Acme")
    writing, fun = world.service("Writing", "writing"), world.tag("fun")
    for n in range(7):
        world.bot(f"public-{n}", credit_cost=n % 3, service=writing if n % 2 else None, tags=[fun])
        world.bot(f"acme-{n}", organization=acme, is_public=n % 2 == 0, tags=[fun] * (n % 2))
    tokens = [
        world.token(user=world.user("Ada", organizations=[acme])),
        world.token(organization=acme),
        world.token(user=world.user("Root", role="admin")),
    ]
    paths = [
        "/v1/bots/?limit=3&page=2",
        "/v1/bots/?custom=true&sortBy=creditCost:desc,name",
        f"/v1/bots/?tags={fun}&fields=id,slug,creditCost",
        "/v1/bots/?service=writing&count=none",
        "/v1/bots/?pagination=keyset&limit=4",
        "/v1/bots/?name=ACME",
        "/v1/bots/acme-1/",
        "/v1/bots/acme-2/?fields=name",
        "/v1/bots/nothing-here/",
        f"/v1/organizations/{acme}/bots/?limit=2",
        f"/v1/organizations/{acme}/bots/acme-3/",
    ]
    for token in tokens:
        for path in paths:
            cached = _warm(client, path, token, log)
            direct = uncached.test_client().get(path, headers=bearer(token))
            assert cached.status_code == direct.status_code, path
            # An error names its own request (`instance`); everything else is the same.
            assert _occurrence_aside(cached.get_json()) == _occurrence_aside(direct.get_json())
            assert cached.headers.get("ETag") == direct.headers.get("ETag"), path
            assert cached.headers.get("Link") == direct.headers.get("Link"), path


def test_a_cache_sized_zero_is_off_and_no_stream_is_opened(wire_db, monitored_client, world, log):
    before = {thread for thread in threading.enumerate() if thread.name == "change-feed"}
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": wire_db.name}, mongo_client=monitored_client)
    client = app.test_client()
    token = world.token(user=world.user("Ada"))

    for _ in range(3):
        assert client.get("/v1/bots/", headers=bearer(token)).status_code == 200
        commands = log.take()
        assert _addressed(commands, "tokens") and _addressed(commands, "bots")
        assert not any("$changeStream" in str(command) for command in commands)

    after = {thread for thread in threading.enumerate() if thread.name == "change-feed"}
    assert after == before


def test_the_stream_and_what_the_caches_keep_read_the_primary_whatever_the_read_preference(
    cached_app, wire_uri, wire_db, world
):
    """A stream on a lagging secondary, a miss read there, or a write later rolled back would
    leave in a cache what no event takes out: the stream reads the primary, and the caches'
    reads the primary's majority."""
    log = CommandLog()
    address = wire_uri.split("//", 1)[1].split("/", 1)[0]
    name = wire_db.client.admin.command("hello")["setName"]
    client = pymongo.MongoClient(
        f"mongodb://{address}/?replicaSet={name}&readPreference=secondaryPreferred",
        event_listeners=[log],
        datetime_conversion="DATETIME_AUTO",
    )
    token = world.token(user=world.user("Ada"))
    world.bot("public-bot")
    try:
        app = cached_app(client)
        for path in ("/v1/bots/", "/v1/bots/public-bot/", "/v1/requests/"):
            assert app.test_client().get(path, headers=bearer(token)).status_code == 200
        commands = log.take()
    finally:
        client.close()
    reads = {
        _collection(command): (
            command.get("$readPreference", {"mode": "primary"})["mode"],
            command.get("readConcern", {}).get("level"),
        )
        for command in commands
        if _collection(command)
    }
    assert reads == {
        "tokens": ("primaryPreferred", "majority"),
        "bots": ("primaryPreferred", "majority"),
        "botrequests": ("secondaryPreferred", None),
    }
    streams = [command for command in commands if "$changeStream" in str(command.get("pipeline"))]
    assert streams and all("$readPreference" not in command for command in streams)


def test_a_cached_answer_needs_no_database_permit(client, world, log):
    """Admission control is for work that needs the database: with every permit held, the
    warm bot endpoints still answer, and only the uncached one is refused."""
    acme = world.organization("Acme")
    token = world.token(user=world.user("Ada", organizations=[acme]))
    world.bot("public-bot")
    paths = ["/v1/bots/", "/v1/bots/public-bot/", f"/v1/organizations/{acme}/bots/"]
    for path in paths:
        _warm(client, path, token, log)
    permits = client.application.extensions["database_permits"]
    for _ in range(permits.count):
        permits.take(0)

    assert [client.get(path, headers=bearer(token)).status_code for path in paths] == [200] * 3
    assert client.get("/v1/requests/", headers=bearer(token)).status_code == 503


def test_writes_that_never_pause_keep_the_caches_on_and_exact(client, world, wire_db, log):
    """Another system updates users every few milliseconds; the stream's answers are never
    empty, yet the caches stay on, and a rename written in the middle still shows within a
    second."""
    token = world.token(user=world.user("Ada"))
    world.bot("shown", name="Shown")
    others = [world.user(f"Other {n}") for n in range(5)]
    _warm(client, "/v1/bots/shown/", token, log)
    writing = threading.Event()

    def write_without_pause():
        n = 0
        while not writing.is_set():
            wire_db.users.update_one({"_id": others[n % 5]}, {"$set": {"seen": n}})
            n += 1
            time.sleep(0.01)

    writer = threading.Thread(target=write_without_pause)
    writer.start()
    try:
        time.sleep(1)
        log.take()
        answers = [client.get("/v1/bots/shown/", headers=bearer(token)) for _ in range(50)]
        served = _reads(log)
        wire_db.bots.update_one({"slug": "shown"}, {"$set": {"name": "Renamed"}})
        _within_a_second(
            lambda: (
                client.get("/v1/bots/shown/", headers=bearer(token)).get_json()["name"] == "Renamed"
            )
        )
    finally:
        writing.set()
        writer.join()
    assert [answer.status_code for answer in answers] == [200] * 50
    assert served == [], "every answer came from the caches"


# The factories' requests are made on 2026-01-02 (tests/support/factories.py).
PERIOD = "createdFrom=2026-01-01&createdTo=2026-01-31"


@pytest.fixture
def requests_scene(world):
    """Ada, a member of Acme, and the requests Bob made there with a bot; the paths that show
    them to Ada."""
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    bob = world.user("Bob", organizations=[acme])
    bot = world.bot("writer", name="Writer")
    request = world.bot_request(bot=bot, created_by=bob, organization=acme)
    world.bot_request(bot=bot, created_by=bob, organization=acme)
    paths = {
        "list": "/v1/requests/",
        "organization list": f"/v1/organizations/{acme}/requests/?pagination=keyset",
        "one": f"/v1/requests/{request}/",
        "organization one": f"/v1/organizations/{acme}/requests/{request}/",
        "ndjson": f"/v1/organizations/{acme}/requests/export?format=ndjson&{PERIOD}",
        "csv": f"/v1/organizations/{acme}/requests/export?format=csv&{PERIOD}",
    }
    return {"token": world.token(user=ada), "bob": bob, "acme": acme, "bot": bot, "paths": paths}


def _summaries_read(client, path: str, token: str, log: CommandLog) -> list[dict]:
    log.take()
    response = client.get(path, headers=bearer(token))
    assert response.status_code == 200 and "Bob" in response.get_data(as_text=True), path
    return _addressed(log.take(), "bots", "users", "organizations")


def _warm_summaries(client, scene: dict, log: CommandLog) -> None:
    for path in scene["paths"].values():
        warm = lambda path=path: not _summaries_read(client, path, scene["token"], log)  # noqa: E731
        wait_until(warm, f"{path} warm", 5)


def test_warm_requests_read_their_summaries_from_the_cache(client, requests_scene, log):
    """docs/deployment.md#the-exact-caches: a request's bot, user and organization come from the
    summary cache once it holds them; the requests themselves are read every time, and joined to
    nothing."""
    _warm_summaries(client, requests_scene, log)
    for path in requests_scene["paths"].values():
        client.get(path, headers=bearer(requests_scene["token"]))

        commands = _addressed(log.take())
        assert [c for c in commands if _collection(c) == "botrequests"], path
        assert _addressed(commands, "bots", "users", "organizations") == [], path
        assert not [c for c in commands if "$lookup" in str(c.get("pipeline", ""))], path


@pytest.mark.parametrize(
    "change, old, new",
    [
        ("rename bot", "Writer", "Scribe"),
        ("rename user", "Bob", "Robert"),
        ("rename organization", "Acme", "Zenith"),
        ("delete user", "Bob", None),
        ("delete bot", "Writer", None),
        ("delete organization", "Acme", None),
    ],
)
def test_a_change_to_a_summary_reaches_every_request_answer_within_a_second(
    client, requests_scene, wire_db, log, change, old, new
):
    scene = requests_scene
    _warm_summaries(client, scene, log)
    collection, id_ = {
        "bot": ("bots", scene["bot"]),
        "user": ("users", scene["bob"]),
        "organization": ("organizations", scene["acme"]),
    }[change.split()[1]]
    if new is None:
        wire_db[collection].delete_one({"_id": id_})
    else:
        wire_db[collection].update_one({"_id": id_}, {"$set": {"name": new}})

    def shown(path: str) -> bool:
        text = client.get(path, headers=bearer(scene["token"])).get_data(as_text=True)
        return old not in text and (new is None or new in text)

    start = time.monotonic()  # every path within a second of the one write
    for path in scene["paths"].values():
        while not shown(path):
            assert time.monotonic() - start < SECOND, f"{path}: not within a second"
            time.sleep(0.01)


@pytest.mark.parametrize("kind", ["catalogue", "organization's"])
def test_a_cached_bot_is_dumped_once_and_revalidated_without_a_body_built(
    client, world, log, monkeypatch, kind
):
    """web/rendered.py: while the catalogue holds a bot, its bytes and ETag are kept; a 304
    builds nothing, another `fields` is other bytes, and a rename is new bytes at once."""
    from marshmallow import Schema

    acme = world.organization("Acme")
    token = world.token(user=world.user("Ada", organizations=[acme]))
    world.bot("kept", name="Kept", organization=acme)
    path = {
        "catalogue": "/v1/bots/kept/",
        "organization's": f"/v1/organizations/{acme}/bots/kept/",
    }[kind]
    _warm(client, path, token, log)
    dumps = []
    dump = Schema.dump
    monkeypatch.setattr(
        Schema, "dump", lambda self, *a, **k: dumps.append(self) or dump(self, *a, **k)
    )

    first = client.get(path, headers=bearer(token))
    again = client.get(path, headers=bearer(token))
    revalidated = client.get(
        path, headers={**bearer(token), "If-None-Match": first.headers["ETag"]}
    )
    kept = len(dumps)
    selected = client.get(f"{path}?fields=name", headers=bearer(token))
    world.db.bots.update_one({"slug": "kept"}, {"$set": {"name": "Renamed"}})
    renamed = wait_until(
        lambda: (
            (answer := client.get(path, headers=bearer(token))).get_data() != first.get_data()
            and answer
        ),
        "the rename shown",
        5,
    )

    assert (first.status_code, again.status_code, revalidated.status_code) == (200, 200, 304)
    assert again.get_data() == first.get_data() and again.headers["ETag"] == first.headers["ETag"]
    assert revalidated.get_data() == b"" and revalidated.headers["ETag"] == first.headers["ETag"]
    assert kept == 0, "the bytes were kept from the warm-up"
    assert len(dumps) > kept and "Renamed" in renamed.get_data(as_text=True)
    assert renamed.headers["ETag"] != first.headers["ETag"]
    assert "Kept" in selected.get_data(as_text=True)
    assert len(selected.get_data()) < len(first.get_data()), "another `fields`, other bytes"
