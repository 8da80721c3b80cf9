"""Database round trips of a warm request, counted with pymongo's command monitoring.

With the caches off (TEST_SETTINGS), a warm request costs one round trip for its caller (the
token with its user or organization, in one aggregation) plus a small fixed number per
endpoint, the same for a page of 1 and of 100 and for ten times the data: the budgets of
repositories/pipelines.py, one query per visibility branch and one to fetch the page (a
count per branch when counted), at page 1 as deep in the list; no N+1, joins only for the
page's items, never more than `limit` of them. A bot request is joined to nothing: each
reference it shows costs one `$in` query per page (repositories/summaries.py). Only on the
wire-protocol server (or MONGODB_URI): mongomock has no wire and no monitoring. With the
caches on, tests/api/test_exact_caches.py counts what is left.
"""

import datetime as dt
import uuid

import jwt
import pymongo
import pytest

from app import create_app
from repositories.indexes import ensure_indexes
from tests.conftest import TEST_SETTINGS
from tests.support.command_log import CommandLog
from tests.support.factories import World, bearer


@pytest.fixture
def log():
    return CommandLog()


@pytest.fixture
def monitored(wire_uri, wire_client, log):
    """A database on the wire-protocol server, and test clients of apps (with extra settings)
    whose database client reports its commands."""
    client = pymongo.MongoClient(
        wire_uri, event_listeners=[log], datetime_conversion="DATETIME_AUTO"
    )
    db = wire_client[f"round_trips_{uuid.uuid4().hex[:12]}"]
    ensure_indexes(db)

    def test_client(**config):
        config = {**TEST_SETTINGS, "MONGODB_DB": db.name, **config}
        return create_app(config, mongo_client=client).test_client()

    yield db, test_client
    client.close()
    wire_client.drop_database(db.name)


@pytest.fixture(scope="module")
def module_monitored(wire_uri, wire_client):
    """Like `monitored`, for data that a module's tests only read, so that it is stored once
    (per test worker): (the log, a maker of fresh databases, test clients of apps over one)."""
    log = CommandLog()
    client = pymongo.MongoClient(
        wire_uri, event_listeners=[log], datetime_conversion="DATETIME_AUTO"
    )
    made = []

    def database():
        made.append(wire_client[f"round_trips_{uuid.uuid4().hex[:12]}"])
        ensure_indexes(made[-1])
        return made[-1]

    def test_client(db):
        config = {**TEST_SETTINGS, "MONGODB_DB": db.name}
        return create_app(config, mongo_client=client).test_client()

    yield log, database, test_client
    client.close()
    for db in made:
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


# name: (path, commands of a warm request, the caller's lookup included; whether it is a list
# that takes `limit`): the caller, a count and a page per visibility branch (a list is counted
# by default), and the page's documents by id, unless one branch reads them itself. Ada sees
# two branches of bots and of requests, one of an organization's.
ENDPOINTS = {
    "bots": ("/v1/bots/", 1 + 2 + 2 + 1, True),
    "bots by name": ("/v1/bots/?name=bot", 1 + 2 + 2 + 1, True),
    "bots by tags": ("/v1/bots/?tags={tag}", 1 + 2 + 2 + 1, True),
    "bots by service": ("/v1/bots/?service=writing", 1 + 1 + 2 + 2 + 1, True),  # the service
    "bot": ("/v1/bots/acme-bot/", 1 + 1, False),
    "organization bots": ("/v1/organizations/{acme}/bots/", 1 + 1 + 1, True),
    "organization bot": ("/v1/organizations/{acme}/bots/acme-bot/", 1 + 1, False),
    # A request's three summaries: one query each.
    "requests": ("/v1/requests/", 1 + 2 + 2 + 1 + 3, True),
    "requests by name": ("/v1/requests/?name=bot", 1 + 1 + 2 + 2 + 1 + 3, True),  # the bots
    "request": ("/v1/requests/{request}/", 1 + 1 + 3, False),
    "organization requests": ("/v1/organizations/{acme}/requests/", 1 + 1 + 1 + 3, True),
    "organization request": ("/v1/organizations/{acme}/requests/{request}/", 1 + 1 + 3, False),
}


