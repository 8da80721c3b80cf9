"""The summaries a bot request nests (its bot, who created it, its organization), put in after
the requests are read rather than joined to each of them (docs/deployment.md#the-exact-caches).

A page or an export batch is read without a `$lookup`; then, for each reference it shows,
the summaries come from the worker's summary cache, which the change stream keeps exact
(runtime/exact_cache.py), and what the cache does not hold from one `$in` query on the
referenced collection. Without a live stream every summary is read that way, every time. So
a request costs its own read plus at most one small query per referenced collection,
whatever its size, and nothing of `bots`, `users` or `organizations` is joined on the shard
that holds them (docs/decisions/2026-11-24-sharding-on-paper.md).

A reference is matched by MongoDB's equality, as `$lookup` matches it: a number equals the
same number of any type, a document the same fields in the same order with equal values.
Two choices differ from a `$lookup`, which gave one row per match: another writer's array of
ids shows the summary of its first element that names a document, and a null or missing
reference shows null even where a document has `_id: null` (docs/api.md#responses).
"""

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from bson import ObjectId, Regex
from pymongo.collection import Collection
from pymongo.database import Database

from repositories.bson_equality import equality_key
from repositories.reads import submit
from runtime.exact_cache import ExactCache


class Reference(NamedTuple):
    collection: str
    fields: tuple[str, ...]  # those of its summary (schemas/summaries.py)


# A bot request's references, and what their summaries hold.
REFERENCES = {
    "bot": Reference("bots", ("slug", "name", "creditCost")),
    "createdBy": Reference("users", ("name",)),
    "organization": Reference("organizations", ("name",)),
}


_NEVER_AN_ID = (type(None), list, Regex, re.Pattern)


def _candidates(value) -> list:
    """The ids a reference names, in order: itself, or the elements of an array of them.
    Never null (above), an array or a regular expression: no `_id` is either, and `$in`
    would match a regular expression as a pattern."""
    if type(value) is ObjectId:
        return [value]
    values = value if isinstance(value, list) else [value]
    return [item for item in values if not isinstance(item, _NEVER_AN_ID)]


class Summaries:
    def __init__(self, cache: ExactCache, database: Callable[[], Database]):
        self._cache = cache
        self._database = database

    def fill(self, requests: list[dict], shown: Iterable[str]) -> list[dict]:
        """`requests` with the summary of each reference in `shown` in its place, or without
        it where it names no document."""
        shown = {field: REFERENCES[field] for field in REFERENCES if field in shown}
        ids = {}  # (collection, equality key) -> the id as stored
        named = []  # (request, field, the keys its reference names, in order)
        for field, reference in shown.items():
            for request in requests:
                keys = []
                for id_ in _candidates(request.get(field)):
                    key = (reference.collection, equality_key(id_))
                    ids.setdefault(key, id_)
                    keys.append(key)
                named.append((request, field, keys))
        summaries = self._cache.get_many(
            ids, lambda missing: self._read(missing, ids), lambda key: (key[0], ids[key])
        )
        # Every request's summaries first, then put in: a request listed twice is read once.
        # The summaries are the cache's own: nothing may change them.
        put = [
            (request, field, next((s for s in map(summaries.get, keys) if s is not None), None))
            for request, field, keys in named
        ]
        for request, field, summary in put:
            if summary is None:
                request.pop(field, None)
            else:
                request[field] = summary
        return requests

    def _read(self, missing: list, ids: dict) -> dict:
        """The summaries of the `missing` keys that exist, by key: one query per collection,
        the collections side by side."""
        database = self._database()
        by_collection = {}
        for collection, key in missing:
            by_collection.setdefault(collection, []).append(ids[(collection, key)])
        fields = {reference.collection: reference.fields for reference in REFERENCES.values()}
        reads = [
            submit(_find, database[collection], fields[collection], collection_ids)
            for collection, collection_ids in by_collection.items()
        ]
        return {key: summary for read in reads for key, summary in read.result().items()}


def _find(collection: Collection, fields: tuple[str, ...], ids: list) -> dict:
    cursor = collection.find({"_id": {"$in": ids}}, dict.fromkeys(fields, 1), limit=len(ids))
    documents = cursor.batch_size(len(ids))
    return {(collection.name, equality_key(document["_id"])): document for document in documents}
