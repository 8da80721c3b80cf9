"""The IETF rate-limit fields beside `X-RateLimit-*` (docs/api.md#rate-limits): every policy
that counted a request in `RateLimit-Policy`, the one nearest to refusing in `RateLimit`,
both parsed as RFC 8941 lists by a structured-field parser, not matched by pattern."""

import http_sf
import mongomock
import pytest

from app import create_app
from tests.conftest import TEST_SETTINGS
from tests.support.factories import bearer
from tests.support.wire_server import free_port


def _client(db, **settings):
    settings = {**TEST_SETTINGS, "MONGODB_DB": db.name, "RATELIMIT_ENABLED": True, **settings}
    return create_app(settings, mongo_client=db.client).test_client()


def _fields(response) -> tuple[list, list]:
    """(policies, nearest) as http_sf parses them: [(name, parameters), ...] each."""
    policies = http_sf.parse(response.headers["RateLimit-Policy"].encode(), tltype="list")
    nearest = http_sf.parse(response.headers["RateLimit"].encode(), tltype="list")
    return policies, nearest


def _reset_within(nearest: list, seconds: int) -> list:
    """`nearest` with its `t` checked to lie in 1..seconds, and taken out to compare."""
    [(name, parameters)] = nearest
    assert 0 < parameters["t"] <= seconds, parameters
    return [(name, {key: value for key, value in parameters.items() if key != "t"})]


def test_a_counted_response_names_its_policy_and_what_is_left(db, world):
    token = world.token(user=world.user("Ada"))
    client = _client(db, RATELIMIT_DEFAULT="2 per minute")

    first, second, refused = (client.get("/v1/bots/", headers=bearer(token)) for _ in range(3))

    assert [first.status_code, second.status_code, refused.status_code] == [200, 200, 429]
    for response, remaining in ((first, 1), (second, 0), (refused, 0)):
        policies, nearest = _fields(response)
        assert policies == [("default", {"q": 2, "w": 60})]
        assert _reset_within(nearest, 60) == [("default", {"r": remaining})]
        assert response.headers["X-RateLimit-Remaining"] == str(remaining)


def test_an_export_counts_against_both_policies_and_names_the_nearer(db, world):
    token = world.token(user=world.user("Ada"))
    client = _client(db, RATELIMIT_DEFAULT="10 per minute", RATELIMIT_EXPORT="2 per hour")

    exports = [client.get("/v1/requests/export", headers=bearer(token)) for _ in range(3)]
    listed = client.get("/v1/requests/", headers=bearer(token))

    assert [response.status_code for response in exports] == [200, 200, 429]
    policies, nearest = _fields(exports[0])
    assert policies == [("default", {"q": 10, "w": 60}), ("export", {"q": 2, "w": 3600})]
    assert _reset_within(nearest, 3600) == [("export", {"r": 1})]
    policies, nearest = _fields(exports[2])
    assert ("export", {"q": 2, "w": 3600}) in policies
    assert _reset_within(nearest, 3600) == [("export", {"r": 0})]
    policies, nearest = _fields(listed)
    assert policies == [("default", {"q": 10, "w": 60})]
    assert _reset_within(nearest, 60) == [("default", {"r": 6})]


def test_a_setting_of_several_limits_names_each_by_its_window(db, world):
    token = world.token(user=world.user("Ada"))
    client = _client(db, RATELIMIT_DEFAULT="2 per second;100 per hour")

    first = client.get("/v1/bots/", headers=bearer(token))
    while (refused := client.get("/v1/bots/", headers=bearer(token))).status_code == 200:
        pass

    policies, nearest = _fields(first)
    assert policies == [
        ("default-1s", {"q": 2, "w": 1}),
        ("default-3600s", {"q": 100, "w": 3600}),
    ]
    assert _reset_within(nearest, 1) == [("default-1s", {"r": 1})]
    assert refused.status_code == 429
    assert _reset_within(_fields(refused)[1], 1) == [("default-1s", {"r": 0})]


