"""When a request started, on one clock: its log line and its metrics both time it from here.

A signal rather than a hook: it fires first, whatever other hooks do.
"""

import time

from flask import Flask, g, request_started


def _started(sender: Flask, **extra) -> None:
    g.request_started = time.perf_counter()


def elapsed_seconds() -> float:
    return time.perf_counter() - g.get("request_started", time.perf_counter())


def init_app(app: Flask) -> None:
    request_started.connect(_started, app)
