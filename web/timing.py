"""When a request started, on one clock: its log line and its metrics both time it from here.

A signal rather than a hook: it fires first, whatever other hooks do.
"""

import time

from flask import Flask, g, request_started


def _started(sender: Flask, **extra) -> None:
    g._get_current_object().request_started = time.perf_counter()  # not through the proxy


def elapsed_seconds() -> float:
    now = time.perf_counter()
    return now - g._get_current_object().get("request_started", now)


def init_app(app: Flask) -> None:
    request_started.connect(_started, app)
