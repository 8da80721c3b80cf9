"""The OpenAPI document as client generators read it.

Spectral and Redocly lint it with the rules of `.spectral.yaml` and `redocly.yaml` (Node, from
package.json: `make install` or `npm ci`); openapi-python-client generates a client from it,
once per module, and every operation is called through that client against a served app over
the wire database, each response parsed into its generated model.
"""

import contextlib
import datetime as dt
import importlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import mongomock
import pytest
from bson import ObjectId

from app import create_app
from tests.conftest import TEST_SETTINGS, _fresh_database
from tests.support import ROOT
from tests.support.factories import World
from tests.support.live_server import served

NODE_TOOLS = ROOT / "node_modules" / ".bin"
GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "bot_catalogue_client"

# The generated functions, by operationId: the client's interface, so they must not change.
OPERATIONS = {
    "listBotRequests": "bot_requests.list_bot_requests",
    "getBotRequest": "bot_requests.get_bot_request",
    "listOrganizationBotRequests": "bot_requests.list_organization_bot_requests",
    "getOrganizationBotRequest": "bot_requests.get_organization_bot_request",
    "listBots": "bots.list_bots",
    "getBot": "bots.get_bot",
    "listOrganizationBots": "bots.list_organization_bots",
    "getOrganizationBot": "bots.get_organization_bot",
    "getUsage": "usage.get_usage",
    "getOrganizationUsage": "usage.get_organization_usage",
    "exportBotRequests": "exports.export_bot_requests",
    "exportOrganizationBotRequests": "exports.export_organization_bot_requests",
    "followBotRequests": "feeds.follow_bot_requests",
    "followOrganizationBotRequests": "feeds.follow_organization_bot_requests",
    "getLiveness": "health.get_liveness",
    "getReadiness": "health.get_readiness",
}
PROBES = {"getLiveness", "getReadiness"}
# Endless streams, never called here: tests/deployment/test_feeds.py reads them.
FEEDS = {"followBotRequests", "followOrganizationBotRequests"}


@pytest.fixture(scope="module")
def document_file(tmp_path_factory):
    app = create_app(TEST_SETTINGS, mongo_client=mongomock.MongoClient())
    response = app.test_client().get("/v1/openapi.json")
    assert response.status_code == 200
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_text(json.dumps(response.get_json()))
    return path


def _spectral(document_file) -> list[str]:
    result = _run_linter(
        "spectral",
        ["lint", "--ruleset", ROOT / ".spectral.yaml", "--format", "json", "--quiet"]
        + ["--fail-severity", "hint", document_file],
    )
    return [
        f"{problem['code']} at {'.'.join(map(str, problem['path']))}: {problem['message']}"
        for problem in json.loads(result.stdout or "[]")
    ]


def _redocly(document_file) -> list[str]:
    result = _run_linter(
        "redocly",
        ["lint", "--config", ROOT / "redocly.yaml", "--format", "json", document_file],
    )
    return [
        f"{problem['ruleId']} at {problem['location'][0]['pointer']}: {problem['message']}"
        for problem in json.loads(result.stdout)["problems"]
    ]


def _run_linter(name: str, arguments: list) -> subprocess.CompletedProcess:
    linter = NODE_TOOLS / name
    if not linter.exists():
        if shutil.which("npm") is None:
            pytest.skip(f"no {name}: Node.js and npm are not installed (Debian: nodejs npm)")
        pytest.fail(f"{name} is not installed: run `make install` (it runs `npm ci`)")
    # Redocly would report usage to its makers and look for a newer release.
    quiet = {"REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true"}
    result = subprocess.run(
        [linter, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **quiet},
    )
    assert result.stdout, result.stderr
    return result


@pytest.mark.parametrize("lint", [_spectral, _redocly], ids=["spectral", "redocly"])
def test_linters_find_nothing(document_file, lint):
    """Every problem, warnings and hints included: each linter sees what the other misses."""
    assert lint(document_file) == []


