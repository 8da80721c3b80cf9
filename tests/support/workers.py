"""Asking every worker of a gunicorn the same thing, on a connection each worker holds, and
telling from its metrics port whether the workers' caches answered."""

import time

from tests.conftest import wait_until
from tests.support.factories import bearer
from tests.support.gunicorn_server import GunicornServer
from tests.support.metrics import scrape

LOOKUPS = "botcatalogue_cache_lookups_total"


def every_worker(server: GunicornServer, connections: list, path: str, token: str) -> list:
    """(status, body) of the same request sent once on each worker's connection."""
    answers = []
    for connection in connections:
        status, _, body = server.request("GET", path, bearer(token), connection=connection)
        answers.append((status, body))
    return answers


def statuses(answers: list) -> list[int]:
    return [status for status, _ in answers]


def lookups(server: GunicornServer, cache: str, result: str) -> float:
    """The workers' lookups in `cache` with `result` (hit, miss, off), summed."""
    port = int(server.env["METRICS_PORT"])
    return scrape(port)[LOOKUPS, (("cache", cache), ("result", result))]


def cached_in_every_worker(server, connections, path, token, cache="tokens") -> list:
    """The answers of a round in which every worker answered from its `cache`."""

    def all_hits():
        before = lookups(server, cache, "hit")
        answers = every_worker(server, connections, path, token)
        return answers if lookups(server, cache, "hit") - before == len(connections) else None

    return wait_until(all_hits, f"every worker answered from its {cache} cache")


def within_a_second(server, connections, path, token, shown) -> list:
    """Every worker's answer once `shown(status, body)` holds for all; fails past a second
    (counted from the call, so just after the write)."""
    start = time.monotonic()
    while True:
        answers = every_worker(server, connections, path, token)
        if all(shown(status, body) for status, body in answers):
            return answers
        assert time.monotonic() - start < 1, f"not within a second: {answers}"
        time.sleep(0.02)