def _first_match(command: dict) -> dict:
    pipeline = command.get("pipeline") or [{}]
    return pipeline[0].get("$match", {})


def _by_ids(command: dict) -> bool:
    """A read by `_id: {$in}`: a `find`'s filter, or a pipeline's first `$match`."""
    key = (command.get("filter") if "find" in command else _first_match(command)).get("_id")
    return isinstance(key, dict) and "$in" in key


def _reads_summaries(command: dict) -> bool:
    """A `find` by `_id: {$in}` of a summary's fields: it projects no `_id`, which a page's
    documents always show (repositories/summaries.py)."""
    return "find" in command and _by_ids(command) and "_id" not in command.get("projection", {})


def _summary_reads(commands: list[dict]) -> list[str]:
    """The collections read for a page's summaries: one `find` by `_id: {$in}` each."""
    return sorted(command["find"] for command in commands if _reads_summaries(command))


def _list_reads(commands: list[dict], collection: str = "botrequests") -> list[dict]:
    """The pipelines on `collection` that read a page, not a count."""
    return [
        command
        for command in commands
        if command.get("aggregate") == collection and "$group" not in str(command["pipeline"])
    ]


def _key_reads(commands: list[dict]) -> list[dict]:
    """The reads of each branch's keys: projected on `_id` and the sort keys, not by id."""
    return [c for c in _list_reads(commands) if not _by_ids(c)]


def _page_fetch(commands: list[dict]) -> dict:
    """The one query that reads the page's requests by id."""
    [fetch] = [c for c in _list_reads(commands) if _by_ids(c)]
    return fetch


def _stage(command: dict, name: str):
    return next((stage[name] for stage in command["pipeline"] if name in stage), None)


def _about_the_caller(commands: list[dict]) -> list[dict]:
    """The commands addressed to `tokens` or `users` that read no summaries: what
    authentication asked."""
    return [
        c
        for c in commands
        if next(iter(c.values())) in ("tokens", "users") and not _reads_summaries(c)
    ]


def _warm_commands(client, log, url: str, token: str) -> list[dict]:
    return log.warm(client, url, bearer(token))[0]


@pytest.fixture(scope="module")
def sized(module_monitored):
    """The scene, and the same scene with ten times its requests, each in a database of its
    own with an app over it: (the log, {size: (database, scene, client)})."""
    log, database, test_client = module_monitored
    built = {}
    for size, more in (("scene", 0), ("ten times", 300)):
        db = database()
        scene = _scene(db)
        _fill(scene["world"], scene, more)
        built[size] = (db, scene, test_client(db))
    return log, built


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_warm_request_costs_a_fixed_number_of_round_trips(sized, endpoint):
    log, built = sized
    path, expected, is_list = ENDPOINTS[endpoint]
    counted = []
    for limit, size in ((1, "scene"), (100, "scene"), (100, "ten times")):
        db, scene, client = built[size]
        tag = db.tags.find_one()["_id"]
        url = path.format(acme=scene["acme"], request=scene["request"], tag=tag)
        paged = f"{url}{'&' if '?' in url else '?'}limit={limit}" if is_list else url
        commands = _warm_commands(client, log, paged, scene["token"])
        [lookup] = _about_the_caller(commands)
        assert lookup["aggregate"] == "tokens", lookup
        counted.append(len(commands))
    assert counted == [expected] * 3, commands


