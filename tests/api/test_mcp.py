"""Agents over MCP (`POST /mcp`, blueprints/agents.py): the tools list with schemas read from
the OpenAPI document, each call answers as the GET it stands for, refusals are tool errors in
the service's words, and the endpoint guards itself as the rest of the API does."""

import json
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator
from prometheus_client import REGISTRY

from app import create_app
from tests.conftest import TEST_SETTINGS
from tests.support import ROOT, mcp_calls
from tests.support.factories import bearer
from tests.support.mcp_calls import HEADERS, call, rpc, tool_for

TOOLS = ["find_bots", "get_bot", "list_bot_requests", "get_bot_request", "get_usage"]


@pytest.fixture
def tenant(world):
    """`mcp_calls.tenant`, with Ada's Bearer header and another organization's id."""
    scene = mcp_calls.tenant(world)
    return {**scene, "token": bearer(scene["token"]), "other": str(world.organization("Other"))}


def _tools(client, token) -> dict:
    response, body = rpc(client, token, "tools/list")
    assert response.status_code == 200
    return {tool["name"]: tool for tool in body["result"]["tools"]}


def test_the_tools_are_listed_with_their_schemas(client, tenant):
    tools = _tools(client, tenant["token"])

    assert list(tools) == TOOLS
    for tool in tools.values():
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["outputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
        assert tool["description"] and tool["annotations"]["readOnlyHint"] is True
    assert tools["get_bot"]["inputSchema"]["required"] == ["slug"]
    assert {"cursor", "pagination", "name", "tags", "custom", "sortBy"} <= set(
        tools["find_bots"]["inputSchema"]["properties"]
    )
    # A parameter of the organization's list alone says so.
    created_by = tools["list_bot_requests"]["inputSchema"]["properties"]["createdBy"]
    assert "organizationId" in created_by["description"]


def _paths(tenant) -> list[str]:
    acme, request_id = tenant["acme"], tenant["request"]
    return [
        "/v1/bots/",
        "/v1/bots/?custom=true&sortBy=name:desc",
        "/v1/bots/public-bot/",
        "/v1/bots/public-bot/?fields=name,creditCost",
        f"/v1/organizations/{acme}/bots/",
        f"/v1/organizations/{acme}/bots/acme-bot/",
        "/v1/requests/?limit=2",
        "/v1/requests/?bot=public-bot&count=none",
        f"/v1/requests/{request_id}/",
        f"/v1/organizations/{acme}/requests/?pagination=keyset&limit=2",
        f"/v1/organizations/{acme}/requests/{request_id}/?fields=bot",
        "/v1/usage/?from=2026-01-01&to=2026-12-31",
        f"/v1/organizations/{acme}/usage/?from=2026-01-01&to=2026-12-31&groupBy=user",
    ]


def test_each_tool_answers_what_its_get_answers_and_as_its_output_schema_says(client, tenant):
    token = tenant["token"]
    schemas = {name: tool["outputSchema"] for name, tool in _tools(client, token).items()}

    for path in _paths(tenant):
        name, arguments = tool_for(path)
        result = call(client, token, name, arguments)
        over_http = client.get(path, headers=token)

        assert over_http.status_code == 200, path
        assert result["isError"] is False, (path, result)
        assert result["structuredContent"] == over_http.get_json(), path
        assert json.loads(result["content"][0]["text"]) == over_http.get_json()
        Draft202012Validator(schemas[name]).validate(result["structuredContent"])


def test_a_keyset_walk_through_a_tool_is_the_walk_over_http(client, tenant):
    token, acme = tenant["token"], tenant["acme"]
    path = f"/v1/organizations/{acme}/requests/?pagination=keyset&limit=1"
    walked = {"http": [], "tool": []}
    for way in walked:
        cursor = None
        while True:
            asked = path + (f"&cursor={cursor}" if cursor else "")
            if way == "http":
                page = client.get(asked, headers=token).get_json()
            else:
                page = call(client, token, *tool_for(asked))["structuredContent"]
            walked[way].append([item["id"] for item in page["results"]])
            cursor = page["nextCursor"]
            if cursor is None:
                break

    assert walked["tool"] == walked["http"]
    assert len(walked["http"]) == 3


@pytest.mark.parametrize(
    ("name", "arguments", "words"),
    [
        ("get_bot", {}, "slug: required."),
        ("get_bot", {"slug": "public-bot", "colour": "red"}, "Unknown argument colour"),
        ("find_bots", {"limit": {"a": 1}}, "limit: give a string, a number or true/false."),
        ("find_bots", {"limit": 1000}, "limit: Must be greater than or equal to 1"),
        ("find_bots", {"cursor": "forged"}, "cursor:"),
        ("find_bots", {"name": "x" * 9000}, "The arguments are too long"),
        ("list_bot_requests", {"createdFrom": "yesterday"}, "createdFrom:"),
    ],
)
def test_bad_arguments_are_tool_errors_in_the_services_words(
    client, tenant, name, arguments, words
):
    result = call(client, tenant["token"], name, arguments)

    assert result["isError"] is True
    assert words in result["content"][0]["text"]
    assert result["structuredContent"]["status"] == 400
    assert "Traceback" not in json.dumps(result) and "pydantic" not in json.dumps(result)


def test_a_refusal_is_the_same_refusal_as_over_http(client, tenant):
    token = tenant["token"]
    for path in (f"/v1/organizations/{tenant['other']}/bots/", "/v1/bots/no-such-bot/"):
        result = call(client, token, *tool_for(path))
        problem = client.get(path, headers=token).get_json()

        assert result["isError"] is True
        assert result["content"][0]["text"] == problem["detail"]
        assert {k: v for k, v in result["structuredContent"].items() if k != "instance"} == {
            k: v for k, v in problem.items() if k != "instance"
        }


def test_an_unknown_tool_and_a_malformed_message_are_protocol_errors(client, tenant):
    token = tenant["token"]
    assert call(client, token, "drop_database", {})["error"]["code"] == -32602

    for body in (
        "{not json Zanzibar",
        '[{"Zanzibar": 1}]',
        json.dumps({"jsonrpc": "2.0", "id": 1}),
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "Zanzibar"}),
    ):
        response = client.post("/mcp", headers={**HEADERS, **token}, data=body)
        assert 400 <= response.status_code < 500, (body, response.status_code)
        message = response.get_json()["error"]["message"]
        assert "Zanzibar" not in message and "validation error" not in message.lower(), message


