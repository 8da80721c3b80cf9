"""The BSON types mongomock does not know, taught as MongoDB queries and orders them.

The keyset walk names the bracket of every type it places and ranges within it
(repositories/bson_order.py); mongomock raises NotImplementedError on `$type: "timestamp"` or
`"javascript"` even where no document holds one, and on any comparison with a timestamp, as a
forged cursor's position may be. To Python, JavaScript code is a str: MongoDB's `"string"`
excludes it, and orders it after every other type but MaxKey.
"""

from bson import Code, Timestamp
from mongomock import filtering

# MongoDB's canonical order of the two types, between a date's (45) and MaxKey.
_TIMESTAMP, _CODE = 47, 60


def teach() -> None:
    types = filtering.TYPE_MAP
    types["timestamp"] = lambda value: isinstance(value, Timestamp)
    types["javascript"] = lambda value: isinstance(value, Code) and value.scope is None
    types["string"] = lambda value: isinstance(value, str) and not isinstance(value, Code)
    known = filtering._get_compare_type

    def compare_type(value):
        if isinstance(value, Timestamp):
            return _TIMESTAMP
        if isinstance(value, Code):
            return _CODE
        return known(value)

    filtering._get_compare_type = compare_type
