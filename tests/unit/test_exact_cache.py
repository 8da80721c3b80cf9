"""The exact cache's own rules, without a stream: what it stores, what a change removes, and
when it answers from the database instead. tests/api/test_exact_caches.py proves it with one."""

import pytest
from bson import ObjectId

from runtime.exact_cache import ExactCache


def _cache(size=10, seconds=None, live=True) -> ExactCache:
    cache = ExactCache("test", ("tokens", "users"), size, seconds)
    cache.live = lambda: live
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


def test_nothing_is_served_or_kept_while_the_stream_is_not_live():
    live = [True]
    cache, loads = _cache(), Loads()
    cache.live = lambda: live[0]
    cache.get("k", loads.of("k"))
    live[0] = False

    cache.get("k", loads.of("k"))
    cache.get("other", loads.of("other"))
    live[0] = True
    cache.get("other", loads.of("other"))

    assert loads.keys == ["k", "k", "other", "other"]


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
