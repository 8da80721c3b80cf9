"""Periods of usage (docs/api.md#usage) and of exports (docs/api.md#exports): a start and an end,
checked and defaulted the same way for both."""

import datetime as dt

from marshmallow import ValidationError

from domain import timestamps

PERIOD_DAYS = 30
MAX_PERIOD_DAYS = 366


def period(start, end, names: tuple[str, str]) -> tuple[dt.datetime, dt.datetime]:
    """A period of usage (docs/api.md#usage) or of an export (docs/api.md#exports), `end` exclusive:
    by default the PERIOD_DAYS before `end`, which is now; at most MAX_PERIOD_DAYS long. `names` are
    the parameters' own, for the 400."""
    end = end or timestamps.now()
    start = start or end - min(dt.timedelta(days=PERIOD_DAYS), end - dt.datetime.min)
    if not start < end:
        raise ValidationError(f"Must be later than {names[0]}.", names[1])
    if end - start > dt.timedelta(days=MAX_PERIOD_DAYS):
        message = f"Must be at most {MAX_PERIOD_DAYS} days after {names[0]}."
        raise ValidationError(message, names[1])
    return start, end
