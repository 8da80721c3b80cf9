"""Admission control: a worker lets at most DATABASE_PERMITS requests use the database at
once and refuses the rest at once, rather than letting them queue behind a stalled database.

gunicorn's gthread worker hands every request to its GUNICORN_THREADS threads through one
first-in, first-out queue. When the database stalls, each request that reaches it holds its
thread until its deadline (MONGODB_TIMEOUT_MS); once every thread holds one, everything
else, `/healthz` included, waits in that queue for seconds. With one permit fewer than
threads (the default), one thread never waits on the database for long: it answers
`/healthz` and refuses the queued database work (a 503) as fast as it takes
them. Requests that never ask for the database never ask for a permit either: the permit is
taken by the first database access of a request (`runtime.database`), authentication's
included, and given back when the request ends, whatever its outcome.

When no permit is free, a request waits at most `PATIENCE` for one, so that a healthy but
busy worker serves a burst instead of refusing it. But once a wait ran out, no request waits
again until a permit comes back: the permits are then held by stalled requests, and each
wait would hold the spare thread, and everything queued behind it, for that long again.
"""

import threading
from contextlib import contextmanager

from flask import Flask, current_app, g

# Longer than a permit stays taken between two returns on a busy but healthy worker, even on
# the embedded engine's slow lists; short enough that one wait, plus the refusals queued
# behind it, stays well within a liveness probe's 1 s.
PATIENCE = 0.5


class DatabaseBusy(Exception):
    """Every database permit of this worker is held: the request is refused, not queued."""

    def __init__(self, permits: int):
        super().__init__(f"all {permits} database permits of this worker are in use")


class Permits:
    """`count` permits, shared by a worker's threads."""

    def __init__(self, count: int, patience: float = PATIENCE):
        self.count = count
        self._free = threading.BoundedSemaphore(count)
        self._patience = patience
        self._stuck = False  # a wait ran out and no permit has come back since

    def take(self) -> bool:
        if self._free.acquire(blocking=False):
            return True
        if self._stuck:
            return False
        taken = self._free.acquire(timeout=self._patience)
        if not taken:
            self._stuck = True
        return taken

    def give_back(self) -> None:
        self._stuck = False
        self._free.release()

    def wait(self, seconds: float) -> bool:
        """Taken within `seconds`, however long the others wait: for callers on threads of
        their own, whose waiting holds up nobody (a live feed)."""
        return self._free.acquire(timeout=seconds)


def init_app(app: Flask) -> None:
    """DATABASE_PERMITS 0 turns admission control off. The live feeds have as many permits
    again, of their own (`permitted`)."""
    count = app.config["DATABASE_PERMITS"]
    app.extensions["database_permits"] = Permits(count) if count else None
    app.extensions["feed_permits"] = Permits(count) if count else None
    app.teardown_appcontext(_give_back)


def admit() -> None:
    """Before the database work of a request: its permit, taken once and kept to its end.

    Raises DatabaseBusy when none can be had."""
    permits = current_app.extensions["database_permits"]
    if permits is None or g.get("database_permit"):
        return
    if not permits.take():
        raise DatabaseBusy(permits.count)
    g.database_permit = True


def _give_back(_error: BaseException | None) -> None:
    if g.pop("database_permit", False):
        current_app.extensions["database_permits"].give_back()


@contextmanager
def permitted(seconds: float):
    """A stretch of a live feed's database work, under one of the feeds' own permits, waited
    for up to `seconds` (raises DatabaseBusy after).

    Feeds run on threads of their own (gunicorn.conf.py), so a feed that waits holds up no
    ordinary request; and were they to share the requests' permits, a worker's feeds, each
    reading a batch of changes at once, would take them from the requests, or be refused
    by the patience meant for requests and end under a healthy load. Within the stretch the
    request counts as holding a permit, so that its reads (a token the cache lacks) take no
    other."""
    permits = current_app.extensions["feed_permits"]
    if permits is not None and not permits.wait(seconds):
        raise DatabaseBusy(permits.count)
    g.database_permit = permits is not None
    try:
        yield
    finally:
        g.pop("database_permit", None)
        if permits is not None:
            permits.give_back()
