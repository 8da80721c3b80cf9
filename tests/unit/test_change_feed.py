"""When the change stream counts as live, with a stand-in stream whose answers, their cluster
times and how long each takes the test scripts, on a clock of the test's own: the feed is
stepped through its seconds without waiting for them. tests/api/test_exact_caches.py and
tests/deployment prove the stream itself on a real server."""

import itertools
import logging
import threading
from types import SimpleNamespace

import pytest
from bson import ObjectId, Timestamp
from prometheus_client import REGISTRY
from pymongo.errors import ExecutionTimeout, OperationFailure

from runtime import changes
from runtime.exact_cache import ExactCache

AWAIT = changes.AWAIT_SECONDS


def _off_seconds(reason: str) -> float:
    return REGISTRY.get_sample_value("botcatalogue_cache_off_seconds_total", {"reason": reason})


class Clock:
    """The feed's clock: it moves only as the stand-in's answers take their time, or as the
    feed pauses."""

    def __init__(self):
        self.time = 1000.0

    def now(self) -> float:
        return self.time

    def pause(self, stopping: threading.Event, seconds: float) -> bool:
        self.time += seconds
        return stopping.is_set()


class Session:
    """The stream's session: `cluster_time` is that of the last answer, as pymongo keeps it."""

    def __init__(self):
        self.cluster_time = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass


class Server:
    """A cluster clock and a script of steps, (answer, seconds): the answer is a change,
    None (nothing new), an exception to raise, or a function of the server giving one; each
    `getMore` takes its seconds of the feed's clock. Before each, `live` notes whether the
    feed was live then. When the script ends, a `getMore` waits until `done`."""

    def __init__(self, clock: Clock, script):
        self.clock, self.script = clock, iter(script)
        self.cluster = itertools.count(1)
        self.opened_after = []  # the resume token of each watch
        self.live = []
        self.feed = None
        self.idle, self.done = threading.Event(), threading.Event()

    def tick(self) -> Timestamp:
        return Timestamp(1_700_000_000, next(self.cluster))

    def answer(self):
        if self.feed is not None and not self.done.is_set():
            self.live.append(self.feed.live)
        step = next(self.script, None)
        if step is None:
            self.idle.set()
            self.done.wait()
            return None
        answer, seconds = step
        self.clock.time += seconds
        return answer(self) if callable(answer) else answer


class Stream:
    def __init__(self, server: Server, session: Session):
        self.alive, self.resume_token = True, {"_data": "0"}
        self._server, self._session = server, session

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.alive = False

    def try_next(self):
        answer = self._server.answer()
        self._session.cluster_time = {"clusterTime": self._server.tick()}
        if isinstance(answer, Exception):
            raise answer
        if answer is not None:
            self.resume_token = {"_data": str(answer["clusterTime"].inc)}
        return answer


class Client:
    def __init__(self):
        self.session = Session()

    def start_session(self, **options):
        return self.session


class Database:
    def __init__(self, server: Server):
        self._server = server
        self.client = Client()

    def with_options(self, **options):
        return self

    def watch(self, pipeline, resume_after=None, **options):
        self._server.opened_after.append(resume_after)
        return Stream(self._server, options["session"])


def change(server: Server, cluster_time: Timestamp | None = None) -> dict:
    """A change written now, unless `cluster_time` says when."""
    return {
        "operationType": "update",
        "ns": {"coll": "users"},
        "documentKey": {"_id": ObjectId()},
        "clusterTime": cluster_time or server.tick(),
    }


@pytest.fixture
def feed_of():
    """A feed run through its script, then held at the script's end."""
    made = []

    def make(script, cache: ExactCache | None = None):
        clock = Clock()
        server = Server(clock, script)
        cache = cache or ExactCache("t", ["users"], 9)
        feed = changes.ChangeFeed(Database(server), [cache], clock)
        server.feed = feed
        made.append((feed, server))
        assert not feed.live, "the feed starts off"
        assert server.idle.wait(10), "the script ran to its end"
        return feed, server

    yield make
    for feed, server in made:
        server.done.set()
        feed.stop()


def test_a_quiet_stream_whose_getmore_waits_is_live(feed_of):
    feed, server = feed_of([(None, AWAIT)] * 20)

    assert server.live[:1] == [False] and all(server.live[2:]) and feed.live


def test_an_empty_answer_that_comes_back_late_still_proves_when_it_was_sent(feed_of):
    """Each answer takes longer than a quick server's, within the second: the stream is live
    for the rest of FRESH_SECONDS after each."""
    feed, server = feed_of([(None, changes.FRESH_SECONDS - 0.2)] * 5)

    assert all(server.live[1:]) and feed.live


def test_an_empty_answer_later_than_fresh_seconds_proves_nothing_still_fresh(feed_of):
    feed, server = feed_of([(None, changes.FRESH_SECONDS + 0.1)] * 10)

    assert not any(server.live) and not feed.live


def test_a_steady_flow_of_changes_keeps_the_stream_live(feed_of):
    """No answer is ever empty; each change, written after the answer before it, proves that
    every change up to that answer has arrived."""
    feed, server = feed_of([(None, 0.05)] * 3 + [(change, 0.05)] * 40)

    assert all(server.live[2:]) and feed.live


