"""The token cache: off by default; when turned on, bounded, keyed by the token's hash, expiry
checked on every use. Every worker is proven in `test_revocation.py`, through gunicorn."""

import datetime as dt
import time

import pytest

from access.authentication import TokenCache, hash_token
from app import create_app
from tests.support.factories import bearer


def _app(db, **config):
    return create_app({"TESTING": True, "MONGODB_DB": db.name, **config}, mongo_client=db.client)


def test_by_default_nothing_is_kept_so_a_revocation_applies_to_the_next_request(db, world):
    token = world.token(user=world.user("Ada"))
    client = _app(db).test_client()
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 200

    db.tokens.update_one(
        {"tokenHash": hash_token(token)}, {"$set": {"revokedAt": dt.datetime.now()}}
    )
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 401


@pytest.mark.parametrize(
    "seconds, right_after, later", [(0.5, 200, 401), (0, 401, 401)], ids=["cached", "uncached"]
)
def test_a_revocation_applies_once_the_cache_entry_ages_out(db, world, seconds, right_after, later):
    token = world.token(user=world.user("Ada"))
    client = _app(db, TOKEN_CACHE_SECONDS=seconds).test_client()
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 200

    db.tokens.update_one(
        {"tokenHash": hash_token(token)}, {"$set": {"revokedAt": dt.datetime.now()}}
    )
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == right_after
    time.sleep(seconds + 0.1)
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == later


def test_a_cached_token_is_refused_once_it_expires(db, world):
    expires_at = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(seconds=0.5)
    token = world.token(user=world.user("Ada"), expires_at=expires_at)
    client = _app(db, TOKEN_CACHE_SECONDS=60).test_client()
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 200

    time.sleep(0.6)
    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 401


def test_an_unknown_token_is_not_kept_so_a_new_one_works_at_once(db, world):
    client = _app(db, TOKEN_CACHE_SECONDS=60).test_client()
    ada = world.user("Ada")
    raw = "bcs_issued-after-a-first-try"
    assert client.get("/v1/bots/", headers=bearer(raw)).status_code == 401

    db.tokens.insert_one(
        {"tokenHash": hash_token(raw), "kind": "user", "user": ada, "revokedAt": None}
    )
    assert client.get("/v1/bots/", headers=bearer(raw)).status_code == 200


def test_the_cache_holds_at_most_its_size_and_is_keyed_by_hash():
    cache = TokenCache(size=2, seconds=60)
    assert cache.delay == 60
    loads = []

    def load(token_hash):
        loads.append(token_hash)
        return {"kind": "user"}

    for token_hash in ("a", "b", "a", "c", "a", "b"):
        cache.find(token_hash, load)
    assert loads == ["a", "b", "c", "b"]


@pytest.mark.parametrize("size, seconds", [(0, 30), (10, 0)])
def test_a_zero_size_or_age_turns_the_cache_off(size, seconds):
    cache = TokenCache(size=size, seconds=seconds)
    loads = []
    for _ in range(2):
        cache.find("a", lambda token_hash: loads.append(token_hash) or {"kind": "user"})
    assert loads == ["a", "a"]
    assert cache.delay == 0
