"""The permits of admission control: how many, and when a request waits for one."""

import threading
from types import SimpleNamespace

import pytest
from flask import Flask, g

from runtime import admission
from runtime.admission import PATIENCE, Permits


class _NoWaiting(threading.BoundedSemaphore):
    """Records how long each take would wait for a permit (None: not at all), and never
    waits: a permit is there or not."""

    def __init__(self, value: int):
        super().__init__(value)
        self.waits: list[float | None] = []

    def acquire(self, blocking=True, timeout=None):
        self.waits.append(timeout if blocking else None)
        return super().acquire(blocking=False)


@pytest.fixture
def semaphores(monkeypatch):
    made = []

    def semaphore(value):
        made.append(_NoWaiting(value))
        return made[-1]

    monkeypatch.setattr(admission, "threading", SimpleNamespace(BoundedSemaphore=semaphore))
    return made


def test_count_permits_are_taken_then_none_until_one_is_given_back(semaphores):
    permits = Permits(2)

    assert [permits.take(), permits.take(), permits.take()] == [True, True, False]
    permits.give_back()
    assert [permits.take(), permits.take()] == [True, False]


def test_a_request_waits_for_a_permit_only_until_a_wait_runs_out(semaphores):
    """Then the permits are held by stalled requests: the next requests are refused without
    waiting, until a permit comes back."""
    permits = Permits(1)
    [free] = semaphores
    permits.take()

    assert not permits.take()
    assert free.waits[-2:] == [None, PATIENCE]
    free.waits.clear()
    assert not permits.take()
    assert not permits.take()
    assert free.waits == [None, None]

    permits.give_back()
    permits.take()
    free.waits.clear()
    assert not permits.take()
    assert free.waits == [None, PATIENCE]


def test_a_permit_given_back_twice_is_a_bug_not_an_extra_permit():
    permits = Permits(1)

    with pytest.raises(ValueError):
        permits.give_back()


def test_a_feed_reads_under_permits_of_its_own_and_waits_for_them(semaphores):
    """Every request permit held (a busy worker) and one stuck wait: a feed still reads, and
    its reads take no request permit. With every feed permit held, it waits its `seconds`,
    and only then is refused."""
    app = Flask(__name__)
    app.config["DATABASE_PERMITS"] = 1
    admission.init_app(app)
    requests, feeds = app.extensions["database_permits"], app.extensions["feed_permits"]
    requests.take()
    assert not requests.take()  # stuck: a request would now be refused at once

    with app.app_context():
        with admission.permitted(5.0):
            admission.admit()  # a read inside, a token the cache lacks, say
            assert g.database_permit
        assert not g.get("database_permit")
        feeds.take()
        with pytest.raises(admission.DatabaseBusy), admission.permitted(5.0):
            pass

    [_, feed_semaphore] = semaphores
    assert feed_semaphore.waits[-1] == 5.0
    assert not requests.take(), "the feed took no request permit, and gave none back"
