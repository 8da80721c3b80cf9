"""One Flask request answered by the MCP SDK's own Streamable HTTP transport
(docs/decisions/2026-11-29-agents-over-mcp.md).

The transport is ASGI: for one request the bridge builds its ASGI scope from the WSGI one,
hands it the body already read, runs the SDK's session manager (stateless, JSON responses)
on an event loop of its own in the request's thread (`anyio.run`), and collects the answer.
The loop is this request's alone, so the tools may block it with the app's synchronous
reads; and the context is copied into the loop's tasks, so they run inside the request's
Flask context. A session manager runs once, so each request gets a new one: a small object.
"""

import anyio
from flask import Response, request
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

# What one JSON-RPC message may weigh: a tool call's arguments are a few short strings.
MAX_BODY = 64 * 1024


def _scope() -> dict:
    environ = request.environ
    port = environ.get("SERVER_PORT") or ""  # from `Host` under a unix socket: anything
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": environ.get("SERVER_PROTOCOL", "HTTP/1.1").rpartition("/")[2],
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("latin-1"),
        "query_string": request.query_string,
        "root_path": "",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
        ],
        "client": (request.remote_addr or "", 0),
        "server": (environ.get("SERVER_NAME", ""), int(port) if port.isdigit() else 80),
        "state": {},
    }


def serve(server: Server, seconds: float) -> Response:
    """The current request, answered by `server` within `seconds`."""
    body = request.get_data(cache=True)
    scope = _scope()
    started: dict = {}
    chunks: list[bytes] = []

    async def run() -> None:
        done = anyio.Event()
        given = False

        async def receive() -> dict:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()  # the client "leaves" only once the answer is complete
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    done.set()

        manager = StreamableHTTPSessionManager(
            app=server, json_response=True, stateless=True, max_request_body_size=MAX_BODY
        )
        with anyio.fail_after(seconds):
            async with manager.run():
                await manager.handle_request(scope, receive, send)
        done.set()

    anyio.run(run)
    response = Response(b"".join(chunks), status=started.get("status", 500))
    response.headers.clear()
    for name, value in started.get("headers", []):
        response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
    return response