def test_without_a_valid_token_mcp_is_a_401_naming_bearer(client, tenant):
    for headers in ({}, bearer("bcs_not-a-token")):
        response, _ = rpc(client, headers, "tools/list")

        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    ("allowed", "origin", "status"),
    [
        ((), "https://evil.example", 403),
        # The service's own origin is read from `Host`, which a rebinding page chooses.
        ((), "http://localhost", 403),
        (("https://dash.example",), "https://dash.example", 200),
        (("https://dash.example",), "https://evil.example", 403),
        (("*",), "https://evil.example", 200),
    ],
)
def test_a_request_from_a_page_needs_an_origin_cors_origins_names(
    db, tenant, allowed, origin, status
):
    settings = {**TEST_SETTINGS, "MONGODB_DB": db.name, "CORS_ORIGINS": allowed}
    client = create_app(settings, mongo_client=db.client).test_client()

    response, body = rpc(client, {**tenant["token"], "Origin": origin}, "tools/list")

    assert response.status_code == status
    if status == 403:
        assert origin in body["detail"]


def test_mcp_takes_posts_only(client, tenant):
    assert client.get("/mcp", headers={**HEADERS, **tenant["token"]}).status_code == 405


def test_each_tool_call_spends_the_callers_rate_limit_and_nothing_else_does(db, tenant):
    settings = {**TEST_SETTINGS, "MONGODB_DB": db.name, "RATELIMIT_ENABLED": True}
    app = create_app({**settings, "RATELIMIT_DEFAULT": "2 per minute"}, mongo_client=db.client)
    client = app.test_client()
    token = tenant["token"]

    for _ in range(3):
        assert rpc(client, token, "tools/list")[0].status_code == 200
    answers = [call(client, token, "get_bot", {"slug": "public-bot"}) for _ in range(3)]

    assert [answer["isError"] for answer in answers] == [False, False, True]
    assert answers[2]["structuredContent"]["status"] == 429
    assert "Try again in" in answers[2]["content"][0]["text"]
    assert client.get("/v1/bots/", headers=token).status_code == 429


