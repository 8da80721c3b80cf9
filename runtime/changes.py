"""One change stream per worker process, telling its caches which documents changed
(docs/deployment.md#the-exact-caches).

A cache may serve an entry only while the stream is *live*: while every change written more
than FRESH_SECONDS ago is known to have reached the caches, so that a write reaches every
worker's answers within the second that docs/api.md#callers promises. The stream proves it
in two ways, neither of which asks how quickly the server answered:

- an empty answer to a getMore sent at time t says that every change written before t has
  arrived, however late that answer comes back: a slow answer proves as much as a quick
  one, and keeps the caches on for as long as t + FRESH_SECONDS lasts;
- under a steady flow of changes, where no answer is empty, each answer carries the
  cluster time MongoDB had reached when it was sent (`$clusterTime`, read from the stream's
  own session). Once a change with a later cluster time has arrived, every change up to that
  time has arrived too, so every change written before that getMore was sent.

A stream that stalls, falls behind or breaks therefore turns the caches off within
FRESH_SECONDS of the last proof, and never serves a stale entry; its entries stay, exact,
since every change since is still to be replayed to them.

The stream runs on a client of its own, held to STREAM_TIMEOUT_MS (`runtime.database`), never
to a request's deadline: a timeout, a lost connection or a restart resumes from the last
resume token, and the caches come back with the next proof. Where it cannot resume (the
server no longer holds that history) or a fresh stream is opened, the caches are emptied
first. Where no stream can be opened at all (a standalone server), the caches stay off and
one warning says so; the stream is tried again, less and less often.

How long the caches were off, and why, is counted on the metrics port, and a period off of a
second or more is logged when it ends.

The thread starts at first use in the process that serves requests, never in the one that
built the app before a fork (gunicorn's master), and stops with the process.
"""

import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import Protocol

import pymongo
from flask import Flask
from prometheus_client import Counter
from pymongo import ReadPreference
from pymongo.database import Database
from pymongo.errors import (
    InvalidOperation,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
)

from runtime import admission
from runtime.database import describe, unavailable
from runtime.exact_cache import ExactCache, Stream

AWAIT_SECONDS = 0.25  # how long an idle getMore waits for a change
# How long a proof keeps the caches on: the promised second, less room for the answer to
# reach its caller.
FRESH_SECONDS = 0.9
RETRY_SECONDS = (0.5, 30.0)  # the first wait before reopening a stream, and the longest
LOGGED_OFF_SECONDS = 1.0  # a period off at least this long is logged when it ends
START_CHECK_SECONDS = 2.0  # how long the check at start waits for the database
DOCUMENT_CHANGES = frozenset({"insert", "update", "replace", "delete"})

OFF_SECONDS = Counter(
    "botcatalogue_cache_off_seconds",
    "Seconds a worker's exact caches were off (every lookup answered by the database), by "
    "reason: opening (no stream yet), lagging (the stream has not caught up within the "
    "second), resuming (after a timeout or a lost connection), unavailable (no stream can "
    "be opened).",
    ["reason"],
)
OFF_PERIODS = Counter(
    "botcatalogue_cache_off_periods",
    "Times a worker's exact caches went off, by the reason they did (as "
    "botcatalogue_cache_off_seconds); a rate that climbs is a flapping stream.",
    ["reason"],
)

log = logging.getLogger(__name__)


def _changes_of(collections, *, images: bool) -> list[dict]:
    """The pipeline of a database's change stream that follows `collections`: each change
    as the ids it names (with `images`, the documents it shows too: see `watch`), and what
    ends the stream's continuity."""
    collections = sorted(collections)
    shown = dict.fromkeys(("operationType", "ns", "to", "documentKey", "clusterTime"), 1)
    if images:
        shown |= dict.fromkeys(("fullDocument", "fullDocumentBeforeChange", "updateDescription"), 1)
    return [
        {"$match": {"$or": [
            {"ns.coll": {"$in": collections}},
            {"to.coll": {"$in": collections}},  # a collection renamed over one
            {"operationType": {"$in": ["dropDatabase", "invalidate"]}},
        ]}},
        {"$project": shown},
    ]  # fmt: skip


def watch(database: Database, collections, *, images: bool = False, **options):
    """A change stream over `collections` of `database`; with `images`, each change carries
    the document as inserted or replaced, and where the collection keeps pre-images
    (repositories/change_images.py), the document before an update or a deletion, and what
    an update changed."""
    if images:
        options["full_document_before_change"] = "whenAvailable"
    return database.watch(_changes_of(collections, images=images), **options)


class Subscriber(Protocol):
    """A cache made of documents of `collections`; the feed makes itself its `stream`."""

    collections: frozenset[str]
    stream: Stream

    def changed(self, collection: str, document_id, change: dict) -> None:
        """`change` is the stream's event (its `_id` the resume token after it)."""

    def clear(self) -> None: ...


