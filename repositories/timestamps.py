"""Timestamps as the database holds them and pymongo returns them by default: naive UTC.

BSON keeps whole milliseconds, so a time taken here compares, and reads back, as stored.
"""

import datetime as dt


def now() -> dt.datetime:
    moment = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)
