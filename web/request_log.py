"""One log line per request for operators: what was asked, by whom, how it ended, how fast.

Each is a field of the record, which the JSON formatter (runtime/logs.py) writes out with the
time and the request id.

The client address is the one rate limits use (after `TRUSTED_PROXIES`).
Only the path and the *names* of the query parameters are written: values and headers may
carry secrets (a token pasted in the wrong place), so they never reach the log.
"""

import logging

from flask import Flask, Response, request, request_finished

from web.authentication import auth
from web.timing import elapsed_seconds

log = logging.getLogger("bot_catalogue.requests")


def _finished(sender: Flask, response: Response, **extra) -> None:
    served = request._get_current_object()  # once: each read through the proxy costs more
    caller = auth.current_user()
    fields = {
        "method": served.method,
        "path": served.path,
        "query": sorted(served.args),
        "status": response.status_code,
        "durationMs": round(elapsed_seconds() * 1000, 2),
        "callerKind": caller.kind.value if caller else None,
        "callerId": str(caller.id) if caller else None,
        "clientAddress": served.remote_addr,
    }
    log.info("%s %s %s", served.method, served.path, response.status_code, extra=fields)


def init_app(app: Flask) -> None:
    """A signal rather than a hook: it fires last, whatever other hooks do."""
    request_finished.connect(_finished, app)
