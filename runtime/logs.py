"""The one logging configuration of every process: the app, the `flask` CLI and gunicorn.

Each line is one JSON object on standard error: a traceback is a field of its record, not
lines of its own, and warnings are records too. `create_app` applies it once per process, and
gunicorn applies the same dictionary as its `logconfig_dict` (gunicorn.conf.py), so gunicorn's
own lines come out alike. Records made during a request carry its id
(`web.request_ids.RequestIdFilter`), and in a traced request its trace and span ids
(`runtime.tracing.TraceFilter`).

Whatever a record quotes (a raw request line in one of gunicorn's warnings, say) passes the
formatter, which blanks anything shaped like a bearer token: no token is written, whoever
logged it.
"""

import functools
import json
import logging
import logging.config
import re

from pythonjsonlogger.json import JsonEncoder
from pythonjsonlogger.orjson import OrjsonFormatter

from runtime.bearer_tokens import TOKEN_PREFIX

REDACTED = "[redacted]"
_JWT_START = "eyJ"  # a JWT's header is base64url JSON, so it starts `eyJ` ('{"')
_TOKENS = re.compile(
    rf"{re.escape(TOKEN_PREFIX)}[A-Za-z0-9_-]+"
    rf"|{_JWT_START}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"
)


class RedactingJsonFormatter(OrjsonFormatter):
    """The library's orjson formatter: it writes a request's line in half the instructions
    of the library's standard one, with which the line was a sixth of a cached answer."""

    def jsonify_log_record(self, log_data) -> str:
        """What orjson refuses (an integer past 64 bits) the library's standard encoder
        writes, so that a record is never lost to its values."""
        try:
            return super().jsonify_log_record(log_data)
        except TypeError:
            return json.dumps(log_data, cls=JsonEncoder)

    def serialize_log_record(self, log_data) -> str:
        """The JSON text is searched whole, so the message, extra fields and the traceback
        are all covered; token characters need no JSON escaping. Every match starts with one
        of two fixed strings, which a substring search finds at a tenth of the pattern's cost,
        so a line holding neither (nearly every line) is not scanned by the pattern."""
        text = super().serialize_log_record(log_data)
        if TOKEN_PREFIX in text or _JWT_START in text:
            return _TOKENS.sub(REDACTED, text)
        return text


CONFIG = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "web.request_ids.RequestIdFilter"},
        "trace": {"()": "runtime.tracing.TraceFilter"},
    },
    "formatters": {
        "json": {
            "()": RedactingJsonFormatter,
            "fmt": "%(levelname)s %(name)s %(process)d %(message)s",
            "rename_fields": {"levelname": "level", "name": "logger", "exc_info": "traceback"},
            "timestamp": "time",
        }
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": "json",
            "filters": ["request_id", "trace"],
        }
    },
    "loggers": {
        # Listed so that the plain handlers gunicorn gives them go: their records reach the
        # root's. gunicorn.error keeps the level of gunicorn's --log-level.
        "gunicorn.error": {"propagate": True},
        # The app writes one line per request (web/request_log.py), with its id and caller
        # and without query values; gunicorn's access line would repeat it with the raw URI.
        "gunicorn.access": {"level": "WARNING", "propagate": True},
        # Likewise the access line of Flask's development server (`make run`).
        "werkzeug": {"level": "WARNING"},
        # Its INFO line for each refused request names the limit's key, a token's hash; the
        # request line already says 429. Its warnings (the store being down) stay.
        "flask-limiter": {"level": "WARNING"},
        # The MCP SDK says at INFO that each call's session starts and ends: every call is
        # one request, whose line says so already (blueprints/agents.py).
        "mcp": {"level": "WARNING"},
    },
    "root": {"level": "INFO", "handlers": ["stderr"]},
}


@functools.cache
def configure() -> None:
    """Once per process: a second `dictConfig` would take the root's handlers away from
    whoever added one since (pytest's log capture, say)."""
    logging.config.dictConfig(CONFIG)
    logging.captureWarnings(True)
    # No line names the file, function or thread it was logged from: the logging HOWTO's
    # "Optimization" switches, which spare each record a walk up the stack and two lookups.
    logging._srcfile = None
    logging.logThreads = False
    logging.logMultiprocessing = False
