"""The exact cache's own rules, with a stand-in for its stream: what it stores, what a change
removes, when it waits and when it answers from the database instead.
tests/api/test_exact_caches.py proves it with a real stream."""

import threading
import time

import pytest
from bson import ObjectId

from runtime import exact_cache
from runtime.exact_cache import ExactCache


class Stream:
    """Live and following as the test says; live once its waits have lasted `proof_after`
    seconds. A wait that ends without the proof spends its seconds; each is kept."""

    def __init__(self, live=True, following=True, proof_after: float | None = None):
        self.live, self.following, self.proof_after = live, following, proof_after
        self.waits = []

    def wait_live(self, seconds: float) -> bool:
        self.waits.append(seconds)
        if self.proof_after is not None and self.proof_after <= sum(self.waits) + 1e-9:
            self.live = True
        if not self.live:
            time.sleep(seconds)
        return self.live


def _cache(size=10, seconds=None, live=True, following=True) -> ExactCache:
    cache = ExactCache("test", ("tokens", "users"), size, seconds)
    cache.stream = Stream(live, following)
    return cache


class Loads:
    def __init__(self):
        self.keys = []

    def of(self, key, value="answer"):
        return lambda: self.keys.append(key) or value


def test_it_keeps_at_most_its_size_least_recently_used_first_out():
    cache, loads = _cache(size=2), Loads()
    for key in ("a", "b", "a", "c", "a", "b"):
        cache.get(key, loads.of(key))
    assert loads.keys == ["a", "b", "c", "b"]


def test_an_entry_leaves_when_a_document_it_was_made_of_changes():
    cache, loads = _cache(), Loads()
    token, user, other = ObjectId(), ObjectId(), ObjectId()
    made_of = lambda _: [("tokens", token), ("users", user)]  # noqa: E731
    cache.get("k", loads.of("k"), made_of)

    cache.changed("users", other)
    cache.changed("tokens", user)
    cache.get("k", loads.of("k"), made_of)
    assert loads.keys == ["k"]

    cache.changed("users", user)
    cache.get("k", loads.of("k"), made_of)
    assert loads.keys == ["k", "k"]


def test_by_default_an_entry_is_made_of_every_document_of_the_caches_collections():
    cache, loads = _cache(), Loads()
    cache.get("page", loads.of("page"))

    cache.changed("users", ObjectId())

    cache.get("page", loads.of("page"))
    assert loads.keys == ["page", "page"]


@pytest.mark.parametrize("odd_id", [1, "ada", {"a": 1}, [ObjectId()]])
def test_an_id_that_is_no_object_id_stands_for_its_whole_collection(odd_id):
    """MongoDB finds 1.0 for 1 and an element in an array; Python's equality does not."""
    cache, loads = _cache(), Loads()
    cache.get("k", loads.of("k"), lambda _: [("users", odd_id)])

    cache.changed("users", 1.0 if odd_id == 1 else ObjectId())

    cache.get("k", loads.of("k"), lambda _: [("users", odd_id)])
    assert loads.keys == ["k", "k"]


def test_a_reference_left_out_depends_on_the_document_whose_id_is_null_alone():
    """`$lookup` on a missing field finds `_id: null`: a change elsewhere keeps the entry."""
    cache, loads = _cache(), Loads()
    made_of = lambda _: [("users", None)]  # noqa: E731
    cache.get("k", loads.of("k"), made_of)

    cache.changed("users", ObjectId())
    cache.get("k", loads.of("k"), made_of)
    cache.changed("users", None)
    cache.get("k", loads.of("k"), made_of)

    assert loads.keys == ["k", "k"]


def test_an_answer_read_while_a_change_came_is_returned_but_not_kept():
    cache, loads = _cache(), Loads()

    def load_during_a_change():
        cache.changed("tokens", ObjectId())
        return "stale perhaps"

    assert cache.get("k", load_during_a_change) == "stale perhaps"
    cache.get("k", loads.of("k"))
    assert loads.keys == ["k"]


def test_an_answer_read_while_something_else_changed_is_kept():
    """However long the read, only a change to what the answer was made of refuses it."""
    cache, loads = _cache(), Loads()
    user, other = ObjectId(), ObjectId()
    made_of = lambda _: [("users", user)]  # noqa: E731

    def slow_read_while_another_user_changes():
        for _ in range(100):
            cache.changed("users", other)
        cache.changed("tokens", user)
        return loads.of("k")()

    cache.get("k", slow_read_while_another_user_changes, made_of)
    cache.get("k", loads.of("k"), made_of)
    assert loads.keys == ["k"]


