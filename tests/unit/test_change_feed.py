"""When the change stream counts as current, with a stand-in stream whose answers and their
timing the test chooses; tests/api/test_exact_caches.py and tests/deployment prove the stream
itself on a real server."""

import time

import pytest
from bson import ObjectId

from runtime import changes
from runtime.exact_cache import ExactCache
from tests.conftest import wait_until


class Stream:
    """Answers as `answer()` says, each after `seconds`: a change, or None (nothing new)."""

    def __init__(self, answer, seconds: float):
        self.alive, self.resume_token = True, {"_data": "1"}
        self._answer, self._seconds = answer, seconds

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.alive = False

    def try_next(self):
        time.sleep(self._seconds)
        return self._answer()


class Database:
    def __init__(self, stream: Stream):
        self._stream = stream

    def with_options(self, **options):
        return self

    def watch(self, *args, **kwargs):
        return self._stream


def _change():
    return {"operationType": "update", "ns": {"coll": "users"}, "documentKey": {"_id": ObjectId()}}


@pytest.fixture
def feed_of():
    feeds = []

    def make(answer, seconds: float) -> changes.ChangeFeed:
        feed = changes.ChangeFeed(
            Database(Stream(answer, seconds)), [ExactCache("t", ["users"], 9)]
        )
        feeds.append(feed)
        return feed

    yield make
    for feed in feeds:
        feed.stop()


def _live_for(feed, seconds: float) -> list[bool]:
    samples = []
    for _ in range(int(seconds / 0.05)):
        samples.append(feed.live)
        time.sleep(0.05)
    return samples


def test_a_quiet_stream_whose_getmore_waits_is_current(feed_of):
    feed = feed_of(lambda: None, changes.AWAIT_SECONDS)
    wait_until(lambda: feed.live, "the feed is live", 3)
    assert all(_live_for(feed, 1.5))


def test_a_stream_that_keeps_returning_changes_stops_being_current(feed_of):
    """Quiet, then changes without a pause: the stream may fall any distance behind them."""
    answers = iter([None] * 6)
    feed = feed_of(lambda: next(answers, None) if answers.__length_hint__() else _change(), 0.2)
    wait_until(lambda: feed.live, "the feed is live while quiet", 3)
    time.sleep(6 * 0.2 + changes.FRESH_SECONDS)

    assert not any(_live_for(feed, 1.5))


@pytest.mark.parametrize("seconds", [0.0, changes.AWAIT_SECONDS + 0.5], ids=["quick", "slow"])
def test_an_empty_answer_that_did_not_wait_its_time_is_not_current(feed_of, seconds):
    """Quick: the first batch of a stream the driver resumed; slow: a server that lags."""
    feed = feed_of(lambda: None, seconds)
    assert not any(_live_for(feed, 1.5))
