"""When the change stream counts as live, with a stand-in stream whose answers, their cluster
times and their timing the test chooses; tests/api/test_exact_caches.py and tests/deployment
prove the stream itself on a real server."""

import itertools
import logging
import threading
import time

import pytest
from bson import ObjectId, Timestamp
from prometheus_client import REGISTRY
from pymongo.errors import ExecutionTimeout, OperationFailure

from runtime import changes
from runtime.exact_cache import ExactCache
from tests.conftest import wait_until


def _off_seconds(reason: str) -> float:
    return REGISTRY.get_sample_value("botcatalogue_cache_off_seconds_total", {"reason": reason})


class Session:
    """The stream's session: `cluster_time` is that of the last answer, as pymongo keeps it."""

    def __init__(self):
        self.cluster_time = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass


class Server:
    """A cluster clock, and answers as `answer(clock)` says, each after `seconds`: a change,
    None (nothing new), or an exception to raise."""

    def __init__(self, answer, seconds: float):
        self.clock = itertools.count(1)
        self.answer, self.seconds = answer, seconds
        self.opened_after = []  # the resume token of each watch

    def tick(self) -> Timestamp:
        return Timestamp(1_700_000_000, next(self.clock))


class Stream:
    def __init__(self, server: Server, session: Session):
        self.alive, self.resume_token = True, {"_data": "0"}
        self._server, self._session = server, session

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.alive = False

    def try_next(self):
        time.sleep(self._server.seconds)
        answer = self._server.answer(self._server)
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
    feeds = []

    def make(answer, seconds: float, cache: ExactCache | None = None):
        server = Server(answer, seconds)
        feed = changes.ChangeFeed(Database(server), [cache or ExactCache("t", ["users"], 9)])
        feeds.append(feed)
        return feed, server

    yield make
    for feed in feeds:
        feed.stop()


def _live_for(feed, seconds: float) -> list[bool]:
    samples = []
    for _ in range(int(seconds / 0.05)):
        samples.append(feed.live)
        time.sleep(0.05)
    return samples


def test_a_quiet_stream_whose_getmore_waits_is_live(feed_of):
    feed, _ = feed_of(lambda server: None, changes.AWAIT_SECONDS)
    wait_until(lambda: feed.live, "the feed is live", 3)
    assert all(_live_for(feed, 1.5))


def test_an_empty_answer_that_comes_back_late_still_proves_when_it_was_sent(feed_of):
    """Each answer takes longer than a quick server's, within the second: the stream is live
    for the rest of FRESH_SECONDS after each."""
    late = changes.FRESH_SECONDS - 0.2
    feed, _ = feed_of(lambda server: None, late)
    wait_until(lambda: feed.live, "the feed is live after a late answer", 5)


def test_an_empty_answer_later_than_fresh_seconds_proves_nothing_still_fresh(feed_of):
    feed, _ = feed_of(lambda server: None, changes.FRESH_SECONDS + 0.1)
    assert not any(_live_for(feed, 2.5))


def test_a_steady_flow_of_changes_keeps_the_stream_live(feed_of):
    """No answer is ever empty; each change, written after the answer before it, proves that
    every change up to that answer has arrived."""
    quiet = iter([None] * 3)
    feed, _ = feed_of(lambda server: next(quiet, None) or change(server), 0.05)
    wait_until(lambda: feed.live, "the feed is live", 3)
    assert all(_live_for(feed, 1.5))


def test_a_backlog_of_changes_older_than_the_answers_is_not_live(feed_of):
    """A stream that resumes into a backlog hands back changes written before its answers:
    until one is newer than an answer, nothing says that the backlog is over."""
    backlog = itertools.count(1)
    feed, server = feed_of(lambda server: None, changes.AWAIT_SECONDS)
    wait_until(lambda: feed.live, "the feed is live", 3)
    server.clock = itertools.count(10_000)
    server.answer = lambda server: change(server, Timestamp(1_700_000_000, next(backlog)))

    time.sleep(changes.FRESH_SECONDS)
    assert not any(_live_for(feed, 1.0))


def test_a_stream_that_stalls_is_off_within_fresh_seconds_and_says_how_long(feed_of, caplog):
    stalled = threading.Event()
    release = threading.Event()

    def answer(server):
        if stalled.is_set():
            release.wait(10)
            stalled.clear()
        return None

    off_before = _off_seconds("lagging") or 0.0
    feed, _ = feed_of(answer, changes.AWAIT_SECONDS)
    wait_until(lambda: feed.live, "the feed is live", 3)
    with caplog.at_level(logging.INFO, logger="runtime.changes"):
        stalled.set()
        time.sleep(changes.AWAIT_SECONDS + changes.FRESH_SECONDS)
        assert not feed.live
        time.sleep(1.0)
        release.set()
        wait_until(lambda: feed.live, "the feed is live again", 3)
        wait_until(lambda: "on again after" in caplog.text, "the period off is logged", 3)

    off = _off_seconds("lagging") - off_before
    assert 1.0 <= off < 3.0
    assert "(lagging)" in caplog.text


def test_a_timeout_resumes_from_the_last_change_and_keeps_the_entries(feed_of):
    cache = ExactCache("t", ["users"], 9)
    answers = iter([None, "change", ExecutionTimeout("operation would exceed time limit", 50)])
    seen = []

    def answer(server):
        kind = next(answers, None)
        if kind == "change":
            seen.append(change(server))
            return seen[-1]
        return kind

    feed, server = feed_of(answer, 0.05, cache)
    wait_until(lambda: feed.live, "the feed is live", 3)
    wait_until(lambda: len(server.opened_after) == 2, "the stream was opened again", 5)
    wait_until(lambda: feed.live, "the feed is live again", 3)
    cache.get("k", lambda: "kept")

    assert server.opened_after[0] is None
    assert server.opened_after[1] == {"_data": str(seen[0]["clusterTime"].inc)}, "resumed"
    assert cache.get("k", lambda: "read again") == "kept"


def test_history_that_cannot_resume_empties_the_caches(feed_of):
    cache = ExactCache("t", ["users"], 9)
    lost = OperationFailure("resume point no longer in the oplog", 286)
    answers = iter([None] * 5 + [lost])
    feed, server = feed_of(lambda server: next(answers, None), 0.05, cache)
    wait_until(lambda: feed.live, "the feed is live", 3)
    cache.get("k", lambda: "stored")

    wait_until(lambda: len(server.opened_after) == 2, "a fresh stream was opened", 5)

    assert server.opened_after[1] is None
    assert cache.get("k", lambda: "read again") == "read again"