def test_a_backlog_of_changes_older_than_the_answers_is_not_live(feed_of):
    """A stream that resumes into a backlog hands back changes written before its answers:
    until one is newer than an answer, nothing says that the backlog is over."""
    backlog = itertools.count(1)

    def older(server: Server) -> dict:
        return change(server, Timestamp(1_600_000_000, next(backlog)))

    feed, server = feed_of([(None, AWAIT)] * 5 + [(older, AWAIT)] * 12)

    assert all(server.live[2:6]), "live before the backlog"
    fresh_for = int(changes.FRESH_SECONDS / AWAIT) + 1
    assert not any(server.live[5 + fresh_for :]) and not feed.live


def test_a_stream_that_stalls_is_off_within_fresh_seconds_and_says_how_long(feed_of, caplog):
    caplog.set_level(logging.INFO, logger="runtime.changes")
    off_before = _off_seconds("lagging") or 0.0

    feed, server = feed_of([(None, AWAIT)] * 4 + [(None, 2.0)] + [(None, AWAIT)] * 4)

    assert server.live[5] is False, "off once FRESH_SECONDS have passed in the stall"
    assert all(server.live[7:]) and feed.live, "on again after it"
    off = _off_seconds("lagging") - off_before
    assert 1.0 <= off < 3.0
    assert "on again after" in caplog.text and "(lagging)" in caplog.text


def test_a_timeout_resumes_from_the_last_change_and_keeps_the_entries(feed_of):
    cache = ExactCache("t", ["users"], 9)
    seen = []

    def remembered(server: Server) -> dict:
        seen.append(change(server))
        return seen[-1]

    def store(server: Server) -> None:
        cache.get("k", lambda: "kept")

    timeout = ExecutionTimeout("operation would exceed time limit", 50)
    script = [(None, 0.05), (remembered, 0.05), (None, 0.05), (store, 0.05), (timeout, 0.05)]
    feed, server = feed_of(script + [(None, 0.05)] * 5, cache)

    assert server.opened_after[0] is None
    assert server.opened_after[1] == {"_data": str(seen[0]["clusterTime"].inc)}, "resumed"
    assert feed.live and cache.get("k", lambda: "read again") == "kept"


def test_history_that_cannot_resume_empties_the_caches(feed_of):
    cache = ExactCache("t", ["users"], 9)
    lost = OperationFailure("resume point no longer in the oplog", 286)

    def store(server: Server) -> None:
        cache.get("k", lambda: "stored")

    script = [(None, 0.05), (store, 0.05), (None, 0.05), (lost, 0.05)]
    feed, server = feed_of(script + [(None, 0.05)] * 5, cache)

    assert server.opened_after[1] is None, "a fresh stream"
    assert feed.live and cache.get("k", lambda: "read again") == "read again"


class _Refusing(Database):
    """A standalone server's answer to every watch."""

    def watch(self, pipeline, resume_after=None, **options):
        raise OperationFailure(
            "The $changeStream stage is only supported on replica sets",
            40573,
            {"errmsg": "The $changeStream stage is only supported on replica sets"},
        )


def test_a_server_that_refuses_streams_is_told_at_once_in_the_subscribers_words(caplog):
    """A new live feed asks `wait_live` before it answers: on a standalone server it gets its
    503 at once, not after waiting out the seconds it would give a stream to open."""
    feed = changes.ChangeFeed(
        _Refusing(Server(Clock(), [])),
        [ExactCache("t", ["users"], 9)],
        without_it=("they wait", "feeds answer 503"),
    )
    try:
        waited = threading.Event()
        answers = []
        threading.Thread(target=lambda: (answers.append(feed.wait_live(60)), waited.set())).start()
        assert waited.wait(10), "told before the 60 s it was given"
        assert answers == [False]
        assert not feed.wait_live(60)
    finally:
        feed.stop()

    assert "No change stream (The $changeStream stage is only supported on replica sets " in (
        caplog.text
    )
    assert "(code 40573)): feeds answer 503." in caplog.text


class _WatchFails:
    """A client whose every watch raises `error`, as the check at start would meet it."""

    def __init__(self, error: Exception):
        self.error, self.closed = error, False

    def __getitem__(self, name):
        return self

    def watch(self, **options):
        raise self.error

    def close(self):
        self.closed = True


@pytest.mark.parametrize(
    ("error", "warned"),
    [
        (OperationFailure("only supported on replica sets", 40573), True),
        (ExecutionTimeout("operation would exceed time limit", 50), False),
        (OperationFailure("Authentication failed.", 18), False),
    ],
)
def test_the_check_at_start_warns_of_a_refusal_not_of_a_slow_or_locked_database(
    error, warned, caplog
):
    client = _WatchFails(error)
    app = SimpleNamespace(extensions={"mongo_stream": client}, config={"MONGODB_DB": "db"})

    changes.warn_if_refused(app)

    assert ("runs no change streams" in caplog.text) == warned
    assert client.closed
