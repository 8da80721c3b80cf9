"""Admission control: a worker lets at most DATABASE_PERMITS requests use the database at
once; the others queue for a permit while the database keeps answering, and are refused at
once when it stopped: a stalled database never holds up `/healthz`
(docs/deployment.md#admission-control-a-stalled-database-never-holds-up-healthz).

gunicorn's gthread worker hands every request to its GUNICORN_THREADS threads through one
first-in, first-out queue. When the database stalls, each request that reaches it holds its
thread until its deadline (MONGODB_TIMEOUT_MS); were the others to wait for a permit as long,
everything queued, `/healthz` included, would wait too. So the permits tell busy from stalled:
while they change hands or the database answers the requests' commands (`Replies`), a request
waits for one within its own deadline (a burst on a busy worker is served); once every permit
has been held for STALL with none coming back and no answer, the database is judged stalled
and requests are refused at once, until one comes back. With one permit fewer than threads
(the default), one thread then never waits on the database for long. The permit is taken by a
request's first database access (`runtime.database`), authentication's included, and given
back when the request ends, whatever its outcome.
"""

import threading
import time
from contextlib import contextmanager

from flask import Flask, current_app, g
from pymongo import monitoring

# Longer than a healthy database leaves a worker's requests without an answer while they
# hold every permit (a read of a page takes milliseconds on MongoDB, and a request of
# seconds is answered command by command); short enough that the wait before a stall is
# judged, and the refusals queued behind it, stay within a liveness probe's 1 s.
STALL = 0.5


class DatabaseBusy(Exception):
    """No permit came free within the request's deadline, though permits kept coming back."""

    def __init__(self, permits: int):
        super().__init__(f"all {permits} database permits of this worker stayed in use")


class DatabaseStalled(DatabaseBusy):
    """Every permit has been held for STALL with none coming back and no answer from the
    database: it is stalled."""

    def __init__(self, permits: int):
        Exception.__init__(
            self,
            f"none of the {permits} database permits of this worker came back, and the "
            f"database answered none of its requests' commands, for {STALL} s",
        )


class Permits:
    """`count` permits, shared by a worker's threads; with `stall`, judged stalled once every
    one has been held that long without any coming back or the database answering."""

    def __init__(self, count: int, stall: float | None = STALL):
        self.count = count
        self._free = count
        self._stall = stall
        self._changed = threading.Condition()
        # When a permit was last taken or given back, or the database last answered.
        self._moved = time.monotonic()

    def answered(self) -> None:
        """The database answered a command on the requests' client: it is not stalled,
        however long a request holds its permit. A plain store, safe without the lock: a waiter
        that read the time before it still asks again before refusing."""
        self._moved = time.monotonic()

    def stalled(self) -> bool:
        with self._changed:
            return self._stalled(time.monotonic())

    def _stalled(self, now: float) -> bool:
        return self._stall is not None and not self._free and now - self._moved >= self._stall

    def take(self, seconds: float) -> None:
        """A permit, waited for up to `seconds`; raises DatabaseStalled (at once, or as soon
        as the permits are judged stalled during the wait) or DatabaseBusy."""
        with self._changed:
            now = time.monotonic()
            end = now + seconds
            while not self._free:
                if self._stalled(now):
                    raise DatabaseStalled(self.count)
                if now >= end:
                    raise DatabaseBusy(self.count)
                wait = end - now
                if self._stall is not None:
                    wait = min(wait, self._moved + self._stall - now)
                self._changed.wait(wait)
                now = time.monotonic()
            self._free -= 1
            self._moved = now

    def give_back(self) -> None:
        with self._changed:
            if self._free == self.count:
                raise ValueError("a permit was given back that was never taken")
            self._free += 1
            self._moved = time.monotonic()
            self._changed.notify()


# What the driver sends on its own, which a database answers whatever its reads do.
_HOUSEKEEPING = frozenset({"killCursors", "endSessions"})


class Replies(monitoring.CommandListener):
    """On the requests' client (`runtime.database`): each reply the database sends tells the
    permits it is answering (`Permits.answered`), the driver's housekeeping apart. A command
    that failed without a reply (a timeout, a lost connection) tells nothing; an error reply
    is rare enough to leave out. The feeds' reads and `/readyz`'s ping are on this client too:
    a database that answers them answers."""

    def __init__(self, permits: Permits):
        self._permits = permits

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        pass

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        if event.command_name not in _HOUSEKEEPING:
            self._permits.answered()

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def init_app(app: Flask) -> None:
    """DATABASE_PERMITS 0 turns admission control off. The live feeds have as many permits
    again, of their own (`permitted`), which they wait for without judging a stall."""
    count = app.config["DATABASE_PERMITS"]
    app.extensions["database_permits"] = Permits(count) if count else None
    app.extensions["feed_permits"] = Permits(count, stall=None) if count else None
    app.teardown_appcontext(_give_back)


def _seconds_left() -> float:
    """What is left of the request's deadline (MONGODB_TIMEOUT_MS, from its start), and at
    least STALL: a streamed body's later batches read past it, each under a deadline of its
    own (web/downloads.py)."""
    started = g.get("request_started", time.perf_counter())
    left = started + current_app.config["MONGODB_TIMEOUT_MS"] / 1000 - time.perf_counter()
    return max(left, STALL)


def admit(within: float | None = None) -> None:
    """Before the database work of a request: its permit, taken once and kept to its end,
    waited for up to what is left of its deadline (or `within` seconds, if fewer).

    Raises DatabaseStalled, or DatabaseBusy when the wait runs out first."""
    permits = current_app.extensions["database_permits"]
    if permits is None or g.get("database_permit"):
        return
    seconds = _seconds_left()
    permits.take(seconds if within is None else min(seconds, within))
    g.database_permit = True


def refuse_if_stalled() -> None:
    """Raises DatabaseStalled while this worker's permits are judged stalled: for a request
    about to wait for something only the database can bring (an exact cache's proof)."""
    permits = current_app.extensions["database_permits"]
    if permits is not None and permits.stalled():
        raise DatabaseStalled(permits.count)


def give_back_early() -> None:
    """The request's permit, given back before its end: for a request whose own database
    work is done and that goes on to make requests of its own (an MCP call's tools,
    blueprints/agents.py), each of which takes one."""
    _give_back(None)


def _give_back(_error: BaseException | None) -> None:
    if g._get_current_object().pop("database_permit", False):  # not through the proxy
        current_app.extensions["database_permits"].give_back()


@contextmanager
def permitted(seconds: float):
    """A stretch of a live feed's database work, under one of the feeds' own permits, waited
    for up to `seconds` (raises DatabaseBusy after).

    Feeds run on threads of their own (gunicorn.conf.py), so a feed that waits holds up no
    ordinary request; and were they to share the requests' permits, a worker's feeds, each
    reading a batch of changes at once, would take them from the requests. Within the
    stretch the request counts as holding a permit, so that its reads (a token the cache
    lacks) take no other; a request permit it held before is still held after."""
    permits = current_app.extensions["feed_permits"]
    if permits is not None:
        permits.take(seconds)
    held = g.get("database_permit", False)
    g.database_permit = permits is not None or held
    try:
        yield
    finally:
        g.database_permit = held
        if permits is not None:
            permits.give_back()
