"""The permits of admission control: how many, when a request waits for one, and when a
worker's permits are judged stalled (docs/decisions/2026-11-29-busy-or-stalled.md)."""

import threading
import time

import pytest
from flask import Flask, g

from runtime import admission
from runtime.admission import DatabaseBusy, DatabaseStalled, Permits


def _holding(permits: Permits, seconds: float) -> threading.Thread:
    """A thread that takes a permit, holds it `seconds`, and gives it back."""
    taken = threading.Event()

    def hold():
        permits.take(0)
        taken.set()
        time.sleep(seconds)
        permits.give_back()

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait(5)
    return thread


def test_count_permits_are_taken_then_none_until_one_is_given_back():
    permits = Permits(2, stall=None)
    permits.take(0)
    permits.take(0)

    with pytest.raises(DatabaseBusy) as refused:
        permits.take(0)
    assert type(refused.value) is DatabaseBusy
    permits.give_back()
    permits.take(0)


def test_a_request_waits_for_a_permit_that_comes_back_within_its_deadline():
    """Busy, not stalled: the permit comes back before STALL, and the request is served."""
    permits = Permits(1, stall=1.0)
    holder = _holding(permits, 0.2)

    permits.take(5)
    holder.join()
    permits.give_back()


def test_a_burst_is_served_while_the_permits_keep_coming_back():
    """Twelve requests for one permit, each holding it 30 ms: far longer in all than STALL,
    but the permit changes hands more often than that, so none is refused."""
    permits, refused = Permits(1, stall=0.2), []

    def request():
        try:
            permits.take(10)
        except DatabaseBusy as error:
            refused.append(error)
            return
        time.sleep(0.03)
        permits.give_back()

    threads = [threading.Thread(target=request) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert refused == []


def test_a_request_whose_deadline_runs_out_first_is_refused_as_busy():
    permits = Permits(1, stall=None)
    holder = _holding(permits, 0.3)

    with pytest.raises(DatabaseBusy) as refused:
        permits.take(0.05)
    holder.join()
    assert type(refused.value) is DatabaseBusy


def test_permits_held_for_stall_with_none_coming_back_refuse_at_once_until_one_does():
    permits = Permits(1, stall=0.1)
    permits.take(0)

    started = time.monotonic()
    with pytest.raises(DatabaseStalled):
        permits.take(30)  # waited until the permits were judged stalled, not 30 s
    judged = time.monotonic() - started
    started = time.monotonic()
    with pytest.raises(DatabaseStalled):
        permits.take(30)
    again = time.monotonic() - started
    assert permits.stalled()

    permits.give_back()
    assert not permits.stalled()
    permits.take(0)
    assert 0.1 <= judged < 5 and again < 0.1


def test_a_database_that_keeps_answering_is_busy_not_stalled_however_long_a_permit_is_held():
    """A request of seconds holds its permit, but the database answers its commands one by
    one: the others wait for the permit rather than being refused, and get it."""
    permits = Permits(1, stall=0.1)
    holder = _holding(permits, 0.6)
    answering = threading.Event()

    def answer():
        while not answering.wait(0.03):
            permits.answered()

    answerer = threading.Thread(target=answer)
    answerer.start()
    try:
        permits.take(5)
    finally:
        answering.set()
        answerer.join()
        holder.join()
    permits.give_back()


def test_answers_that_stop_leave_the_permits_stalled_a_stall_later():
    permits = Permits(1, stall=0.1)
    permits.take(0)
    time.sleep(0.15)
    assert permits.stalled()

    permits.answered()
    assert not permits.stalled()
    time.sleep(0.15)
    assert permits.stalled()


def test_idle_permits_are_not_stalled_when_a_burst_takes_them_all():
    """The permits were last moved long ago, but not held: taking them all starts the clock."""
    permits = Permits(1, stall=0.1)
    permits._moved -= 3600

    permits.take(0)
    assert not permits.stalled()
    permits.give_back()


def test_a_permit_given_back_twice_is_a_bug_not_an_extra_permit():
    permits = Permits(1)

    with pytest.raises(ValueError):
        permits.give_back()


def _app(permits: int) -> Flask:
    app = Flask(__name__)
    app.config["DATABASE_PERMITS"] = permits
    app.config["MONGODB_TIMEOUT_MS"] = 1000
    admission.init_app(app)
    return app


def test_a_feed_reads_under_permits_of_its_own_and_waits_for_them():
    """Every request permit held and stalled: a feed still reads, and its reads take no
    request permit. With every feed permit held, it waits its `seconds` (no stall is judged
    for feeds), and only then is refused."""
    app = _app(1)
    requests, feeds = app.extensions["database_permits"], app.extensions["feed_permits"]
    requests.take(0)
    requests._moved -= 3600
    assert requests.stalled()

    with app.app_context():
        with admission.permitted(5.0):
            admission.admit()  # a read inside, a token the cache lacks, say
            assert g.database_permit
        assert not g.get("database_permit")
        feeds.take(0)
        feeds._moved -= 3600
        started = time.monotonic()
        with pytest.raises(DatabaseBusy), admission.permitted(0.2):
            pass
        waited = time.monotonic() - started

    assert waited >= 0.2
    with pytest.raises(DatabaseStalled):
        requests.take(0)


def test_a_feed_keeps_the_request_permit_it_held_before():
    """A feed's view reads under a request permit; a stretch under a feed permit after it
    must leave that one held, for the request's end to give back."""
    app = _app(1)
    with app.test_request_context():
        admission.admit()
        with admission.permitted(1.0):
            pass
        assert g.database_permit
    app.extensions["database_permits"].take(0)  # given back when the request ended


def test_a_request_waits_no_longer_than_its_deadline(monkeypatch):
    app = _app(1)
    app.config["MONGODB_TIMEOUT_MS"] = 100
    app.extensions["database_permits"] = Permits(1, stall=None)
    app.extensions["database_permits"].take(0)

    with app.test_request_context():
        g.request_started = time.perf_counter()
        with pytest.raises(DatabaseBusy):
            admission.admit()
        waited = time.perf_counter() - g.request_started

    assert 0.1 <= waited < 5


def test_a_read_past_the_request_deadline_still_waits_a_stall_for_its_permit():
    """A streamed body's later batches read after the request's deadline, each under one of
    its own (web/downloads.py): a busy worker's permit is waited for as long as STALL."""
    app = _app(1)
    app.extensions["database_permits"] = Permits(1, stall=None)
    app.extensions["database_permits"].take(0)

    with app.test_request_context():
        g.request_started = time.perf_counter() - 3600
        started = time.perf_counter()
        with pytest.raises(DatabaseBusy):
            admission.admit()
        waited = time.perf_counter() - started

    assert admission.STALL <= waited < 5
