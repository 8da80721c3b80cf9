"""MCP tool calls through a Flask test client, and the GET each tool call stands for
(blueprints/agents.py): tests compare the two, and run the HTTP checks through the tools; and
`tenant`, the data the MCP tests call tools on."""

import json
import re
from urllib.parse import parse_qsl, urlsplit

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
_ID = r"(?P<{}>[^/]+)"
_ROUTES = [
    (rf"/v1/organizations/{_ID.format('organizationId')}/bots/", "find_bots"),
    (rf"/v1/organizations/{_ID.format('organizationId')}/bots/{_ID.format('slug')}/", "get_bot"),
    (rf"/v1/organizations/{_ID.format('organizationId')}/requests/", "list_bot_requests"),
    (
        rf"/v1/organizations/{_ID.format('organizationId')}/requests/"
        rf"{_ID.format('botRequestId')}/",
        "get_bot_request",
    ),
    (rf"/v1/organizations/{_ID.format('organizationId')}/usage/", "get_usage"),
    (r"/v1/bots/", "find_bots"),
    (rf"/v1/bots/{_ID.format('slug')}/", "get_bot"),
    (r"/v1/requests/", "list_bot_requests"),
    (rf"/v1/requests/{_ID.format('botRequestId')}/", "get_bot_request"),
    (r"/v1/usage/", "get_usage"),
]


def rpc(client, headers: dict, method: str, params: dict | None = None):
    """One JSON-RPC request to /mcp: the HTTP response and its JSON body."""
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    response = client.post("/mcp", headers={**HEADERS, **headers}, data=json.dumps(message))
    return response, response.get_json(silent=True)


def call(client, headers: dict, name: str, arguments: dict) -> dict:
    """A tool call's result (or its JSON-RPC error, as `{"error": ...}`)."""
    response, body = rpc(client, headers, "tools/call", {"name": name, "arguments": arguments})
    assert response.status_code == 200, (response.status_code, response.data[:300])
    return body.get("result") or {"error": body["error"]}


def tool_for(path: str) -> tuple[str, dict]:
    """The tool and arguments that stand for `GET path`."""
    parts = urlsplit(path)
    for pattern, name in _ROUTES:
        found = re.fullmatch(pattern, parts.path)
        if found:
            return name, {**found.groupdict(), **dict(parse_qsl(parts.query))}
    raise ValueError(f"no tool stands for {path}")


class Answer:
    """A tool's result read as the HTTP answer it stands for: 200 and its JSON, or the
    problem's status and the problem."""

    def __init__(self, result: dict):
        self.result = result
        problem = result.get("structuredContent") or {}
        self.status_code = problem["status"] if result.get("isError") else 200
        self._json = result.get("structuredContent")

    def get_json(self):
        return self._json


class ToolsAsHttp:
    """A test client whose GETs are made as tool calls, so that HTTP checks run through MCP."""

    def __init__(self, client):
        self._client = client

    def get(self, path: str, headers: dict):
        name, arguments = tool_for(path)
        return Answer(call(self._client, headers, name, arguments))


def tenant(world) -> dict:
    """Ada, in Acme, with a public bot, Acme's private bot and three requests: ids as text,
    Ada's token as it is given."""
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    public = world.bot("public-bot")
    world.bot("acme-bot", organization=acme, is_public=False)
    requests = [
        world.bot_request(bot=public, created_by=ada, organization=acme, creditCost=2)
        for _ in range(3)
    ]
    return {"acme": str(acme), "token": world.token(user=ada), "request": str(requests[0])}
