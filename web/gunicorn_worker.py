"""gunicorn's gthread worker, writing the JSON error body (docs/api.md, Errors) for its own errors,
and ending the live feeds when it stops; and gunicorn's logger, without an unwritten access line.

A request line or headers too large, or a request that is not HTTP, never reaches Flask: the
worker answers it with an HTML page from `gunicorn.util.write_error`. gunicorn has no hook for
that page, but `Worker.handle_error` looks the writer up on `gunicorn.util` at every call, so
each worker process puts ours there once forked. gunicorn still chooses the status, logs its
warning and the access line; only the page changes. Its message text quotes the client's
bytes, so the body carries our sentence for the status instead. Its page has no `Date`, which
every origin server's answer must carry (docs/api.md#errors); ours has.
"""

import json
import logging

from gunicorn import glogging, util
from gunicorn.workers.gthread import ThreadWorker

from web.caching import CACHE_CONTROL
from web.errors import error_body, unread_request_message
from web.request_ids import HEADER as REQUEST_ID_HEADER
from web.request_ids import new_request_id


def write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    """`gunicorn.util.write_error`'s signature; `reason` is gunicorn's own constant text."""
    request_id = new_request_id()
    message = unread_request_message(status_int)
    body = json.dumps(error_body(status_int, message, request_id=request_id, unread=True))
    body = body.encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        f"Date: {util.http_date()}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Cache-Control: {CACHE_CONTROL}\r\n"
        f"{REQUEST_ID_HEADER}: {request_id}\r\n"
        "\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


class JSONErrorWorker(ThreadWorker):
    def init_process(self) -> None:
        """After the fork, so the arbiter, which only loads this class, keeps gunicorn's own."""
        util.write_error = write_json_error
        super().init_process()

    def handle_exit(self, sig, frame) -> None:
        """A graceful stop (SIGTERM) waits for the requests in progress: the live feeds,
        which would never end by themselves, end at once, and their clients resume on
        another worker (runtime/request_feeds.py)."""
        super().handle_exit(sig, frame)
        feeds = getattr(self.wsgi, "extensions", {}).get("request_feeds")
        if feeds is not None:
            feeds.clear()


class Logger(glogging.Logger):
    """gunicorn's logger, which makes no access line where none is written: the app writes
    one per request (web/request_log.py), and `runtime.logs` turns gunicorn's off, yet
    gunicorn would format the line's every field for each request before the level drops it."""

    def access(self, resp, req, environ, request_time) -> None:
        if self.access_log.isEnabledFor(logging.INFO):
            super().access(resp, req, environ, request_time)
