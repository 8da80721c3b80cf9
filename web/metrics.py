"""Prometheus figures, served on `METRICS_PORT`, apart from the API: requests and their
latency by endpoint and status, database errors, and requests refused by a rate limit or by
admission control.

The endpoint label is the route's rule (`/v1/bots/<slug>/`), never the path asked for: ids in
paths would make a series per id. A request that matches no route is `unmatched`.

Under gunicorn, `gunicorn.conf.py` gives each start a fresh `PROMETHEUS_MULTIPROC_DIR`: every
worker writes its figures to files there, and the master alone listens on `METRICS_PORT` and
serves their sum (`serve_workers`). A worker that exits leaves its files, so the sums never go
backwards. Under `flask run` the one process that serves requests serves its own figures.
"""

import click
from flask import Flask, Response, request, request_finished
from flask.helpers import get_debug_flag
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.multiprocess import MultiProcessCollector
from werkzeug.serving import is_running_from_reloader

from runtime.config import ConfigError
from web.timing import elapsed_seconds

REQUESTS = Histogram(
    "botcatalogue_http_request_duration_seconds",
    "Seconds from a request's start to its response, by endpoint (the route, as "
    "/v1/bots/<slug>/, or unmatched) and status; _count is the number of requests.",
    ["endpoint", "status"],
)
DATABASE_ERRORS = Counter(
    "botcatalogue_database_errors",
    "Requests the database failed (answered 503, or 500; a failed /readyz too), by pymongo's "
    "exception class.",
    ["error"],
)
RATE_LIMITED = Counter(
    "botcatalogue_rate_limited",
    "Requests refused with 429, by the setting whose limit they reached: RATELIMIT_DEFAULT, "
    "RATELIMIT_AUTH_FAILURES, RATELIMIT_EXPORT or RATELIMIT_FEED.",
    ["limit"],
)

ADMISSION_REFUSED = Counter(
    "botcatalogue_admission_refused",
    "Requests refused with 503 by admission control (DATABASE_PERMITS): at once while their "
    "worker's permits were stalled, or when none came free within the request's deadline.",
)


def count_database_error(error: BaseException) -> None:
    """The one rule for `DATABASE_ERRORS`' label: the exception's class."""
    DATABASE_ERRORS.labels(error=type(error).__name__).inc()


def _finished(sender: Flask, response: Response, **extra) -> None:
    endpoint = request.url_rule.rule if request.url_rule else "unmatched"
    REQUESTS.labels(endpoint=endpoint, status=str(response.status_code)).observe(elapsed_seconds())


def _listen(port: int, host: str, registry: CollectorRegistry) -> None:
    try:
        start_http_server(port, host, registry=registry)
    except OSError as error:
        raise ConfigError(
            "METRICS_PORT", f"cannot listen on {host}:{port}: {error.strerror}."
        ) from None


def serve_workers(port: int, host: str) -> None:
    """For the gunicorn master: the sum of the figures its workers write."""
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    _listen(port, host, registry)


def _serves_flask_run() -> bool:
    """Whether this process is the one `flask run` serves from.

    With the reloader, Flask builds the app in the watching process too, which never serves:
    only its child (`is_running_from_reloader`) may hold the port.
    """
    context = click.get_current_context(silent=True)
    if context is None or context.command.name != "run":
        return False
    reloading = context.params["reload"]
    if reloading is None:
        reloading = get_debug_flag()
    return not reloading or is_running_from_reloader()


def init_app(app: Flask) -> None:
    """Figures are kept only when there is a port to serve them on."""
    port = app.config["METRICS_PORT"]
    if port is None:
        return
    request_finished.connect(_finished, app)
    if _serves_flask_run():
        _listen(port, app.config["METRICS_HOST"], REGISTRY)
