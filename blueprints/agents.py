"""Agents over the Model Context Protocol: `POST /mcp` (docs/api.md#agents-over-mcp).

Each tool is one of the API's reads, chosen by its arguments (an `organizationId` picks the
organization's), and a call is that GET, dispatched in-process with the caller's own token:
the same validation, visibility (access/policy.py), rate limit, log line and metrics, and
the same JSON or the same refusal, as an MCP tool error carrying the problem's words
(docs/decisions/2026-11-29-agents-over-mcp.md). Each tool's input and output schemas are
read from the OpenAPI document, so that they cannot drift from what the API takes and sends.

The SDK's transport answers the protocol (web/mcp_bridge.py); without the `mcp` extra the
route is not registered, and `/mcp` is a 404 like any unknown path. The SDK is imported at
the first call, where it is used: importing it builds some 550 pydantic models, about a second
of CPU that every worker and `flask` command would otherwise spend at start.
"""

import functools
import importlib.util
import json
import logging
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Flask, current_app, request, url_for
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map
from werkzeug.test import EnvironBuilder

from domain.errors import Forbidden, Unavailable
from runtime import admission
from web.authentication import auth
from web.blueprint import openapi_path
from web.errors import error_body, status_message
from web.request_ids import HEADER, current_request_id

log = logging.getLogger(__name__)

# As long as the request line gunicorn takes (gunicorn.conf.py): a tool's GET is no longer.
MAX_URL = 8190
ORGANIZATION = "organizationId"


@dataclass(frozen=True)
class Tool:
    """An agent's view of two reads: the caller's own (`endpoint`) and an organization's
    (`organization_endpoint`), each named by its Flask endpoint."""

    name: str
    title: str
    description: str
    endpoint: str
    organization_endpoint: str
    # Path arguments, by their name here and in the route.
    path: tuple[tuple[str, str], ...] = ()


TOOLS = {
    tool.name: tool
    for tool in (
        Tool(
            "find_bots",
            "Find bots",
            "Find the bots the caller can run: the public catalogue and its organizations' "
            "own (custom) bots, or with `organizationId` one organization's bots. Filter by "
            "`name`, `tags`, `custom`; sort with `sortBy`. For long lists, "
            "`pagination=keyset` and then each answer's `nextCursor` as `cursor`.",
            "bots.list_bots",
            "bots.list_organization_bots",
        ),
        Tool(
            "get_bot",
            "Get a bot",
            "One bot by its slug: its credit cost, the inputs it takes and its model; with "
            "`organizationId`, one of that organization's bots, beside the organization.",
            "bots.get_bot",
            "bots.get_organization_bot",
            (("slug", "slug"),),
        ),
        Tool(
            "list_bot_requests",
            "List bot requests",
            "Records of bot runs, newest first: a user's own and its organizations' "
            "(user tokens), or with `organizationId` one organization's. Filter by `bot` "
            "slug, `createdFrom`/`createdTo` (ISO 8601), `name`, and for an organization "
            "`createdBy`; `fields` selects fields. For long lists, `pagination=keyset` and "
            "then each answer's `nextCursor` as `cursor`.",
            "bot_requests.list_bot_requests",
            "bot_requests.list_organization_bot_requests",
        ),
        Tool(
            "get_bot_request",
            "Get a bot request",
            "One bot request by its id, with its inputs and response; with "
            "`organizationId`, one of that organization's.",
            "bot_requests.get_bot_request",
            "bot_requests.get_organization_bot_request",
            (("botRequestId", "bot_request_id"),),
        ),
        Tool(
            "get_usage",
            "Get usage",
            "How many requests and credits over a period (`from`, `to`; by default the 30 "
            "days before now), grouped by bot, day or (for an organization) user: the "
            "caller's own (user tokens), or with `organizationId` an organization's.",
            "usage.get_usage",
            "usage.get_organization_usage",
        ),
    )
}


