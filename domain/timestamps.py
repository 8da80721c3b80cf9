"""Timestamps as the database holds them and pymongo returns them by default: naive UTC.

BSON keeps whole milliseconds, so a time taken here compares, and reads back, as stored.
"""

import datetime as dt


def now() -> dt.datetime:
    """Built field by field: two `replace` calls cost twice the rest, on every token check."""
    moment = dt.datetime.now(dt.UTC)
    return dt.datetime(
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
        moment.microsecond // 1000 * 1000,
    )


def whole_milliseconds(moment: dt.datetime) -> dt.datetime:
    """`moment` as BSON keeps it: the microseconds past its millisecond dropped."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


_MILLISECOND = dt.timedelta(milliseconds=1)


def stored_instant(moment: dt.datetime) -> dt.datetime:
    """The first whole millisecond at or after `moment`.

    BSON keeps milliseconds and the driver drops the rest, so a bound between two
    milliseconds would otherwise take in the one before it. For `$gte` and `$lt` alike, the
    next millisecond is the exact bound.
    """
    return moment + dt.timedelta(microseconds=-moment.microsecond % 1000)


def between(start: dt.datetime | None, end: dt.datetime | None) -> dict:
    """The condition on a timestamp from `start` (inclusive) to `end` (exclusive), either open.

    At or after `start` is said as after the millisecond before it: the same bound, as BSON
    keeps milliseconds, and the one the embedded engine gets right on a descending index,
    where its `$gte` leaves out a value equal to the bound.
    """
    condition = {}
    if start is not None:
        first = stored_instant(start)
        if first > dt.datetime.min:
            condition["$gt"] = first - _MILLISECOND
        else:
            condition["$gte"] = first
    if end is not None:
        condition["$lt"] = stored_instant(end)
    return condition