class Clock:
    """The time a feed reads and the pauses it makes: the monotonic clock's, which a test
    replaces with a clock of its own to step a feed through time without waiting."""

    now = staticmethod(time.monotonic)

    @staticmethod
    def pause(stopping: threading.Event, seconds: float) -> bool:
        """Waits `seconds`, or less if `stopping` is set; whether it is."""
        return stopping.wait(seconds)


class _OffTime:
    """Counts the time the caches are off, by reason, as the stream thread sees it."""

    def __init__(self, clock: Clock):
        self.reason = "opening"
        self._clock = clock
        self._counted_to = clock.now()
        self._off_since: float | None = None
        self._off_reason = self.reason

    def count(self, fresh_until: float) -> None:
        """Up to now, given the proofs so far keep the caches on until `fresh_until`."""
        now = self._clock.now()
        off_from = max(self._counted_to, fresh_until)
        if now > off_from:
            if self._off_since is None:
                self._off_since, self._off_reason = off_from, self.reason
                OFF_PERIODS.labels(self.reason).inc()
            OFF_SECONDS.labels(self.reason).inc(now - off_from)
        self._counted_to = now

    def proven(self) -> None:
        """The caches are on again: a period off ends here."""
        if self._off_since is not None:
            seconds = self._clock.now() - self._off_since
            if seconds >= LOGGED_OFF_SECONDS:
                log.info(
                    "The exact caches are on again after %.1f s off (%s).",
                    seconds,
                    self._off_reason,
                )
            self._off_since = None


# What a stream's warning says its subscribers do without it: while it can resume, and once
# it cannot. The caches' by default; the live feeds' own stream says its own
# (runtime/request_feeds.py).
CACHES_WITHOUT_IT = (
    "it resumes from its last change, and the exact caches keep their entries; every request "
    "reads its caller, bots and summaries from the database until one runs again",
    "the exact caches are emptied and off; every request reads its caller, bots and summaries "
    "from the database until one runs again",
)


