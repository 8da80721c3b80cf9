"""The benchmark's data set is reproducible and holds the callers the benchmark relies on."""

import mongomock
import pytest

from app import create_app
from bench.dataset import Scale, generate, object_id, organization_token, user_token
from bench.run import authentication, caller, check_answers, endpoints, full_speed
from runtime.bearer_tokens import hash_token
from tests.conftest import TEST_SETTINGS
from tests.support.factories import bearer

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


def test_each_endpoints_floor_reads_what_its_endpoint_answers():
    """The floors call the repositories directly: each must do the work its endpoint does,
    so a changed signature or a floor that drifted from its endpoint fails here."""
    db = _generated()
    client = create_app({**TEST_SETTINGS, "MONGODB_DB": db.name}, mongo_client=db.client)
    client = client.test_client()
    for endpoint in endpoints(db):
        body = client.get(endpoint.path, headers=bearer(endpoint.token)).get_json()
        assert _answered(endpoint.floor()) == _answered(body), endpoint.name


def _answered(answer) -> list:
    """The ids an answer holds, in order, from a repository's result or an HTTP body; for
    usage, the number of requests it counts."""
    if isinstance(answer, list):  # the usage pipeline's rows
        return [sum(row["requests"] for row in answer)]
    if isinstance(answer, dict) and "totals" in answer:
        return [answer["totals"]["requests"]]
    if isinstance(answer, dict):
        items = answer["results"] if "results" in answer else [answer]
        return [str(item.get("id") or item.get("_id")) for item in items]
    document = getattr(answer, "document", None)
    if document is not None:
        return [str(document["_id"])]
    return [str(item["_id"]) for item in answer.results]


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


def test_a_tracing_side_is_its_median_round_at_full_speed():
    """Rounds run in a stall, at about half the rate, are left out; of the others neither
    the fastest (an outlier) nor the slowest counts, but the middle one."""
    assert full_speed([441, 431, 858, 426, 841]) == 849.5
    assert full_speed([906, 543, 769, 779, 758]) == 774
