"""domain/timestamps.py: the time now, in the form stored timestamps come back in."""

import datetime as dt

from domain import timestamps


def test_now_is_naive_utc_in_whole_milliseconds():
    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    now = timestamps.now()
    after = dt.datetime.now(dt.UTC).replace(tzinfo=None)

    assert now.tzinfo is None
    assert before - dt.timedelta(milliseconds=1) < now <= after
    assert now.microsecond % 1000 == 0


def test_now_reads_back_as_it_was_stored(db):
    now = timestamps.now()
    db.times.insert_one({"at": now})

    assert db.times.find_one()["at"] == now