def test_a_jwt_costs_one_lookup_of_its_user_like_an_opaque_token(monitored, log):
    db, test_client = monitored
    scene = _scene(db)
    path, expected, _ = ENDPOINTS["bots"]
    secret = "a-test-secret-of-at-least-32-bytes!"
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
    token = jwt.encode({"sub": str(scene["ada"]), "exp": expires}, secret, algorithm="HS256")

    commands = _warm_commands(test_client(JWT_SECRET=secret), log, path, token)

    [lookup] = _about_the_caller(commands)
    assert lookup.get("find") == "users", lookup
    assert len(commands) == expected


def test_a_deep_page_fetches_only_its_own_documents(monitored, log):
    """Two branches (the user's own requests, its organization's): each reads the keys of
    its first `skip + limit` entries, and the server orders their union and cuts out the page
    before any join (repositories/pipelines.py)."""
    db, test_client = monitored
    scene = _scene(db)
    _fill(scene["world"], scene, 300)
    url = "/v1/requests/?limit=10&page=20"
    commands = _warm_commands(test_client(), log, url, scene["token"])

    fetch = _page_fetch(commands)
    keys = _key_reads(commands)
    assert len(keys) == 2 and all(_stage(c, "$limit") == 200 for c in keys), keys
    assert all(_stage(c, "$project") == {"createdAt": 1, "_id": 1} for c in keys)
    cut = [_stage(fetch, name) for name in ("$sort", "$skip", "$limit")]
    assert cut == [{"createdAt": -1, "_id": -1}, 190, 10]
    assert len(_first_match(fetch)["_id"]["$in"]) <= 2 * 200 and _lookups(commands) == []
    assert _summary_reads(commands) == ["bots", "organizations", "users"]


@pytest.fixture(scope="module")
def crowded(module_monitored):
    """Sixty bots and requests, all visible to one member, with every reference set:
    (the log, a client, the member's token, ids for the paths)."""
    log, database, test_client = module_monitored
    db = database()
    world = World(db)
    acme = world.organization()
    user = world.user("Ada", organizations=[acme])
    service, tag = world.service(), world.tag()
    for number in range(60):
        bot = world.bot(f"bot-{number:02d}", organization=acme, service=service, tags=[tag])
        world.bot_request(bot=bot, created_by=user, organization=acme)
    return log, test_client(db), world.token(user=user), {"acme": acme, "tag": tag}


LISTS = [
    "/v1/bots/?limit={limit}",
    "/v1/bots/?limit={limit}&custom=true&name=bot&tags={tag}&service=writing",
    "/v1/organizations/{acme}/bots/?limit={limit}",
    "/v1/requests/?limit={limit}",
    "/v1/requests/?limit={limit}&name=bot",
    "/v1/organizations/{acme}/requests/?limit={limit}",
]


def _commands(client, log, path: str, token: str) -> list[dict]:
    commands = _warm_commands(client, log, path, token)
    assert client.get(path, headers=bearer(token)).get_json()["results"], "an empty page"
    return commands


@pytest.mark.parametrize("template", LISTS)
def test_round_trips_do_not_grow_with_the_page(crowded, template):
    log, client, token, ids = crowded
    counts = {}
    for limit in (1, 10, 50):
        commands = _commands(client, log, template.format(limit=limit, **ids), token)
        # Independent queries run side by side, so their order may vary.
        counts[limit] = sorted(next(iter(command)) for command in commands)
    assert counts[1] == counts[10] == counts[50], counts


@pytest.mark.parametrize("template", LISTS)
def test_no_list_joins_anything(crowded, template):
    """A list's page is read by id and projected; a request's summaries are read by one
    query per collection (repositories/summaries.py), never joined to each row."""
    log, client, token, ids = crowded
    commands = _commands(client, log, template.format(limit=5, **ids), token)
    assert _lookups(commands) == []
    page = [c for c in commands if c not in _about_the_caller(commands)]
    assert not [c for c in page if "$lookup" in str(c.get("pipeline", ""))]


