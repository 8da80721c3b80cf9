"""One change stream per worker process, telling its caches which documents changed
(contract 7.7 and 7.8).

A cache fed by this stream may serve an entry only while the stream is known to be current:
`live` is true for FRESH_SECONDS after a getMore that waited AWAIT_SECONDS and found nothing
was sent, which says that every change written before it has arrived; an idle stream sends
one every AWAIT_SECONDS. A change that arrives says nothing of those still on the way, so
writes that never pause for AWAIT_SECONDS turn the caches off until they do. So a write
reaches every worker's caches within about AWAIT_SECONDS when all is well, and a stream that
stalls, lags, breaks or cannot be opened turns the caches off within FRESH_SECONDS: never a
stale entry. The stream reads the primary, as the caches' misses do (`get_primary_db`).

After a break the stream resumes from its last resume token, and the caches stay off until
it has caught up (an empty answer); entries made before the break are still exact then,
since every change since is replayed to them. Where it cannot resume (the server no longer
holds that history) or a fresh stream is opened, the caches are emptied first. Where no stream
can be opened at all (a standalone server), the caches stay off and one warning says so; the
stream is tried again, less and less often.

The thread starts at first use in the process that serves requests, never in the one that
built the app before a fork (gunicorn's master), and stops with the process.
"""

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Protocol

import pymongo
from flask import Flask
from pymongo import ReadPreference
from pymongo.database import Database
from pymongo.errors import InvalidOperation, PyMongoError

from runtime.database import describe, unavailable
from runtime.exact_cache import ExactCache

AWAIT_SECONDS = 0.25
FRESH_SECONDS = 0.75
# An empty answer says "caught up" only from a getMore that waited, and came back in time: a
# quicker one is the first batch of a stream the driver resumed; a later one, a slow server.
AWAITED_SECONDS = (0.8 * AWAIT_SECONDS, AWAIT_SECONDS + 0.25)
RETRY_SECONDS = (0.5, 30.0)  # the first wait before reopening a stream, and the longest
_DOCUMENT_CHANGES = {"insert", "update", "replace", "delete"}

log = logging.getLogger(__name__)


class Subscriber(Protocol):
    """A cache made of documents of `collections`; the feed gives it `live` to ask."""

    collections: frozenset[str]
    live: Callable[[], bool]

    def changed(self, collection: str, document_id) -> None: ...

    def clear(self) -> None: ...


class ChangeFeed:
    def __init__(self, database: Database, subscribers: Iterable[Subscriber]):
        self._database = database.with_options(read_preference=ReadPreference.PRIMARY)
        self._subscribers = list(subscribers)
        for subscriber in self._subscribers:
            subscriber.live = lambda: self.live
        self._collections = sorted({name for s in self._subscribers for name in s.collections})
        self._fresh_until = 0.0
        self._resume_token = None
        self._opened = False
        self._warned = False
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid: int | None = None
        self._start_lock = threading.Lock()

    @property
    def live(self) -> bool:
        """Whether every change written up to FRESH_SECONDS ago has reached the caches."""
        if self._pid != os.getpid():
            self._start()
        return time.monotonic() < self._fresh_until

    def _start(self) -> None:
        with self._start_lock:
            if self._pid == os.getpid() or self._stopping.is_set():
                return
            self._fresh_until = 0.0
            self._thread = threading.Thread(target=self._run, name="change-feed", daemon=True)
            self._thread.start()
            self._pid = os.getpid()
            atexit.register(self.stop)

    def stop(self) -> None:
        """Close the stream within AWAIT_SECONDS; the caches are off from now on."""
        self._stopping.set()
        self._fresh_until = 0.0
        if self._thread is not None and self._pid == os.getpid():
            self._thread.join(AWAIT_SECONDS + 5)

    def _run(self) -> None:
        wait = RETRY_SECONDS[0]
        while not self._stopping.is_set():
            try:
                self._follow()
                continue
            except InvalidOperation as error:  # the client was closed, or unusable: give up
                self._broken(describe(error), resumable=False)
                return
            except PyMongoError as error:
                # Refused by the server (no replica set, or history it no longer holds), the
                # stream cannot resume; lost on the way (network, restart, deadline), it can.
                self._broken(describe(error), resumable=unavailable(error))
            except Exception as error:  # a client without streams: still never a stale entry
                self._broken(f"{type(error).__name__}: {error}", resumable=False)
            if self._stopping.wait(wait):
                return
            wait = min(wait * 2, RETRY_SECONDS[1]) if not self._opened else RETRY_SECONDS[0]

    def _follow(self) -> None:
        """Until the process stops, or the server ends the stream (an `invalidate`)."""
        pipeline = [
            {"$match": {"$or": [
                {"ns.coll": {"$in": self._collections}},
                {"to.coll": {"$in": self._collections}},  # a collection renamed over one
                {"operationType": {"$in": ["dropDatabase", "invalidate"]}},
            ]}},
            {"$project": {"operationType": 1, "ns": 1, "to": 1, "documentKey": 1}},
        ]  # fmt: skip
        self._opened = False
        with self._database.watch(
            pipeline, resume_after=self._resume_token, max_await_time_ms=int(AWAIT_SECONDS * 1000)
        ) as stream:
            self._opened = True
            if self._resume_token is None:
                self._clear()
            if self._warned:
                log.info("Change stream open again: the token and catalogue caches are back on.")
                self._warned = False
            while stream.alive and not self._stopping.is_set():
                asked = time.monotonic()
                with pymongo.timeout(AWAIT_SECONDS + 5):
                    change = stream.try_next()
                if change is not None:
                    self._dispatch(change)
                elif AWAITED_SECONDS[0] <= time.monotonic() - asked < AWAITED_SECONDS[1]:
                    self._fresh_until = asked + FRESH_SECONDS
                self._resume_token = stream.resume_token if stream.alive else None
        self._fresh_until = 0.0

    def _dispatch(self, change: dict) -> None:
        kind, collection = change["operationType"], change.get("ns", {}).get("coll")
        if kind not in _DOCUMENT_CHANGES:
            self._clear()
            return
        document_id = change["documentKey"]["_id"]
        for subscriber in self._subscribers:
            if collection in subscriber.collections:
                subscriber.changed(collection, document_id)

    def _clear(self) -> None:
        for subscriber in self._subscribers:
            subscriber.clear()

    def _broken(self, reason: str, *, resumable: bool) -> None:
        self._fresh_until = 0.0
        if not resumable:
            self._resume_token = None
            self._clear()
        if not self._warned:
            log.warning(
                "No change stream (%s): the token and catalogue caches are off until one "
                "runs again; every request reads its caller and bots from the database.",
                reason,
            )
            self._warned = True


def init_app(app: Flask) -> None:
    """The worker's two caches and the stream that keeps them exact; a cache sized 0 is off."""
    tokens = ExactCache(
        "tokens",
        ("tokens", "users", "organizations"),
        app.config["TOKEN_CACHE_SIZE"],
        app.config["TOKEN_CACHE_SECONDS"],
    )
    catalogue = ExactCache(
        "catalogue",
        ("bots", "services", "tags", "organizations"),
        app.config["CATALOGUE_CACHE_SIZE"],
    )
    database = app.extensions["mongo"][app.config["MONGODB_DB"]]
    app.extensions["changes"] = ChangeFeed(database, [c for c in (tokens, catalogue) if c.enabled])
    app.extensions["token_cache"] = tokens
    app.extensions["catalogue_cache"] = catalogue