class Catalogue:
    """The tools as MCP lists them, their schemas read from the OpenAPI document once."""

    def __init__(self, document: dict, url_map: Map):
        self._document = document
        self._url_map = url_map
        self._described = [self._described_tool(tool) for tool in TOOLS.values()]
        self.arguments = {
            described["name"]: frozenset(described["input_schema"]["properties"])
            for described in self._described
        }

    @functools.cached_property
    def listed(self) -> list:
        """As the SDK's models, at the first `tools/list`."""
        from mcp.types import Tool as McpTool
        from mcp.types import ToolAnnotations

        annotations = ToolAnnotations(read_only_hint=True, open_world_hint=False)
        return [McpTool(**described, annotations=annotations) for described in self._described]

    def _path_item(self, endpoint: str) -> dict:
        """What the document says of the path `endpoint` serves."""
        [rule] = self._url_map.iter_rules(endpoint)
        return self._document["paths"][openapi_path(rule.rule)]

    def _described_tool(self, tool: Tool) -> dict:
        own = self._path_item(tool.endpoint)
        operations = [own["get"], self._path_item(tool.organization_endpoint)["get"]]
        described = {p["name"]: p["description"] for p in own.get("parameters", [])}
        properties: dict[str, Any] = {}
        for name, route in tool.path:
            properties[name] = {"type": "string", "description": described[route]}
        properties[ORGANIZATION] = {
            "type": "string",
            "description": "An organization's id (24 hexadecimal characters): ask for that "
            "organization's, rather than the caller's own.",
        }
        for operation in operations:
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query" and parameter["name"] not in properties:
                    properties[parameter["name"]] = self._inline(
                        _argument([_query(each, parameter["name"]) for each in operations])
                    )
        required = [name for name, _ in tool.path]
        outputs = [
            operation["responses"]["200"]["content"]["application/json"]["schema"]
            for operation in operations
        ]
        # A refusal's structured content is the problem: clients that check an error's
        # content against the schema too (the MCP Inspector) would otherwise hide its words.
        answers = outputs if outputs[0] != outputs[1] else outputs[:1]
        output = {"anyOf": [*answers, {"$ref": "#/components/schemas/Error"}]}
        return {
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "input_schema": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
            "output_schema": {
                "type": "object",
                **self._inline(output),
                "$defs": self._definitions(output),
            },
        }

    @staticmethod
    def _inline(schema: Any) -> Any:
        """The OpenAPI references to components rewritten as JSON Schema's `$defs`."""
        text = json.dumps(schema).replace('"#/components/schemas/', '"#/$defs/')
        return json.loads(text)

    def _definitions(self, schema: Any) -> dict:
        """Every component `schema` refers to, directly or through another."""
        components = self._document["components"]["schemas"]
        found: dict[str, Any] = {}
        waiting = [schema]
        while waiting:
            text = json.dumps(waiting.pop())
            for name in components:
                if f'"#/components/schemas/{name}"' in text and name not in found:
                    found[name] = self._inline(components[name])
                    waiting.append(components[name])
        return found


def _query(operation: dict, name: str) -> dict | None:
    """The query parameter `name` of `operation`, if it takes one."""
    found = [p for p in operation.get("parameters", []) if p.get("name") == name]
    return found[0] if found and found[0].get("in") == "query" else None


def _argument(parameters: list[dict | None]) -> dict:
    """The schema of an argument from the parameters of a tool's two reads (the caller's own,
    an organization's): either's where they agree, and where they differ (the names `fields`
    takes), each's, as the read `organizationId` picks."""
    own, organization = parameters
    taken = [parameter for parameter in parameters if parameter is not None]
    schemas = [parameter.get("schema", {}) for parameter in taken]
    schema = {"anyOf": schemas} if len(taken) > 1 and schemas[0] != schemas[1] else schemas[0]
    description = taken[-1].get("description", "")
    if own is None or organization is None:
        description += f" (Only {'with' if organization else 'without'} `organizationId`.)"
    return {**schema, "description": description}


def _text(value: Any) -> str:
    """A tool argument as its query-string text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class ToolRefused(Exception):
    """A call the service refuses, in its own words: an MCP tool error."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _url(tool: Tool, arguments: dict) -> tuple[str, str]:
    """The endpoint and URL of the GET that `arguments` ask of `tool`."""
    takes = current_app.extensions["mcp_catalogue"].arguments[tool.name]
    unknown = sorted(set(arguments) - takes)
    if unknown:
        raise ToolRefused(
            f"Unknown argument {', '.join(unknown)}: {tool.name} takes {', '.join(sorted(takes))}."
        )
    given = {name: value for name, value in arguments.items() if value is not None}
    for name, value in given.items():
        if not isinstance(value, str | int | float | bool):
            raise ToolRefused(f"{name}: give a string, a number or true/false.")
    given = {name: _text(value) for name, value in given.items()}
    organization = given.pop(ORGANIZATION, None)
    endpoint = tool.organization_endpoint if organization is not None else tool.endpoint
    values = {route: given.pop(name, "") for name, route in tool.path}
    missing = [name for name, route in tool.path if not values[route]]
    if missing:
        raise ToolRefused(f"{', '.join(missing)}: required.")
    if organization is not None:
        values["organization_id"] = organization
    url = url_for(endpoint, **values, **given)
    if len(url) > MAX_URL:
        raise ToolRefused(f"The arguments are too long: at most {MAX_URL} characters in all.")
    return endpoint, url


def dispatch(endpoint: str, url: str):
    """The GET of `url` as the caller's own request, with its own context: its token, its
    request id and address, counted and logged as any other. A path argument that routes it
    to another endpoint (`export`, a `/` or `?` of its own) is refused as not found."""
    app = current_app._get_current_object()
    path, _, query = url.partition("?")
    headers = {
        "Authorization": request.headers.get("Authorization", ""),
        "Accept": "application/json",
        HEADER: current_request_id(),
    }
    environ = EnvironBuilder(
        path=path,
        base_url=request.host_url,
        query_string=query,
        headers=headers,
        environ_base={"REMOTE_ADDR": request.remote_addr or ""},
    ).get_environ()
    try:
        routed, _ = app.url_map.bind_to_environ(environ).match()
    except HTTPException:
        routed = endpoint  # routed nowhere: the GET answers its 404, as over HTTP
    if routed != endpoint:
        raise ToolRefused(status_message(404), status=404)
    with app.app_context(), app.request_context(environ):
        try:
            return app.full_dispatch_request()
        except Exception as error:  # what `wsgi_app` would do: a 500 in the usual words
            return app.handle_exception(error)