def test_a_deep_keyset_page_reads_limit_plus_one_per_branch(monitored, log):
    """Deep in a user's requests (two branches), each branch is one query past the cursor
    for `limit + 1` entries; no count by default, and only the page's documents fetched."""
    db, test_client = monitored
    scene = _scene(db)
    _fill(scene["world"], scene, 300)
    client = test_client()
    url = "/v1/requests/?pagination=keyset&limit=10"
    for _ in range(15):
        url = client.get(url, headers=bearer(scene["token"])).get_json()["nextCursor"]
        url = f"/v1/requests/?pagination=keyset&limit=10&cursor={url}"
    commands = _warm_commands(client, log, url, scene["token"])

    fetch = _page_fetch(commands)
    keys = _key_reads(commands)
    assert len(keys) == 2 and all(_stage(c, "$limit") == 11 for c in keys), keys
    assert not [c for c in commands if "$group" in str(c.get("pipeline", ""))]
    assert _stage(fetch, "$limit") == 10
    assert _lookups(commands) == []


def _stages(commands: list[dict], name: str) -> list:
    """The `name` stages of the pipelines on bots and requests (not the caller's lookup)."""
    return [
        stage[name]
        for command in commands
        if command.get("aggregate") in ("bots", "botrequests")
        for stage in command["pipeline"]
        if name in stage
    ]


def _lookups(commands: list[dict]) -> list[str]:
    return [lookup["from"] for lookup in _stages(commands, "$lookup")]


def _projections(commands: list[dict]) -> list[dict]:
    """What the pipelines on bots and requests project."""
    return _stages(commands, "$project")


PUBLIC_VIEW = ("slug", "name", "description", "creditCost", "modelKey", "applyToApi", "inputs")
# path with its selection, or none: (the collections joined or, for a request's summaries,
# read by id, the fields projected)
SELECTIONS = {
    "/v1/requests/?fields=id,createdAt": ([], {"_id": 1, "createdAt": 1}),
    "/v1/requests/?fields=bot&pagination=keyset": (["bots"], {"_id": 1, "bot": 1}),
    "/v1/organizations/{acme}/requests/{request}/?fields=ip,createdBy": (
        ["users"],
        {"_id": 1, "createdBy": 1, "ip": 1},
    ),
    "/v1/bots/?fields=slug": ([], {"_id": 1, "slug": 1}),
    "/v1/bots/": ([], dict.fromkeys(sorted({"_id", *PUBLIC_VIEW}), 1)),
    "/v1/organizations/{acme}/bots/": (
        [],
        dict.fromkeys(sorted({"_id", "organization", *PUBLIC_VIEW}), 1),
    ),
    "/v1/organizations/{acme}/bots/acme-bot/?fields=name": (
        ["organizations"],
        {"_id": 1, "name": 1, "organization": 1},
    ),
}


@pytest.mark.parametrize("template", SELECTIONS)
def test_the_pipeline_reads_only_the_selection_or_the_view(monitored, log, template):
    """docs/api.md#field-selection: the pipeline projects only what is selected, and joins no
    reference that is not selected; with no selection, a bot list reads only what its view shows."""
    db, test_client = monitored
    scene = _scene(db)
    url = template.format(**scene)
    commands = _warm_commands(test_client(), log, url, scene["token"])
    joined, projected = SELECTIONS[template]
    assert _lookups(commands) + _summary_reads(commands) == joined
    assert projected in _projections(commands)


def test_the_admin_view_joins_what_is_selected(monitored, log):
    db, test_client = monitored
    scene = _scene(db)
    admin = scene["world"].token(user=scene["world"].user("Root", role="admin"))
    client = test_client()
    for selection, joined in (("name", []), ("service", ["services"]), ("tags", ["tags"])):
        commands = _warm_commands(client, log, f"/v1/bots/acme-bot/?fields={selection}", admin)
        assert _lookups(commands) == joined, selection
    assert _lookups(_warm_commands(client, log, "/v1/bots/acme-bot/", admin)) == [
        "services",
        "tags",
    ]
