"""A bounded cache of answers read from the database, kept exact by a change stream
(`runtime.changes`): the token cache, the bot catalogue and the summaries of bot requests
(docs/deployment.md#the-exact-caches).

Each entry names the documents it was made of, a whole collection where any document of it
may change the answer (a page of a list, which a new document can enter); a change to one of
them removes the entry. The stream delivers a change after the write, so a miss that read the
database while a change went by could store what that change made stale: each miss notes the
cache's generation before it reads, and stores its answer only if none of the changes that
reached the cache since names what the answer was made of. However long the read took, an
answer is then exact when stored, and the stream removes it when it stops being so: a slow
miss is kept as surely as a quick one, and the slowest answers are the ones most worth
keeping. A change of something else, or the stream running late, refuses nothing.

An entry is served only while the stream is live (every change written up to a moment ago
has arrived), and an answer is stored only while a stream follows the collections (every
later change will arrive).

Under load, the database answers the stream late too, and each request the cache sends to
the database makes it later: a cache that answered every lookup it could not prove fresh
from the database would stay off for as long as the load lasted. So a lookup that finds its
entry while the stream is behind waits, up to PATIENCE, for the stream's next proof, which
costs the database one small command rather than a read; and a miss for an answer that
another request is already reading waits, as long, for that read instead of repeating it.
A wait holds no database permit, so that it never keeps a permit from the reads the database
is answering; a request waits only while the worker's permits are not judged stalled
(runtime/admission.py), so that a stalled database refuses it at once instead.
"""

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol

from bson import ObjectId
from cachetools import LRUCache
from prometheus_client import Counter

LOOKUPS = Counter(
    "botcatalogue_cache_lookups",
    "Lookups in a worker's exact caches, by cache (tokens, catalogue, summaries) and result: "
    "hit, miss, or off (no live change stream, so the database answered).",
    ["cache", "result"],
)
ANY = object()  # stands for every document of a collection, in a dependency
# The latest changes a miss compares with what it read; a miss that outlasts this many
# changes is not stored. Even a thousand changes a second leave a miss seconds to read.
RECENT_CHANGES = 4096
# How long a lookup waits for the stream's proof or for another request's read of its answer:
# longer than either takes on a busy but healthy database, and shorter than admission's STALL,
# so that requests holding a permit while they wait are never taken for a stalled database.
PATIENCE = 0.25
# How often a wait asks again whether the database is stalled (`before_wait`).
_SLICE = 0.05


class Stream(Protocol):
    """What a cache asks of the change stream that keeps it exact."""

    @property
    def live(self) -> bool:
        """Every change written up to a moment ago has reached the cache."""

    @property
    def following(self) -> bool:
        """Every change written from now on will reach the cache."""

    def wait_live(self, seconds: float) -> bool:
        """Whether the stream is live, waiting up to `seconds` for it to become so."""


class _NoStream:
    live = following = False

    def wait_live(self, seconds: float) -> bool:
        return False


