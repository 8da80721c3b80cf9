"""The live feeds of bot requests that one worker serves (docs/api.md#live-feed), fanned out
from one change stream of its own, opened when the first feed is: a thousand clients cost the
database one cursor per worker, not a thousand.

The stream follows `botrequests` and the collections a caller is read from (`RIGHTS`), in
the database's one order of writes: a change to a token, a user or an organization reaches
each feed before any request change written after it, so a feed reads its caller again
before it tells of anything its caller might no longer see.

The stream is a `runtime.changes.ChangeFeed`, with its resumes, retries and proofs, whose
one subscriber is this hub. Each open feed has a `Subscription`: a bounded queue of the
changes the stream brought since it opened, each request's with the request before and after
it, shared by every feed and never changed; a feed judges them with its caller's visibility
itself (`blueprints/feeds.py`).

A feed whose queue overflows, or whose stream lost its continuity (it was opened again and
cannot resume), ends: its client reconnects with the last id it got and resumes from the
database's own history, or learns that it is gone (410).

A worker serves at most FEED_CONNECTIONS feeds at once; gunicorn gives each worker that many
threads besides GUNICORN_THREADS (gunicorn.conf.py), so that open feeds never take the
threads of ordinary requests.
"""

import contextlib
import queue
import threading
from dataclasses import dataclass, replace

from flask import Flask
from pymongo.database import Database

from runtime.changes import ChangeFeed
from runtime.update_descriptions import NotApplicable, applied

# The collections a caller is read from (web/authentication.py): a token, its user, its
# organization.
RIGHTS = frozenset({"tokens", "users", "organizations"})
# Changes a feed may have waiting before it is ended rather than fall behind without bound.
QUEUE_SIZE = 10_000
# How long a new feed waits for the worker's stream to open; a standalone server never does.
OPENING_SECONDS = 3.0
_WITHOUT_IT = (  # what the stream's warning says (runtime.changes.ChangeFeed)
    "it resumes from its last change, and open live feeds wait for it",
    "open live feeds end, and new ones answer 503 until one runs again",
)


class FeedsFull(Exception):
    """Every feed slot of this worker is taken."""


class NoChangeStream(Exception):
    """No change stream runs on this database (a standalone server, or one that refuses)."""


@dataclass(frozen=True)
class Change:
    """One change of a document of `collection` (a request, or one of `RIGHTS`): `kind` the
    stream's operationType, `token` the resume token just after it, the id of a feed's
    event. A request's change holds the request `before` and `after` it (None where there was
    none, or is none); `whole` is False where the database kept no pre-image to know them by.
    """

    kind: str
    collection: str
    document_id: object
    token: dict
    before: dict | None = None
    after: dict | None = None
    whole: bool = True

    @classmethod
    def of(cls, change: dict) -> "Change":
        """From a change stream's event, with images (runtime.changes.watch)."""
        kind, collection = change["operationType"], change["ns"]["coll"]
        made = cls(kind, collection, change["documentKey"]["_id"], change["_id"])
        if collection != "botrequests":
            return made
        before = change.get("fullDocumentBeforeChange")
        if kind == "insert":
            return replace(made, after=change["fullDocument"])
        if before is None:  # pre-images off, or no longer held
            return replace(made, whole=False)
        if kind == "delete":
            return replace(made, before=before)
        if kind == "replace":
            return replace(made, before=before, after=change["fullDocument"])
        try:
            return replace(made, before=before, after=applied(before, change["updateDescription"]))
        except NotApplicable:
            return replace(made, whole=False)


class Subscription:
    """What one open feed receives from the hub."""

    def __init__(self, hub: "RequestFeeds"):
        self._hub = hub
        self._changes: queue.Queue = queue.Queue(QUEUE_SIZE)
        self.ended = False  # overflowed, or the stream lost its continuity

    def put(self, change: Change) -> None:
        try:
            self._changes.put_nowait(change)
        except queue.Full:
            self.end()

    def end(self) -> None:
        self.ended = True
        with contextlib.suppress(queue.Full):
            self._changes.put_nowait(None)  # wakes a feed waiting in `take`

    def take(self, seconds: float) -> list[Change]:
        """What arrived, waiting up to `seconds` for the first."""
        try:
            first = self._changes.get(timeout=seconds)
        except queue.Empty:
            return []
        changes = [first]
        while len(changes) < 1000:
            try:
                changes.append(self._changes.get_nowait())
            except queue.Empty:
                break
        return [change for change in changes if change is not None]

    def close(self) -> None:
        self._hub._closed(self)


class RequestFeeds:
    """The worker's feeds: its slots, its subscriptions, and the stream that fills them."""

    collections = frozenset({"botrequests", *RIGHTS})

    def __init__(self, database: Database, slots: int):
        self.slots = slots
        self._free = threading.BoundedSemaphore(slots)
        self._subscriptions: set[Subscription] = set()
        self._lock = threading.Lock()
        # Sets `self.stream`.
        self._feed = ChangeFeed(database, [self], without_it=_WITHOUT_IT, images=True)

    def subscribe(self) -> Subscription:
        """A slot and a subscription, once the worker's stream follows every change; raises
        FeedsFull or NoChangeStream."""
        if not self._free.acquire(blocking=False):
            raise FeedsFull(f"all {self.slots} feeds of this worker are open")
        try:
            # Starts the stream in this process, once, and waits for it to follow.
            if not self.stream.wait_live(OPENING_SECONDS) and not self.stream.following:
                raise NoChangeStream(
                    "No change stream can be opened on this database (a standalone server?): "
                    "feeds need a replica set or a sharded cluster."
                )
            subscription = Subscription(self)
            with self._lock:
                self._subscriptions.add(subscription)
            return subscription
        except BaseException:
            self._free.release()
            raise

    def _closed(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription not in self._subscriptions:
                return
            self._subscriptions.discard(subscription)
        self._free.release()

    # The stream's side (runtime.changes.Subscriber).
    def changed(self, collection: str, document_id, change: dict) -> None:
        news = Change.of(change)
        with self._lock:
            subscriptions = list(self._subscriptions)
        for subscription in subscriptions:
            subscription.put(news)

    def clear(self) -> None:
        """The stream starts over without the changes between, or the worker stops
        (web/gunicorn_worker.py): every open feed ends, and its client resumes."""
        with self._lock:
            subscriptions = list(self._subscriptions)
        for subscription in subscriptions:
            subscription.end()


def init_app(app: Flask) -> None:
    database = app.extensions["mongo_stream"][app.config["MONGODB_DB"]]
    app.extensions["request_feeds"] = RequestFeeds(database, app.config["FEED_CONNECTIONS"])
