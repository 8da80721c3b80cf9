"""The BSON types mongomock does not know, taught as MongoDB queries and orders them.

The keyset walk names the bracket of every type it places and ranges within it
(repositories/bson_order.py); mongomock raises NotImplementedError on
`$type: "timestamp"`, `"javascript"` or `"minKey"` even where no document holds one, and on
any comparison with a timestamp, as a forged cursor's position may be, and it takes no list
of types. To Python, JavaScript code is a str: MongoDB's `"string"` excludes it, and orders
it after every other type but MaxKey. A date before year 1 or after 9999 is a DatetimeMS to
the driver, which mongomock does not know for a date.
"""

import datetime as dt
import re

from bson import EPOCH_NAIVE, Code, DatetimeMS, MaxKey, MinKey, Regex, Timestamp
from mongomock import filtering

# MongoDB's canonical order of a date and of two types between it and MaxKey.
_DATE, _TIMESTAMP, _CODE = 45, 47, 60
_MS = dt.timedelta(milliseconds=1)


def _milliseconds(value: dt.datetime | DatetimeMS) -> int:
    return int(value) if isinstance(value, DatetimeMS) else (value - EPOCH_NAIVE) // _MS


def teach() -> None:
    types = filtering.TYPE_MAP
    types["timestamp"] = lambda value: isinstance(value, Timestamp)
    types["regex"] = lambda value: isinstance(value, Regex | re.Pattern)
    types["javascriptWithScope"] = lambda value: isinstance(value, Code) and value.scope is not None
    types["maxKey"] = lambda value: isinstance(value, MaxKey)
    types["minKey"] = lambda value: isinstance(value, MinKey)
    # The driver decodes none as such: a DBPointer is a DBRef, a symbol a str.
    types["dbPointer"] = types["symbol"] = lambda value: False
    one_type = filtering._type_op

    def any_type(value, names, in_array=False):
        names = names if isinstance(names, list) else [names]
        return any(one_type(value, name, in_array) for name in names)

    filtering._filterer_inst._operator_map["$type"] = any_type
    types["javascript"] = lambda value: isinstance(value, Code) and value.scope is None
    types["string"] = lambda value: isinstance(value, str) and not isinstance(value, Code)
    known = filtering._get_compare_type

    def compare_type(value):
        if isinstance(value, DatetimeMS):
            return _DATE
        if isinstance(value, Timestamp):
            return _TIMESTAMP
        if isinstance(value, Code):
            return _CODE
        return known(value)

    filtering._get_compare_type = compare_type
    types["date"] = lambda value: isinstance(value, dt.datetime | DatetimeMS)
    compare = filtering.bson_compare

    def bson_compare(op, a, b, can_compare_types=True):
        dates = dt.datetime | DatetimeMS
        if isinstance(a, dates) and isinstance(b, dates):
            return op(_milliseconds(a), _milliseconds(b))
        return compare(op, a, b, can_compare_types)

    filtering.bson_compare = bson_compare