@pytest.fixture(scope="module")
def generated(document_file, tmp_path_factory):
    """The client package, generated with no warning (a warning fails the generation)."""
    folder = tmp_path_factory.mktemp("client")
    config = folder / "config.yaml"
    # No formatting of the generated code: it is imported, not read.
    config.write_text("post_hooks: []\n")
    result = subprocess.run(
        [GENERATOR, "generate", "--path", document_file, "--config", config, "--meta", "none"]
        + ["--output-path", folder / PACKAGE, "--fail-on-warning"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name.partition(".")[0] == PACKAGE]:
            del sys.modules[name]


def _operation(generated, operation_id: str):
    return importlib.import_module(f"{generated.__name__}.api.{OPERATIONS[operation_id]}")


def _model(generated, name: str) -> type:
    return getattr(importlib.import_module(f"{generated.__name__}.models"), name)


@pytest.fixture(scope="module")
def scene(wire_client):
    """Members, an admin and an organization token; bots and requests, deleted ones too."""
    with contextlib.contextmanager(_fresh_database)(wire_client) as db:
        world = World(db)
        acme = world.organization("Acme")
        member = world.user("Member", organizations=[acme])
        admin = world.user("Admin", role="admin")
        service = world.service()
        public = world.bot("public-bot", service=service, tags=[world.tag("writing")])
        custom = world.bot("acme-bot", organization=acme, is_public=False)
        mine = world.bot_request(bot=public, created_by=member)
        acmes = world.bot_request(bot=custom, created_by=member, organization=acme)
        # Deleted references: a bot, a user and an organization that no longer exist.
        world.bot_request(bot=ObjectId(), created_by=ObjectId(), organization=acme)
        yield {
            "db": db,
            "acme": str(acme),
            "request": str(mine),
            "acme_request": str(acmes),
            "tokens": {
                "member": world.token(user=member),
                "admin": world.token(user=admin),
                "organization": world.token(organization=acme),
            },
        }


@pytest.fixture(scope="module")
def base_url(scene):
    app = create_app(
        {**TEST_SETTINGS, "MONGODB_DB": scene["db"].name}, mongo_client=scene["db"].client
    )
    with served(app) as url:
        yield url


def _client(generated, base_url: str, token: str | None = None):
    if token is None:
        return generated.Client(base_url=base_url, raise_on_unexpected_status=True)
    return generated.AuthenticatedClient(
        base_url=base_url, token=token, raise_on_unexpected_status=True
    )


# The scene's requests are made in January 2026 (tests/support/factories.py).
_EXPORT_JANUARY = {
    "created_from": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    "created_to": dt.datetime(2026, 2, 1, tzinfo=dt.UTC),
}
_JANUARY = {
    "from_": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    "to": dt.datetime(2026, 2, 1, tzinfo=dt.UTC),
}


def _calls(scene) -> list[tuple[str, str, dict]]:
    """(caller, operationId, arguments): every operation, with a caller it answers 200."""
    acme = scene["acme"]
    return [
        ("member", "listBotRequests", {"limit": 100}),
        ("member", "getBotRequest", {"bot_request_id": scene["request"]}),
        ("member", "listOrganizationBotRequests", {"organization_id": acme}),
        (
            "organization",
            "getOrganizationBotRequest",
            {"organization_id": acme, "bot_request_id": scene["acme_request"]},
        ),
        ("member", "listBots", {"custom": False, "sort_by": "creditCost:desc"}),
        ("admin", "getBot", {"slug": "public-bot"}),
        ("member", "getBot", {"slug": "acme-bot"}),
        ("organization", "listOrganizationBots", {"organization_id": acme}),
        ("member", "getOrganizationBot", {"organization_id": acme, "slug": "acme-bot"}),
        ("member", "getUsage", _JANUARY),
        ("organization", "getOrganizationUsage", {**_JANUARY, "organization_id": acme}),
        ("member", "exportBotRequests", _EXPORT_JANUARY),
        (
            "organization",
            "exportOrganizationBotRequests",
            {**_EXPORT_JANUARY, "organization_id": acme},
        ),
        (None, "getLiveness", {}),
        (None, "getReadiness", {}),
    ]


# The model each call's 200 parses into, in the order of `_calls`.
MODELS = [
    "BotRequestPage",
    "BotRequest",
    "BotRequestPage",
    "BotRequest",
    "BotPage",
    "BotDetail",
    # The public view parses as a BotDetail whose admin fields are unset: as `fields` may
    # leave out any field but `id` (docs/api.md#field-selection), the two differ in no required
    # field.
    "BotDetail",
    "OrganizationBotListItemPage",
    "OrganizationBot",
    "Usage",
    "Usage",
    "str",  # an export: its text, one JSON request per line
    "str",
    "Status",
    "Status",
]


def _comparable(value):
    """JSON with its timestamps as datetimes: a model writes them back in its own format."""
    if isinstance(value, dict):
        return {key: _comparable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_comparable(item) for item in value]
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return dt.datetime.fromisoformat(value)
    return value


def test_every_operation_is_a_generated_function(generated):
    api = Path(generated.__file__).parent / "api"
    functions = {f"{path.parent.name}.{path.stem}" for path in api.glob("*/[!_]*.py")}
    assert functions == set(OPERATIONS.values())


def test_every_operation_parses_into_its_model(generated, base_url, scene):
    calls = _calls(scene)
    assert {operation for _, operation, _ in calls} == OPERATIONS.keys() - FEEDS
    for (caller, operation_id, arguments), model in zip(calls, MODELS, strict=True):
        client = _client(generated, base_url, caller and scene["tokens"][caller])
        response = _operation(generated, operation_id).sync_detailed(client=client, **arguments)
        assert response.status_code == 200, (operation_id, response.content)
        if model == "str":
            assert response.parsed == response.content.decode() and response.parsed
            assert all(json.loads(line)["id"] for line in response.parsed.splitlines())
            continue
        assert type(response.parsed) is _model(generated, model), operation_id
        written_back = _comparable(response.parsed.to_dict())
        assert written_back == _comparable(json.loads(response.content)), operation_id


def test_an_export_takes_its_format_and_fields(generated, base_url, scene):
    client = _client(generated, base_url, scene["tokens"]["member"])
    export = _operation(generated, "exportBotRequests")
    csv_format = importlib.import_module(
        f"{generated.__name__}.models.export_bot_requests_format"
    ).ExportBotRequestsFormat.CSV
    text = export.sync(client=client, **_EXPORT_JANUARY, format_=csv_format, fields="botSlug")
    assert text.splitlines()[0] == "id,botSlug" and "public-bot" in text


def test_a_field_selection_parses_with_the_rest_unset(generated, base_url, scene):
    client = _client(generated, base_url, scene["tokens"]["member"])
    page = _operation(generated, "listBotRequests").sync(client=client, fields="ip,bot")
    unset = type(generated.types.UNSET)
    assert page.results and all(isinstance(item.ip, str) for item in page.results)
    assert all(isinstance(item.created_at, unset) for item in page.results)
    assert any(type(item.bot) is _model(generated, "BotSummary") for item in page.results)
    bot = _operation(generated, "getBot").sync(client=client, slug="acme-bot", fields="name")
    assert (bot.name, type(bot.slug)) == ("Acme Bot", unset)


def test_nested_summaries_parse_into_their_models_or_none(generated, base_url, scene):
    client = _client(generated, base_url, scene["tokens"]["member"])
    page = _operation(generated, "listBotRequests").sync(client=client, limit=100)
    assert page.total_results == 3
    bot_summary, name_summary = _model(generated, "BotSummary"), _model(generated, "NameSummary")
    kinds = {
        (type(item.bot), type(item.created_by), type(item.organization)) for item in page.results
    }
    assert kinds == {
        (bot_summary, name_summary, type(None)),
        (bot_summary, name_summary, name_summary),
        (type(None), type(None), name_summary),
    }
    detail = _operation(generated, "getBot").sync(
        client=_client(generated, base_url, scene["tokens"]["admin"]), slug="public-bot"
    )
    assert type(detail.service) is _model(generated, "ServiceSummary")
    assert [type(tag) for tag in detail.tags] == [_model(generated, "TagSummary")]
    serviceless = _operation(generated, "getBot").sync(
        client=_client(generated, base_url, scene["tokens"]["admin"]), slug="acme-bot"
    )
    assert type(serviceless) is _model(generated, "BotDetail") and serviceless.service is None


@pytest.mark.parametrize(
    ("group_by", "key"),
    [("BOT", "UsageResultUsageBotKey"), ("USER", "UsageResultUsageUserKey"), ("DAY", dt.date)],
)
def test_usage_keys_parse_into_their_models(generated, base_url, scene, group_by, key):
    client = _client(generated, base_url, scene["tokens"]["organization"])
    usage = _operation(generated, "getOrganizationUsage").sync(
        client=client,
        organization_id=scene["acme"],
        group_by=getattr(_model(generated, "GetOrganizationUsageGroupBy"), group_by),
        **_JANUARY,
    )
    assert type(usage) is _model(generated, "Usage")
    key = key if key is dt.date else _model(generated, key)
    assert usage.results and all(type(result.key) is key for result in usage.results)
    assert usage.totals.requests == 2


@pytest.mark.parametrize(
    ("caller", "operation_id", "arguments", "status"),
    [
        ("member", "listBots", {"limit": 0}, 400),
        ("not-a-token", "listBots", {}, 401),
        ("organization", "listBotRequests", {}, 403),
        ("member", "getBot", {"slug": "no-such-bot"}, 404),
    ],
)
@pytest.mark.parametrize("accept", ["application/json", "application/problem+json"])
def test_errors_parse_into_the_error_model(
    generated, base_url, scene, caller, operation_id, arguments, status, accept
):
    """Both media types of an error parse, problem details and our own members alike."""
    token = scene["tokens"].get(caller, caller)
    client = _client(generated, base_url, token).with_headers({"Accept": accept})
    response = _operation(generated, operation_id).sync_detailed(client=client, **arguments)
    assert response.status_code == status
    assert response.headers["Content-Type"] == accept
    assert type(response.parsed) is _model(generated, "Error")
    problem = response.parsed
    assert (problem.code, problem.status, problem.detail) == (status, status, problem.message)
    assert problem.type_.startswith("tag:bot-catalogue-service,2026:problems/") and problem.title
    assert problem.instance == f"urn:request:{response.headers['X-Request-ID']}"


def _declaring(document_file, status: str) -> set[str]:
    """The operations whose document declares `status`."""
    document = json.loads(document_file.read_text())
    return {
        operation["operationId"]
        for item in document["paths"].values()
        for method, operation in item.items()
        if method != "parameters" and status in operation["responses"]
    }


EXPORTS = {"exportBotRequests", "exportOrganizationBotRequests"}


def test_not_modified_is_declared_on_every_operation_but_exports(
    generated, base_url, scene, document_file
):
    """An export is streamed: it has no ETag to match, and no `if_none_match` argument."""
    not_modified = set()
    for caller, operation_id, arguments in _calls(scene):
        client = _client(generated, base_url, caller and scene["tokens"][caller])
        operation = _operation(generated, operation_id)
        headers = operation.sync_detailed(client=client, **arguments).headers
        if operation_id in EXPORTS:
            assert "ETag" not in headers
            continue
        response = operation.sync_detailed(
            client=client, if_none_match=headers["ETag"], **arguments
        )
        assert (response.status_code, response.content) == (304, b""), operation_id
        not_modified.add(operation_id)
    assert not_modified == _declaring(document_file, "304") == OPERATIONS.keys() - EXPORTS - FEEDS


def test_too_many_requests_is_declared_where_limits_apply(generated, scene, document_file):
    app = create_app(
        {**TEST_SETTINGS, "MONGODB_DB": scene["db"].name, "RATELIMIT_ENABLED": True}
        | {"RATELIMIT_DEFAULT": "1 per hour"},
        mongo_client=scene["db"].client,
    )
    [limiter] = app.extensions["limiter"]
    limited = set()
    with served(app) as url:
        for caller, operation_id, arguments in _calls(scene):
            limiter.reset()  # a token's budget is shared by every operation
            client = _client(generated, url, caller and scene["tokens"][caller])
            operation = _operation(generated, operation_id)
            first, second = (operation.sync_detailed(client=client, **arguments) for _ in "12")
            assert first.status_code == 200, operation_id
            if second.status_code == 429:
                assert type(second.parsed) is _model(generated, "Error"), operation_id
                limited.add(operation_id)
    assert limited | FEEDS == _declaring(document_file, "429") == OPERATIONS.keys() - PROBES


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_service_unavailable_is_declared_where_the_database_is_asked(
    generated, scene, document_file
):
    app = create_app(
        {**TEST_SETTINGS, "MONGODB_URI": f"mongodb://127.0.0.1:{_closed_port()}"}
        | {"MONGODB_TIMEOUT_MS": 200, "READYZ_TIMEOUT_MS": 200}
    )
    unavailable = set()
    try:
        with served(app) as url:
            for caller, operation_id, arguments in _calls(scene):
                client = _client(generated, url, caller and scene["tokens"][caller])
                response = _operation(generated, operation_id).sync_detailed(
                    client=client, **arguments
                )
                if response.status_code == 503:
                    assert type(response.parsed) is _model(generated, "Error"), operation_id
                    unavailable.add(operation_id)
    finally:
        app.extensions["mongo"].close()
    declared = _declaring(document_file, "503")
    assert unavailable | FEEDS == declared == OPERATIONS.keys() - {"getLiveness"}


def test_a_generated_client_follows_next_cursor(generated, base_url, scene):
    """Keyset pages parse into their own model, and `next_cursor` leads to the next one."""
    UNSET = importlib.import_module(f"{generated.__name__}.types").UNSET
    client = _client(generated, base_url, scene["tokens"]["member"])
    operation = _operation(generated, "listBotRequests")
    keyset = _model(generated, "ListBotRequestsPagination").KEYSET
    offset = operation.sync(client=client, limit=100)
    ids, cursor = [], None
    while True:
        page = operation.sync(client=client, pagination=keyset, limit=1, cursor=cursor or UNSET)
        assert type(page) is _model(generated, "BotRequestKeysetPage")
        ids += [request.id for request in page.results]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert ids == [request.id for request in offset.results] and len(ids) == 3