def test_failed_authentications_have_a_policy_of_their_own(db):
    client = _client(db, RATELIMIT_DEFAULT="100 per minute", RATELIMIT_AUTH_FAILURES="2 per minute")
    guesses = [client.get("/v1/bots/", headers=bearer(f"bcs_guess{n}")) for n in range(3)]

    assert [response.status_code for response in guesses] == [401, 401, 429]
    for response, remaining in zip(guesses, (1, 0, 0), strict=True):
        policies, nearest = _fields(response)
        assert policies == [("default", {"q": 100, "w": 60}), ("auth-failures", {"q": 2, "w": 60})]
        assert _reset_within(nearest, 60) == [("auth-failures", {"r": remaining})]


def test_an_unreachable_store_still_gives_valid_fields(db, world):
    """Flask-Limiter's in-memory fallback counts while the store is down; the fields tell its
    counts rather than disappear or fail the request."""
    token = world.token(user=world.user("Ada"))
    client = _client(
        db,
        RATELIMIT_DEFAULT="3 per minute",
        RATELIMIT_STORAGE_URI=f"redis://127.0.0.1:{free_port()}/0",
    )

    responses = [client.get("/v1/bots/", headers=bearer(token)) for _ in range(2)]

    assert [response.status_code for response in responses] == [200, 200]
    assert _reset_within(_fields(responses[1])[1], 60) == [("default", {"r": 1})]


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_are_not_counted_and_carry_no_fields(db, path):
    response = _client(db, RATELIMIT_DEFAULT="2 per minute").get(path)

    assert response.status_code == 200
    assert "RateLimit" not in response.headers and "RateLimit-Policy" not in response.headers


def test_opening_feeds_has_a_policy_of_its_own(db, world):
    """Counted before the feed is looked at: the first opens (on mongomock, which runs no
    change stream, a 503), the second is refused."""
    token = world.token(user=world.user("Ada"))
    client = _client(db, RATELIMIT_DEFAULT="10 per minute", RATELIMIT_FEED="1 per hour")
    opened = 503 if isinstance(db.client, mongomock.MongoClient) else 200

    first = client.get("/v1/requests/feed", headers=bearer(token), buffered=False)
    first.close()  # a feed that opened streams until its client leaves
    second = client.get("/v1/requests/feed", headers=bearer(token))

    assert (first.status_code, second.status_code) == (opened, 429)
    policies, nearest = _fields(second)
    assert policies == [("default", {"q": 10, "w": 60}), ("feed", {"q": 1, "w": 3600})]
    assert _reset_within(nearest, 3600) == [("feed", {"r": 0})]


@pytest.mark.parametrize("path", ["/v1/bots/", "/v1/bots/counted/", "/v1/requests/"])
def test_a_304_spends_nothing_of_the_budget_and_still_says_what_is_left(db, world, path):
    """Revalidating is what a polling dashboard should do (docs/api.md#conditional-requests):
    a matching `If-None-Match` leaves `RateLimit` where the 200 left it, and the next 200
    is counted as usual."""
    ada = world.user("Ada")
    world.bot_request(bot=world.bot("counted"), created_by=ada)
    token = bearer(world.token(user=ada))
    client = _client(db, RATELIMIT_DEFAULT="5 per minute")

    first = client.get(path, headers=token)
    revalidated = [
        client.get(path, headers={**token, "If-None-Match": first.headers["ETag"]})
        for _ in range(6)
    ]
    then = client.get(path, headers=token)

    assert first.status_code == 200 and then.status_code == 200
    assert {response.status_code for response in revalidated} == {304}
    for response in revalidated:
        assert _reset_within(_fields(response)[1], 60) == [("default", {"r": 4})]
        assert response.headers["X-RateLimit-Remaining"] == "4"
    assert _reset_within(_fields(then)[1], 60) == [("default", {"r": 3})]


def test_a_store_that_fails_between_check_and_count_does_not_fail_the_answer(
    db, world, monkeypatch
):
    """A 200's count is taken after its answer (a 304 is not counted): the store failing
    then, as Redis going away mid-request, leaves the answer a 200."""
    from limits.errors import StorageError
    from limits.strategies import RateLimiter

    token = bearer(world.token(user=world.user("Ada")))
    client = _client(db, RATELIMIT_DEFAULT="5 per minute")

    def down(*args, **kwargs):
        raise StorageError(ConnectionError("the store went away"))

    for strategy in RateLimiter.__subclasses__():
        monkeypatch.setattr(strategy, "hit", down, raising=False)

    assert client.get("/v1/bots/", headers=token).status_code == 200