def test_an_answer_read_while_more_changes_came_than_the_cache_lists_is_not_kept():
    cache, loads = _cache(), Loads()

    def read_through_many_changes():
        for _ in range(exact_cache.RECENT_CHANGES + 1):
            cache.changed("users", ObjectId())
        return loads.of("k")()

    cache.get("k", read_through_many_changes, lambda _: [("users", ObjectId())])
    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]


def test_an_answer_read_while_the_cache_was_emptied_is_not_kept():
    cache, loads = _cache(), Loads()
    cache.get("k", lambda: cache.clear() or loads.of("k")(), lambda _: [])
    cache.get("k", loads.of("k"), lambda _: [])
    assert loads.keys == ["k", "k"]


def test_nothing_is_served_while_the_stream_is_not_live_but_answers_are_kept():
    """The stream follows, but has not caught up: what is read now is exact, and is served
    once the stream catches up."""
    cache, loads = _cache(live=False), Loads()
    cache.stream.wait_live = lambda seconds: False
    cache.get("k", loads.of("k"))
    cache.get("k", loads.of("k"))
    cache.stream.live = True
    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]


def test_nothing_is_kept_while_no_stream_follows():
    cache, loads = _cache(live=False, following=False), Loads()
    cache.get("k", loads.of("k"))
    cache.stream.live = cache.stream.following = True
    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]
    assert cache.stream.waits == [], "no stream to wait for"


def test_an_entry_found_while_the_stream_is_behind_waits_for_its_next_proof():
    """A proof costs the database less than a read, and the read would slow the stream."""
    cache, loads = _cache(), Loads()
    cache.get("k", loads.of("k"))
    cache.stream = Stream(live=False, proof_after=0.05)

    assert cache.get("k", loads.of("k")) == "answer"
    assert loads.keys == ["k"]
    assert 0 < sum(cache.stream.waits) <= exact_cache.PATIENCE


def test_an_entry_changed_while_waiting_for_the_proof_is_read_again():
    cache, loads = _cache(), Loads()
    cache.get("k", loads.of("k"))
    cache.stream = Stream(live=False)
    cache.stream.wait_live = lambda seconds: cache.changed("users", ObjectId()) or True

    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]


def test_a_stream_that_stays_behind_past_the_patience_sends_the_lookup_to_the_database():
    cache, loads = _cache(), Loads()
    cache.get("k", loads.of("k"))
    cache.stream = Stream(live=False, proof_after=exact_cache.PATIENCE + 1)

    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]


def test_a_wait_asks_first_whether_the_database_is_stalled_and_a_hit_never_does():
    """A wait holds no database permit (runtime/admission.py); it is only not begun while
    the permits are stalled, since it would hold the thread a liveness probe needs."""
    cache, loads, asked = _cache(), Loads(), []
    cache.before_wait = lambda: asked.append("stalled?")
    cache.get("k", loads.of("k"))
    cache.get("k", loads.of("k"))
    assert asked == []

    cache.stream = Stream(live=False, proof_after=0.01)
    cache.get("k", loads.of("k"))
    assert asked == ["stalled?"]


def test_with_the_database_stalled_a_lookup_does_not_wait():
    class Stalled(Exception):
        pass

    def refuse():
        raise Stalled

    cache, loads = _cache(), Loads()
    cache.get("k", loads.of("k"))
    cache.stream, cache.before_wait = Stream(live=False, proof_after=0.01), refuse

    with pytest.raises(Stalled):
        cache.get("k", loads.of("k"))
    assert cache.stream.waits == []


def _read_elsewhere(cache: ExactCache, loads: Loads, value: str):
    """A miss of "k" in another thread, whose read has begun and ends once `release` is set."""
    reading, release = threading.Event(), threading.Event()

    def read():
        reading.set()
        release.wait(5)
        return loads.of(value)()

    thread = threading.Thread(target=cache.get, args=("k", read))
    thread.start()
    reading.wait(5)
    return release, thread


def test_concurrent_misses_of_one_answer_read_it_once():
    cache, loads = _cache(), Loads()
    release, other = _read_elsewhere(cache, loads, "k")
    threading.Timer(0.1, release.set).start()

    assert cache.get("k", loads.of("k")) == "answer"
    other.join()
    assert loads.keys == ["k"]


def test_a_miss_waits_for_another_reads_answer_only_as_long_as_its_patience():
    cache, loads = _cache(), Loads()
    release, other = _read_elsewhere(cache, loads, "stalled")

    started = time.monotonic()
    cache.get("k", loads.of("k"))
    waited = time.monotonic() - started
    release.set()
    other.join()
    assert loads.keys == ["k", "stalled"]
    assert exact_cache.PATIENCE <= waited < exact_cache.PATIENCE + 1