def _exact(document_id):
    """An ObjectId, or None (a reference left out, which `$lookup` matches to `_id: null`), as
    itself; any other value as the whole collection. docs/api.md#stored-data promises ObjectIds,
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
        self._generation = 0  # changes and clears that reached the cache
        self._recent = deque(maxlen=RECENT_CHANGES)  # (generation, collection, id) of changes
        self._cleared = 0  # the generation of the last clear
        self._reading: dict[Any, threading.Event] = {}  # key -> set when its read ends
        self._lock = threading.Lock()
        self.stream: Stream = _NoStream()  # until a `ChangeFeed` follows the cache
        # Raises while the database is judged stalled, before a wait for what it brings.
        self.before_wait: Callable[[], None] = lambda: None

    def get(self, key, load: Callable[[], Any], dependencies: Callable[[Any], Iterable] = None):
        """The cached answer for `key`, else `load()`'s, stored unless it is None.

        `dependencies(answer)` names the `(collection, _id)` pairs it was made of; by
        default, every document of the cache's collections.
        """
        if not self.enabled:
            return load()
        entry, generation, reading = self._find(key)
        if entry is None and reading is not None:
            self._wait(reading.wait)
            entry, generation, _ = self._find(key)
        live = self.stream.live
        if entry is not None and not live and self.stream.following:
            live = self._wait(self.stream.wait_live)
            entry, generation, _ = self._find(key)  # the changes the wait brought are in
        if live and entry is not None:
            self._lookups["hit"].inc()
            return entry.value
        self._lookups["miss" if live else "off"].inc()
        return self._read(key, load, dependencies, generation)

    def get_many(
        self, keys: Iterable, load: Callable[[list], dict], made_of: Callable[[Any], tuple]
    ) -> dict:
        """The answers of `keys`: each cached one, and the others from one `load(missing)`,
        which returns {key: answer}; a key it leaves out has the answer None, which is kept
        as any other (a reference to a deleted document is asked again on every page
        otherwise). `made_of(key)` is the `(collection, _id)` its answer is made of.

        As `get`, but for many small answers read at once, whose read costs less than a wait:
        while the stream is behind, they are all read, without waiting for its proof (a
        request may already have waited for its caller's); concurrent misses are not merged.
        """
        keys = list(dict.fromkeys(keys))
        if not self.enabled or not keys:
            loaded = load(keys) if keys else {}
            return {key: loaded.get(key) for key in keys}
        found, generation = self._find_many(keys)
        live = self.stream.live
        if not live:
            found = {}
        missing = [key for key in keys if key not in found]
        for result, count in (("hit", len(found)), ("miss" if live else "off", len(missing))):
            if count:
                self._lookups[result].inc(count)
        answers = {key: entry.value for key, entry in found.items()}
        if missing:
            loaded = load(missing)
            expires = self._expiry()
            for key in missing:
                answers[key] = loaded.get(key)
                collection, id_ = made_of(key)
                entry = _Entry(answers[key], frozenset({(collection, _exact(id_))}), expires)
                self._store(key, entry, generation)
        return answers

    def _find_many(self, keys: list) -> tuple[dict, int]:
        """The unexpired entries of `keys`, and the generation they are as of."""
        now = time.monotonic()
        with self._lock:
            found = {key: self._entries.get(key) for key in keys}
            found = {key: entry for key, entry in found.items() if entry and entry.expires > now}
            return found, self._generation

    def _wait(self, until: Callable[[float], bool]) -> bool:
        """`until(seconds)` for up to PATIENCE, in slices, asking before each whether the
        database is stalled (`before_wait`, which raises): a stalled database holds no
        thread here that a liveness probe needs."""
        end = time.monotonic() + PATIENCE
        while True:
            self.before_wait()
            left = end - time.monotonic()
            if left <= 0:
                return False
            if until(min(left, _SLICE)):
                return True

    def _find(self, key) -> tuple[_Entry | None, int, threading.Event | None]:
        """The unexpired entry of `key`, the generation it is as of, and the end of a read
        of it that is under way."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.expires <= time.monotonic():
                entry = None
            return entry, self._generation, self._reading.get(key)

    def _read(self, key, load, dependencies, generation: int):
        done = threading.Event()
        with self._lock:
            first = self._reading.setdefault(key, done) is done
        try:
            value = load()
            if value is not None:
                made_of = ((name, ANY) for name in self.collections)
                if dependencies is not None:
                    made_of = ((name, _exact(id_)) for name, id_ in dependencies(value))
                self._store(key, _Entry(value, frozenset(made_of), self._expiry()), generation)
            return value
        finally:
            if first:
                with self._lock:
                    del self._reading[key]
                done.set()

    def _expiry(self) -> float:
        return float("inf") if self._seconds is None else time.monotonic() + self._seconds

    def _store(self, key, entry: _Entry, generation: int) -> None:
        """Unless a change since `generation`, when the answer's read began, may have made
        it stale."""
        with self._lock:
            if not self.stream.following or self._changed_since(generation, entry.dependencies):
                return
            self._drop(key)
            self._entries[key] = entry
            for dependency in entry.dependencies:
                self._keys[dependency].add(key)

    def _changed_since(self, generation: int, dependencies: frozenset) -> bool:
        if generation == self._generation:
            return False
        oldest = self._recent[0][0] if self._recent else self._generation + 1
        if generation < self._cleared or oldest > generation + 1:
            return True  # emptied since, or changes since that are no longer listed
        for changed_at, collection, document_id in reversed(self._recent):
            if changed_at <= generation:
                return False
            if (collection, ANY) in dependencies or (collection, document_id) in dependencies:
                return True  # as `changed` would remove it
        return False

    def changed(self, collection: str, document_id, change: dict | None = None) -> None:
        """The stream's news that a document of `collection` changed, was added or deleted;
        of the event itself (`change`) a cache needs nothing more."""
        document_id = _exact(document_id)
        with self._lock:
            self._generation += 1
            self._recent.append((self._generation, collection, document_id))
            for dependency in {(collection, document_id), (collection, ANY)}:
                for key in self._keys.pop(dependency, ()):
                    self._drop(key)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._cleared = self._generation
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
