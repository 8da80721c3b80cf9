"""Server-Sent Events (the WHATWG `text/event-stream` format) as a streamed response.

Each event is its `event:`, `id:` and one `data:` line of compact JSON, which escapes line
breaks, so no field can end an event early; a comment line keeps an idle connection open
through proxies.
"""

import json
from collections.abc import Iterator

from flask import Response, stream_with_context

MEDIA_TYPE = "text/event-stream"
KEEP_ALIVE = ": keep-alive\n\n"


def event(kind: str, event_id: str, data: dict) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\nid: {event_id}\ndata: {text}\n\n"


def streamed_events(events: Iterator[str]) -> Response:
    """The first part leaves at once (the status and headers with it): `retry` asks an
    `EventSource` to reconnect after one second."""

    def body() -> Iterator[bytes]:
        yield b"retry: 1000\n\n"
        for text in events:
            yield text.encode()

    return Response(stream_with_context(body()), mimetype=MEDIA_TYPE)
