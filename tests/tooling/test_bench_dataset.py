"""The benchmark's data set is reproducible and holds the callers the benchmark relies on."""

import mongomock
import pytest

from bench.dataset import Scale, generate, object_id, organization_token, user_token
from bench.run import authentication, caller, check_answers, endpoints
from runtime.bearer_tokens import hash_token

SCALE = Scale(organizations=5, users=30, bots=40, requests=400)
COLLECTIONS = ("organizations", "users", "tokens", "services", "tags", "bots", "botrequests")


def _generated(seed=7):
    db = mongomock.MongoClient().bench
    generate(db, SCALE, seed)
    return db


def _contents(db) -> dict:
    return {name: list(db[name].find(sort=[("_id", 1)])) for name in COLLECTIONS}


def test_the_same_seed_gives_the_same_documents():
    first, second = _generated(), _generated()
    assert _contents(first) == _contents(second)
    assert _contents(first) != _contents(_generated(seed=8))
    assert [first[name].count_documents({}) for name in ("bots", "botrequests")] == [40, 400]


def test_the_benchmark_callers_exist():
    db = _generated()
    typical, heavy = object_id(1, 1), object_id(1, 0)
    user = db.users.find_one({"_id": object_id(2, 0)})
    assert user["organizations"] == [typical, object_id(1, 2)]
    assert db.tokens.find_one({"tokenHash": hash_token(user_token(0))})["user"] == user["_id"]
    assert (
        db.tokens.find_one({"tokenHash": hash_token(organization_token(0))})["organization"]
        == heavy
    )
    assert db.botrequests.count_documents({"organization": heavy}) >= 0.2 * SCALE.requests


def test_the_authentication_row_times_the_lookup_of_real_callers():
    db = _generated()

    measured = authentication(db, seconds=0.05, connections=2)

    assert set(measured) == {"user token", "organization token"}
    assert all(row["requests"] > 0 and row["p50_ms"] > 0 for row in measured.values())
    assert caller(db, user_token(0)).kind == "user"
    assert caller(db, organization_token(1)).kind == "organization"


def test_each_endpoints_floor_runs_the_repository_work_it_stands_for():
    """The floors call the repositories directly: a changed signature must fail here."""
    for endpoint in endpoints(_generated()):
        endpoint.floor()


def test_the_benchmark_finds_what_it_fetches_in_a_data_set_of_any_size():
    """`make bench-scale` starts from small sizes, with as many users as at full scale."""
    db = mongomock.MongoClient().bench
    generate(db, Scale(organizations=5, users=30, bots=40, requests=1), seed=7)
    [one_request] = [endpoint for endpoint in endpoints(db) if endpoint.name == "one request"]
    assert one_request.path.endswith(f"/{object_id(6, 0)}/")


def test_a_row_with_failed_requests_stops_the_benchmark():
    check_answers("fine", {"errors": 0, "requests": 9})
    with pytest.raises(SystemExit, match="deep page: 3 of 9 requests failed"):
        check_answers("deep page", {"errors": 3, "requests": 9})