def test_none_is_not_kept_so_what_is_created_later_is_found():
    cache, loads = _cache(), Loads()
    cache.get("k", loads.of("k", None))
    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]


def test_an_entry_older_than_its_seconds_is_read_again():
    cache, loads = _cache(seconds=-1), Loads()
    cache.get("k", loads.of("k"))
    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]


@pytest.mark.parametrize("size, seconds", [(0, None), (0, 30), (10, 0)])
def test_a_zero_size_or_age_turns_it_off(size, seconds):
    cache, loads = _cache(size, seconds), Loads()
    cache.get("k", loads.of("k"))
    cache.get("k", loads.of("k"))
    assert loads.keys == ["k", "k"]
    assert not cache.enabled


def test_an_evicted_entry_leaves_the_index_too():
    cache, loads = _cache(size=1), Loads()
    for n in range(100):
        cache.get(n, loads.of(n), lambda _, n=n: [("users", ObjectId())])
    assert len(cache._keys) == 1


def _many(cache: ExactCache, keys: list, answers: dict, asked: list) -> dict:
    def load(missing):
        asked.append(list(missing))
        return {key: answers[key] for key in missing if key in answers}

    return cache.get_many(keys, load, lambda key: key)


def test_many_answers_are_read_at_once_for_what_the_cache_lacks():
    cache, asked = _cache(), []
    a, b, c = (("users", ObjectId()) for _ in range(3))
    answers = {a: "A", b: "B"}

    assert _many(cache, [a, b, a], answers, asked) == {a: "A", b: "B"}
    assert _many(cache, [a, b, c], answers, asked) == {a: "A", b: "B", c: None}
    assert _many(cache, [c, b], answers, asked) == {c: None, b: "B"}
    assert asked == [[a, b], [c]], "one read per call, of the keys not held; None is held"


def test_one_of_many_answers_leaves_when_its_document_changes():
    cache, asked = _cache(), []
    a, b = ("users", ObjectId()), ("users", ObjectId())
    _many(cache, [a, b], {a: "A", b: "B"}, asked)

    cache.changed("users", b[1])

    assert _many(cache, [a, b], {a: "A", b: "B2"}, asked) == {a: "A", b: "B2"}
    assert asked == [[a, b], [b]]


def test_many_answers_read_while_their_document_changed_are_not_kept():
    cache, asked = _cache(), []
    a = ("users", ObjectId())

    def load(missing):
        asked.append(missing)
        cache.changed("users", a[1])
        return {a: "stale"}

    cache.get_many([a], load, lambda key: key)
    cache.get_many([a], load, lambda key: key)
    assert len(asked) == 2

    cache.get_many([a], lambda missing: asked.append(missing) or {a: "fresh"}, lambda key: key)
    cache.get_many([a], load, lambda key: key)
    assert len(asked) == 3, "kept once no change came during its read"


def test_many_answers_without_a_live_stream_are_all_read_and_none_kept():
    cache, asked = _cache(live=False, following=False), []
    a = ("users", ObjectId())
    for _ in range(2):
        assert _many(cache, [a], {a: "A"}, asked) == {a: "A"}
    assert asked == [[a], [a]]


def test_many_answers_found_while_the_stream_is_behind_are_read_without_waiting():
    """Their read costs less than a wait, which the request may already have spent on its
    caller's lookup."""
    cache, asked = _cache(), []
    a, b = ("users", ObjectId()), ("users", ObjectId())
    _many(cache, [a, b], {a: "A", b: "B"}, asked)
    cache.stream = Stream(live=False, proof_after=0.05)

    assert _many(cache, [a, b], {a: "A2", b: "B2"}, asked) == {a: "A2", b: "B2"}
    assert cache.stream.waits == [] and asked == [[a, b], [a, b]]


def test_a_wait_ends_as_soon_as_the_database_is_judged_stalled():
    """Asked again between slices of the wait: a stall judged 0.1 s into it ends it then,
    not at PATIENCE's end."""

    class Stalled(Exception):
        pass

    started = time.monotonic()

    def stalled_after_a_tenth():
        if time.monotonic() - started >= 0.1:
            raise Stalled

    cache, loads = _cache(), Loads()
    cache.get("k", loads.of("k"))
    cache.stream, cache.before_wait = Stream(live=False), stalled_after_a_tenth
    cache._entries["k"]  # still held: the lookup waits for the stream's proof

    with pytest.raises(Stalled):
        cache.get("k", loads.of("k"))
    assert 0.1 <= time.monotonic() - started < exact_cache.PATIENCE
