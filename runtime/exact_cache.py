"""A bounded cache of answers read from the database, kept exact by a change stream
(`runtime.changes`): the token cache (contract 7.7) and the bot catalogue (7.8).

Each entry names the documents it was made of, a whole collection where any document of it
may change the answer (a page of a list, which a new document can enter); a change to one of
them removes the entry. The stream delivers a change after the write, so a miss that read the
database while a change went by could store what that change made stale: each miss notes the
cache's generation before it reads, and stores its answer only if no change reached the cache
meanwhile. Nothing is served or stored while the stream is not live.
"""

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from bson import ObjectId
from cachetools import LRUCache
from prometheus_client import Counter

LOOKUPS = Counter(
    "botcatalogue_cache_lookups",
    "Lookups in a worker's exact caches, by cache (tokens, catalogue) and result: hit, miss, "
    "or off (no live change stream, so the database answered).",
    ["cache", "result"],
)
ANY = object()  # stands for every document of a collection, in a dependency


def _exact(document_id):
    """An ObjectId, or None (a reference left out, which `$lookup` matches to `_id: null`), as
    itself; any other value as the whole collection. Contract section 1 promises ObjectIds,
    and MongoDB's equality across other types (1 and 1.0, numbers in arrays, embedded
    documents) is not Python's: a wider dependency is still exact."""
    return document_id if document_id is None or isinstance(document_id, ObjectId) else ANY


class _Entry(NamedTuple):
    value: Any
    dependencies: frozenset[tuple[str, Any]]
    expires: float


class _Entries(LRUCache):
    """Least recently used first out; an entry that leaves also leaves the index."""

    def __init__(self, size: int, on_leave: Callable[[Any, _Entry], None]):
        super().__init__(size)
        self._on_leave = on_leave

    def popitem(self):
        key, entry = super().popitem()
        self._on_leave(key, entry)
        return key, entry


class ExactCache:
    def __init__(
        self, name: str, collections: Iterable[str], size: int, seconds: float | None = None
    ):
        self.collections = frozenset(collections)
        self._lookups = {result: LOOKUPS.labels(name, result) for result in ("hit", "miss", "off")}
        self.enabled = size > 0 and seconds != 0
        self._seconds = seconds
        self._entries = _Entries(max(size, 1), self._unindex)
        self._keys = defaultdict(set)  # dependency -> keys of the entries made of it
        self._generation = 0
        self._lock = threading.Lock()
        self.live: Callable[[], bool] = lambda: False  # until a `ChangeFeed` follows it

    def get(self, key, load: Callable[[], Any], dependencies: Callable[[Any], Iterable] = None):
        """The cached answer for `key`, else `load()`'s, stored unless it is None.

        `dependencies(answer)` names the `(collection, _id)` pairs it was made of; by
        default, every document of the cache's collections.
        """
        if not self.enabled:
            return load()
        if not self.live():
            self._lookups["off"].inc()
            return load()
        with self._lock:
            entry = self._entries.get(key)
            generation = self._generation
        if entry is not None and entry.expires > time.monotonic():
            self._lookups["hit"].inc()
            return entry.value
        self._lookups["miss"].inc()
        value = load()
        if value is not None:
            made_of = ((name, ANY) for name in self.collections)
            if dependencies is not None:
                made_of = ((name, _exact(id_)) for name, id_ in dependencies(value))
            self._store(key, _Entry(value, frozenset(made_of), self._expiry()), generation)
        return value

    def _expiry(self) -> float:
        return float("inf") if self._seconds is None else time.monotonic() + self._seconds

    def _store(self, key, entry: _Entry, generation: int) -> None:
        with self._lock:
            if generation != self._generation or not self.live():
                return
            self._drop(key)
            self._entries[key] = entry
            for dependency in entry.dependencies:
                self._keys[dependency].add(key)

    def changed(self, collection: str, document_id) -> None:
        """The stream's news that a document of `collection` changed, was added or deleted."""
        with self._lock:
            self._generation += 1
            for dependency in {(collection, _exact(document_id)), (collection, ANY)}:
                for key in self._keys.pop(dependency, ()):
                    self._drop(key)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries.clear()
            self._keys.clear()

    def _drop(self, key) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._unindex(key, entry)

    def _unindex(self, key, entry: _Entry) -> None:
        for dependency in entry.dependencies:
            keys = self._keys.get(dependency)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._keys[dependency]