class ChangeFeed:
    """The stream of its subscribers' collections; with `images`, its changes carry the
    documents they show (`watch`)."""

    def __init__(
        self,
        database: Database,
        subscribers: Iterable[Subscriber],
        clock: Clock | None = None,
        *,
        without_it: tuple[str, str] = CACHES_WITHOUT_IT,
        images: bool = False,
    ):
        self._clock = clock or Clock()
        self._images = images
        self._without_it = without_it
        self._database = database.with_options(read_preference=ReadPreference.PRIMARY)
        self._subscribers = list(subscribers)
        for subscriber in self._subscribers:
            subscriber.stream = self
        self._collections = sorted({name for s in self._subscribers for name in s.collections})
        self._fresh_until = 0.0
        self._proof = threading.Condition()  # notified when `_fresh_until` moves
        self._following = False
        self._resume_token = None
        self._opened = False
        # The server refused every stream this process asked for (a standalone server): a
        # stream that ran once and cannot resume is opened again, and waited for.
        self._refused = False
        self._ever_opened = False
        self._warned = False
        self._off = _OffTime(self._clock)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid: int | None = None
        self._start_lock = threading.Lock()

    @property
    def live(self) -> bool:
        """Whether every change written up to FRESH_SECONDS ago has reached the caches."""
        if self._pid != os.getpid():
            self._start()
        return self._clock.now() < self._fresh_until

    @property
    def following(self) -> bool:
        """Whether a stream is open, or can resume: every change written from now on will
        reach the caches."""
        return self._following

    def wait_live(self, seconds: float) -> bool:
        """Whether the stream is live within `seconds`; False at once while the server has
        refused every stream this process asked for (a standalone server)."""
        with self._proof:
            return self._proof.wait_for(lambda: self.live or self._refused, seconds) and self.live

    def _start(self) -> None:
        with self._start_lock:
            if self._pid == os.getpid() or self._stopping.is_set():
                return
            self._fresh_until = 0.0
            self._following = False
            self._refused = self._ever_opened = False
            self._off = _OffTime(self._clock)
            self._thread = threading.Thread(target=self._run, name="change-feed", daemon=True)
            self._thread.start()
            self._pid = os.getpid()
            atexit.register(self.stop)

    def stop(self) -> None:
        """Close the stream within AWAIT_SECONDS; the caches are off from now on."""
        self._stopping.set()
        self._fresh_until = 0.0
        self._following = False
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
                if error.timeout and not isinstance(error, ServerSelectionTimeoutError):
                    self._slow(describe(error))
                else:
                    # Refused by the server (no replica set, or history it no longer holds),
                    # the stream cannot resume; lost on the way (network, restart), it can.
                    self._broken(describe(error), resumable=unavailable(error))
            except Exception as error:  # a client without streams: still never a stale entry
                self._broken(f"{type(error).__name__}: {error}", resumable=False)
            if self._clock.pause(self._stopping, wait):
                return
            self._off.count(self._fresh_until)
            wait = min(wait * 2, RETRY_SECONDS[1]) if not self._opened else RETRY_SECONDS[0]

    def _follow(self) -> None:
        """Until the process stops, or the server ends the stream (an `invalidate`)."""
        self._opened = False
        # The stream's own session: its cluster time is that of the stream's last answer.
        with (
            self._database.client.start_session(causal_consistency=False) as session,
            watch(
                self._database,
                self._collections,
                images=self._images,
                resume_after=self._resume_token,
                max_await_time_ms=int(AWAIT_SECONDS * 1000),
                session=session,
            ) as stream,
        ):
            self._opened = True
            self._ever_opened = True
            self._refused = False
            if self._resume_token is None:
                self._clear()
            self._following = True
            self._off.reason = "lagging"
            if self._warned:
                log.info("Change stream open again: the exact caches follow it.")
                self._warned = False
            self._read(stream, session)
        self._off.reason = "resuming" if self._resume_token is not None else "opening"

    def _read(self, stream, session) -> None:
        # Sent-at times of answers that held changes, each with the cluster time of its
        # answer, until a later change proves that all changes up to that time have arrived.
        unproven: deque[tuple[float, object]] = deque()
        while stream.alive and not self._stopping.is_set():
            asked, known = self._clock.now(), session.cluster_time
            change = stream.try_next()
            self._off.count(self._fresh_until)
            if change is None:
                if stream.alive:  # an empty answer, not a cursor the server closed
                    self._proven(asked)
                    unproven.clear()
            else:
                answered = session.cluster_time
                if answered is not None and answered != known:  # answered during this call
                    unproven.append((asked, answered["clusterTime"]))
                while unproven and change["clusterTime"] > unproven[0][1]:
                    self._proven(unproven.popleft()[0])
                self._dispatch(change)
            self._resume_token = stream.resume_token if stream.alive else None

    def _proven(self, asked: float) -> None:
        """Every change written before `asked` has reached the caches."""
        with self._proof:
            self._fresh_until = max(self._fresh_until, asked + FRESH_SECONDS)
            self._proof.notify_all()
        if self._clock.now() < self._fresh_until:
            self._off.proven()

    def _dispatch(self, change: dict) -> None:
        kind, collection = change["operationType"], change.get("ns", {}).get("coll")
        if kind not in DOCUMENT_CHANGES:
            self._clear()
            return
        document_id = change["documentKey"]["_id"]
        for subscriber in self._subscribers:
            if collection in subscriber.collections:
                subscriber.changed(collection, document_id, change)

    def _clear(self) -> None:
        for subscriber in self._subscribers:
            subscriber.clear()

    def _slow(self, reason: str) -> None:
        """The server answered nothing within STREAM_TIMEOUT_MS: a busy server, which the
        stream resumes on, not a broken stream."""
        self._off.count(self._fresh_until)
        self._off.reason = "resuming"
        log.info(
            "Change stream slow (%s): resuming from its last change; the exact caches keep "
            "their entries.",
            reason,
        )

    def _broken(self, reason: str, *, resumable: bool) -> None:
        self._off.count(self._fresh_until)
        if resumable:
            self._off.reason = "resuming"
        else:
            self._following = False
            self._resume_token = None
            self._clear()
            self._off.reason = "unavailable" if not self._opened else "opening"
            with self._proof:
                self._refused = not self._ever_opened
                self._proof.notify_all()
        if not self._warned:
            consequence = self._without_it[0 if resumable else 1]
            log.warning("No change stream (%s): %s.", reason, consequence)
            self._warned = True


def init_app(app: Flask) -> None:
    """The worker's three caches and the stream that keeps them exact; a cache sized 0 is off."""
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
    summaries = ExactCache(
        "summaries", ("bots", "users", "organizations"), app.config["SUMMARY_CACHE_SIZE"]
    )
    caches = (tokens, catalogue, summaries)
    for cache in caches:
        cache.before_wait = admission.refuse_if_stalled
    database = app.extensions["mongo_stream"][app.config["MONGODB_DB"]]
    app.extensions["changes"] = ChangeFeed(database, [c for c in caches if c.enabled])
    app.extensions["token_cache"] = tokens
    app.extensions["catalogue_cache"] = catalogue
    app.extensions["summary_cache"] = summaries


def warn_if_refused(app: Flask) -> None:
    """At start (gunicorn's master, gunicorn.conf.py): one warning when the database refuses
    change streams (a standalone server), so that an operator learns at once, not from each
    worker's first request and first feed, that the caches stay off and feeds answer 503.

    The stream's client is closed again: the workers open their own after the fork. A
    database out of reach says nothing here; each worker tells when it tries."""
    client = app.extensions["mongo_stream"]
    try:
        with pymongo.timeout(START_CHECK_SECONDS):
            client[app.config["MONGODB_DB"]].watch(max_await_time_ms=1).close()
    except OperationFailure as error:
        if unavailable(error):  # out of time or refusing the login: each worker tells
            return
        log.warning(
            "The database runs no change streams (%s): the exact caches stay off and every "
            "live feed answers 503. Run a replica set or a sharded cluster "
            "(docs/deployment.md#database).",
            describe(error),
        )
    except PyMongoError:
        pass
    finally:
        client.close()