def _refusal(problem: dict, retry: str | None = None):
    """A tool error: the problem's words, its `details` and when to retry, as text, and the
    problem itself (docs/api.md#errors) as structured content."""
    from mcp.types import CallToolResult, TextContent

    words = [problem["detail"]]
    for name, messages in (problem.get("details") or {}).items():
        words.append(f"{name}: {' '.join(map(str, messages))}")
    if retry:
        words.append(f"Try again in {retry} s.")
    text = TextContent(type="text", text=" ".join(words))
    return CallToolResult(content=[text], structured_content=problem, is_error=True)


@functools.cache
def _server():
    """The SDK's server, with the handlers of the current app's catalogue: one per process,
    built at the first call."""
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError
    from mcp.types import CallToolResult, ListToolsResult, TextContent
    from mcp_types import INVALID_PARAMS

    async def list_tools(context, params) -> ListToolsResult:
        return ListToolsResult(tools=current_app.extensions["mcp_catalogue"].listed)

    async def call_tool(context, params) -> CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Unknown tool {params.name!r}: the tools are {', '.join(TOOLS)}.",
            )
        try:
            response = dispatch(*_url(tool, dict(params.arguments or {})))
            if response.status_code != 200:
                return _refusal(response.get_json(), response.headers.get("Retry-After"))
            body = response.get_data(as_text=True)
            answer = json.loads(body)
        except ToolRefused as refused:
            problem = error_body(refused.status, str(refused), request_id=current_request_id())
            return _refusal(problem)
        except Exception:  # a bug of ours: logged once, told as a 500 is, not in Python's words
            log.exception("The MCP tool %s failed.", tool.name)
            problem = error_body(500, status_message(500), request_id=current_request_id())
            return _refusal(problem)
        text = TextContent(type="text", text=body)
        return CallToolResult(content=[text], structured_content=answer)

    return Server(
        "bot-catalogue",
        version="1",
        instructions="The Bot Catalogue: bots an agent may run, and the records of their "
        "runs, as the caller's token may see them.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


bp = Blueprint("agents", __name__)
bp.rate_limited = False  # each tool call is counted as the request it makes (`dispatch`)


@bp.before_request
def _allowed_origin() -> None:
    """A page's request carries `Origin`: only one that `CORS_ORIGINS` names may call, as the
    protocol asks of a server against DNS rebinding. The service's own origin is not taken
    from `Host`, which a rebinding page chooses."""
    origin = request.headers.get("Origin")
    allowed = current_app.config["CORS_ORIGINS"]
    if origin is not None and origin not in allowed and allowed != ("*",):
        raise Forbidden(f"Pages from {origin} may not call /mcp (CORS_ORIGINS).")


@bp.post("/mcp")
@auth.login_required
def mcp():
    """The caller's token read, its permit goes back: each tool call takes its own."""
    from web.mcp_bridge import serve

    admission.give_back_early()
    seconds = 2 * current_app.config["MONGODB_TIMEOUT_MS"] / 1000
    try:
        response = serve(_server(), seconds)
    except TimeoutError:  # each GET has its own deadline; a call that outlived two is dropped
        raise Unavailable(f"The MCP call took longer than {seconds:g} s.") from None
    return _in_our_words(response)


# The transport's refusals of a message it could not read, which name pydantic's models and
# quote the message back.
_UNREAD = {
    -32700: "Parse error: the body is not JSON.",
    -32600: "Invalid request: one JSON-RPC 2.0 request object is taken (no batch).",
    -32602: "Invalid request: one JSON-RPC 2.0 request object is taken (no batch), with "
    "`jsonrpc`, `method`, an object of `params` and, for a request, an `id`.",
}


def _in_our_words(response):
    body = response.get_json(silent=True) if response.status_code == 400 else None
    error = body.get("error") if isinstance(body, dict) and body.get("id") is None else None
    if isinstance(error, dict) and error.get("code") in _UNREAD:
        body["error"] = {"code": error["code"], "message": _UNREAD[error["code"]]}
        response.set_data(json.dumps(body))
    return response


def init_app(app: Flask, document: dict) -> None:
    """After the API's blueprints: the tools' schemas are read from their operations."""
    if importlib.util.find_spec("mcp") is None:
        log.info("No MCP endpoint: the mcp extra is not installed; /mcp answers 404.")
        return
    app.extensions["mcp_catalogue"] = Catalogue(document, app.url_map)
    app.register_blueprint(bp)