def test_each_tool_call_has_its_log_line_tied_to_the_mcp_request(client, tenant, json_log):
    call(client, tenant["token"], "get_bot", {"slug": "public-bot"})

    lines = [line for line in json_log() if line.get("logger") == "bot_catalogue.requests"]
    assert [(line["method"], line["path"]) for line in lines] == [
        ("GET", "/v1/bots/public-bot/"),
        ("POST", "/mcp"),
    ]
    assert lines[0]["requestId"] == lines[1]["requestId"]


def test_without_the_mcp_extra_mcp_is_a_404_said_once_at_start(db, monkeypatch, json_log):
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` now fails
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": db.name}, mongo_client=db.client)

    assert app.test_client().post("/mcp", headers=HEADERS, data="{}").status_code == 404
    said = [line for line in json_log() if "mcp extra" in line.get("message", "")]
    assert len(said) == 1


def test_an_app_starts_without_importing_the_sdk():
    """Importing it costs about a second of CPU, which every worker and `flask` command
    would pay at start; the first call imports it (blueprints/agents.py)."""
    program = (
        "import sys, mongomock; from app import create_app; "
        "create_app({'TESTING': True}, mongo_client=mongomock.MongoClient()); "
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'mcp'))"
    )
    started = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True
    )

    assert started.stdout.strip() == "[]"


def test_each_tool_call_is_measured_as_its_get(db, tenant):
    """As the request metrics are kept: with a METRICS_PORT (not listened on here)."""
    settings = {**TEST_SETTINGS, "MONGODB_DB": db.name, "METRICS_PORT": 9}
    client = create_app(settings, mongo_client=db.client).test_client()

    def count(endpoint: str) -> float:
        labels = {"endpoint": endpoint, "status": "200"}
        sample = "botcatalogue_http_request_duration_seconds_count"
        return REGISTRY.get_sample_value(sample, labels) or 0.0

    before = {endpoint: count(endpoint) for endpoint in ("/v1/bots/<slug>/", "/mcp")}
    call(client, tenant["token"], "get_bot", {"slug": "public-bot"})

    assert {endpoint: count(endpoint) - before[endpoint] for endpoint in before} == {
        "/v1/bots/<slug>/": 1,
        "/mcp": 1,
    }


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("get_bot_request", {"botRequestId": "export"}),
        ("get_bot_request", {"botRequestId": "export#"}),
        ("get_bot_request", {"botRequestId": "feed"}),
        ("find_bots", {"organizationId": "0123456789abcdef01234567/requests/export?bot="}),
        ("get_bot", {"slug": "x", "organizationId": "0123456789abcdef01234567/requests/feed#"}),
    ],
)
def test_a_path_argument_reaches_no_other_endpoint(client, tenant, name, arguments, json_log):
    """An id that would route the tool's GET to an export or a feed is not found, as no
    such bot request is; nothing but the one refusal is asked or logged."""
    result = call(client, tenant["token"], name, arguments)

    assert result["isError"] is True
    assert result["structuredContent"]["status"] == 404
    paths = [line.get("path") for line in json_log() if line.get("method") == "GET"]
    assert not any("export" in path or "feed" in path for path in paths), paths


def test_an_empty_slug_is_missing_not_the_list(client, tenant):
    result = call(client, tenant["token"], "get_bot", {"slug": ""})

    assert result["isError"] is True
    assert result["content"][0]["text"] == "slug: required."


def test_an_argument_whose_two_reads_differ_takes_what_each_takes(client, tenant):
    """`fields` of an organization's bots names `organizationId`, the caller's list does not."""
    fields = _tools(client, tenant["token"])["find_bots"]["inputSchema"]["properties"]["fields"]
    acme = tenant["acme"]
    arguments = {"organizationId": acme, "fields": "organizationId"}

    assert len(fields["anyOf"]) == 2
    assert any(
        Draft202012Validator(schema).is_valid("organizationId") for schema in fields["anyOf"]
    )
    assert call(client, tenant["token"], "find_bots", arguments)["isError"] is False


def test_a_failure_of_ours_is_a_tool_error_in_the_usual_words(client, tenant, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("an internal detail")

    monkeypatch.setattr("blueprints.agents.dispatch", broken)
    result = call(client, tenant["token"], "get_bot", {"slug": "public-bot"})

    assert result["isError"] is True
    assert result["structuredContent"]["status"] == 500
    assert "internal detail" not in json.dumps(result)
