"""Per-token rate limits: 429 with Retry-After, rate limit headers and the error body."""

import hashlib

import mongomock
import pymongo
import pytest
from limits.errors import StorageError

from app import create_app
from runtime.bearer_tokens import hash_token
from runtime.config import ConfigError, settings_from_env
from tests.conftest import TEST_SETTINGS
from tests.support.checks import problem_checked
from tests.support.factories import bearer
from tests.support.wire_server import free_port
from web.rate_limits import rate_limit_key


@pytest.fixture
def limited_app(db):
    settings = {
        **TEST_SETTINGS,
        "MONGODB_DB": db.name,
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_DEFAULT": "2 per minute",
        "RATELIMIT_AUTH_FAILURES": "3 per minute",
    }
    return create_app(settings, mongo_client=db.client)


def test_past_the_limit_a_token_gets_429_with_the_error_body(limited_app, world):
    token = world.token(user=world.user("Ada"))
    client = limited_app.test_client()

    statuses = [client.get("/v1/bots/", headers=bearer(token)).status_code for _ in range(2)]
    refused = client.get("/v1/bots/", headers=bearer(token))

    assert statuses == [200, 200]
    assert refused.status_code == 429
    assert problem_checked(refused.get_json()) == {
        "code": 429,
        "message": "Too many requests: retry after the number of seconds in Retry-After.",
    }
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["X-RateLimit-Limit"] == "2"
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert int(refused.headers["X-RateLimit-Reset"]) > 0
    assert refused.headers["X-Request-ID"]


def test_a_refusal_is_logged_once_and_without_the_tokens_hash(limited_app, world, json_log):
    token = world.token(user=world.user("Ada"))
    client = limited_app.test_client()
    for _ in range(3):
        client.get("/v1/bots/", headers=bearer(token))

    lines = json_log()
    assert hash_token(token) not in repr(lines)
    assert [line["status"] for line in lines if line.get("status") == 429] == [429]


def test_successful_responses_tell_the_remaining_budget(limited_app, world):
    token = world.token(user=world.user("Ada"))
    client = limited_app.test_client()

    first = client.get("/v1/bots/", headers=bearer(token))

    assert first.headers["X-RateLimit-Limit"] == "2"
    assert first.headers["X-RateLimit-Remaining"] == "1"


def test_each_token_has_its_own_budget(limited_app, world):
    ada = world.token(user=world.user("Ada"))
    bob = world.token(user=world.user("Bob"))
    client = limited_app.test_client()
    for _ in range(2):
        client.get("/v1/bots/", headers=bearer(ada))

    assert client.get("/v1/bots/", headers=bearer(ada)).status_code == 429
    assert client.get("/v1/bots/", headers=bearer(bob)).status_code == 200


def test_a_tokens_budget_is_shared_by_every_endpoint(limited_app, world):
    """Flask-Limiter's default limits count each endpoint apart: 2 per minute would have been
    2 per minute per endpoint."""
    token = world.token(user=world.user("Ada"))
    client = limited_app.test_client()

    paths = ["/v1/bots/", "/v1/requests/", "/v1/bots/no-such-bot/"]
    statuses = [client.get(path, headers=bearer(token)).status_code for path in paths]

    assert statuses == [200, 200, 429]


def test_without_a_token_the_budget_is_per_address(limited_app):
    client = limited_app.test_client()
    here = {"REMOTE_ADDR": "192.0.2.1"}
    there = {"REMOTE_ADDR": "192.0.2.2"}
    for _ in range(2):
        client.get("/v1/openapi.json", environ_base=here)

    assert client.get("/v1/openapi.json", environ_base=here).status_code == 429
    assert client.get("/v1/openapi.json", environ_base=there).status_code == 200


def test_an_address_inventing_tokens_is_stopped_after_its_failed_attempts(limited_app, world):
    token = world.token(user=world.user("Ada"))
    client = limited_app.test_client()
    here = {"REMOTE_ADDR": "192.0.2.1"}
    there = {"REMOTE_ADDR": "192.0.2.2"}

    failures = [
        client.get("/v1/bots/", headers=bearer(f"bcs_guess{n}"), environ_base=here).status_code
        for n in range(3)
    ]
    locked = client.get("/v1/bots/", headers=bearer("bcs_guess-next"), environ_base=here)
    valid_here = client.get("/v1/bots/", headers=bearer(token), environ_base=here)

    assert failures == [401, 401, 401]
    assert locked.status_code == 429
    assert problem_checked(locked.get_json()) == {
        "code": 429,
        "message": "Too many requests: retry after the number of seconds in Retry-After.",
    }
    assert 0 < int(locked.headers["Retry-After"]) <= 60
    assert valid_here.status_code == 200
    assert client.get("/v1/bots/", headers=bearer(token), environ_base=there).status_code == 200


def test_a_valid_token_is_never_counted_against_its_address(limited_app, world):
    """Valid requests interleaved with failures: only the failures use up the budget."""
    tokens = [world.token(user=world.user(f"User {n}")) for n in range(3)]
    client = limited_app.test_client()
    here = {"REMOTE_ADDR": "192.0.2.1"}

    statuses = []
    for n, token in enumerate(tokens):
        statuses.append(client.get("/v1/bots/", headers=bearer(token), environ_base=here))
        statuses.append(client.get("/v1/bots/", headers=bearer(f"bcs_x{n}"), environ_base=here))
    statuses.append(client.get("/v1/bots/", headers=bearer("bcs_x9"), environ_base=here))

    assert [response.status_code for response in statuses] == [200, 401] * 3 + [429]


def test_a_storage_failure_while_counting_leaves_the_401(limited_app, monkeypatch):
    [limiter] = limited_app.extensions["limiter"]
    monkeypatch.setattr(
        type(limiter.limiter), "hit", _failing_for_auth_failures(type(limiter.limiter).hit)
    )

    response = limited_app.test_client().get("/v1/bots/", headers=bearer("bcs_guess"))

    assert response.status_code == 401


def _failing_for_auth_failures(hit):
    def hit_or_fail(self, item, *identifiers, **options):
        if identifiers[0] == "auth-failures":
            raise StorageError(ConnectionError("the storage went away"))
        return hit(self, item, *identifiers, **options)

    return hit_or_fail


def test_successful_calls_do_not_count_as_failed_attempts(limited_app, world):
    tokens = [world.token(user=world.user(f"User {n}")) for n in range(5)]
    client = limited_app.test_client()

    statuses = [client.get("/v1/bots/", headers=bearer(token)).status_code for token in tokens]

    assert statuses == [200] * 5


def test_probes_are_never_limited(limited_app):
    client = limited_app.test_client()

    statuses = {client.get(path).status_code for path in ["/healthz", "/readyz"] * 5}

    assert statuses == {200}


def test_the_bucket_key_is_the_token_hash_never_the_token(limited_app, world):
    token = world.token(user=world.user("Ada"))
    limited_app.test_client().get("/v1/bots/", headers=bearer(token))

    with limited_app.test_request_context(headers=bearer(token)):
        key = rate_limit_key()
    [limiter] = limited_app.extensions["limiter"]
    stored_keys = " ".join(limiter.storage.storage)

    assert key == "token:" + hashlib.sha256(token.encode()).hexdigest()
    assert hashlib.sha256(token.encode()).hexdigest() in stored_keys
    assert token not in stored_keys


def test_rate_limiting_is_on_by_default(monkeypatch):
    for name in ("RATELIMIT_ENABLED", "RATELIMIT_DEFAULT", "RATELIMIT_STORAGE_URI"):
        monkeypatch.delenv(name, raising=False)
    app = create_app({"TESTING": True}, mongo_client=mongomock.MongoClient())

    response = app.test_client().get("/v1/openapi.json")

    assert response.headers["X-RateLimit-Limit"] == "600"


def test_the_test_configuration_keeps_it_off(client):
    assert "X-RateLimit-Limit" not in client.get("/v1/openapi.json").headers


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, (True, "600 per minute", "memory://")),
        (
            {
                "RATELIMIT_ENABLED": "false",
                "RATELIMIT_DEFAULT": "100 per second",
                "RATELIMIT_STORAGE_URI": "redis://cache:6379/0",
            },
            (False, "100 per second", "redis://cache:6379/0"),
        ),
        ({"RATELIMIT_ENABLED": "TRUE"}, (True, "600 per minute", "memory://")),
        ({"RATELIMIT_ENABLED": "0"}, (False, "600 per minute", "memory://")),
    ],
)
def test_settings_come_from_the_environment(environ, expected):
    settings = settings_from_env(environ)

    assert (
        settings["RATELIMIT_ENABLED"],
        settings["RATELIMIT_DEFAULT"],
        settings["RATELIMIT_STORAGE_URI"],
    ) == expected


def test_failed_attempts_allowed_per_address_come_from_the_environment():
    assert settings_from_env({})["RATELIMIT_AUTH_FAILURES"] == "60 per minute"
    assert (
        settings_from_env({"RATELIMIT_AUTH_FAILURES": "10 per hour"})["RATELIMIT_AUTH_FAILURES"]
        == "10 per hour"
    )


def test_a_bad_switch_is_refused_at_startup():
    with pytest.raises(ConfigError, match="RATELIMIT_ENABLED"):
        settings_from_env({"RATELIMIT_ENABLED": "maybe"})


def test_a_database_outage_keeps_its_own_retry_after():
    """Flask-Limiter sets Retry-After on every limited response to its window's reset; on a
    503 that would tell clients to wait out a minute's window for a database that is worth
    retrying in a second."""
    client = pymongo.MongoClient(
        f"mongodb://127.0.0.1:{free_port()}/?directConnection=true",
        connect=False,
        serverSelectionTimeoutMS=200,
    )
    settings = {
        **TEST_SETTINGS,
        "MONGODB_TIMEOUT_MS": 300,
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_DEFAULT": "5 per hour",
    }
    app = create_app(settings, mongo_client=client)
    response = app.test_client().get("/v1/bots/", headers=bearer("bcs_" + "a" * 43))
    client.close()
    assert response.status_code == 503
    assert response.headers["X-RateLimit-Limit"] == "5"
    assert response.headers["Retry-After"] == "1"


def test_retry_after_is_only_on_refusals(limited_app, world):
    """Flask-Limiter sends Retry-After with every limited response: on a 200 it would tell a
    client to wait before a request that succeeded. The limit's own headers stay on all."""
    token = world.token(user=world.user("Ada"))
    client = limited_app.test_client()
    missing = client.get("/v1/bots/no-such-bot/", headers=bearer(token))
    ok = client.get("/v1/bots/", headers=bearer(token))
    while (refused := client.get("/v1/bots/", headers=bearer(token))).status_code == 200:
        pass

    assert [ok.status_code, missing.status_code, refused.status_code] == [200, 404, 429]
    assert "Retry-After" not in ok.headers and "Retry-After" not in missing.headers
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    for response in (ok, missing, refused):
        assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} <= set(
            response.headers.keys()
        )


def test_a_200_sends_the_headers_it_documents_and_no_other(limited_app, world):
    """The suite's client refuses an undeclared header (tests/support/openapi_check.py);
    this names the set of a list's 200 once, so that a new one is a decision."""
    token = world.token(user=world.user("Ada"))
    response = limited_app.test_client().get("/v1/bots/", headers=bearer(token))
    assert set(response.headers.keys()) == {
        "Content-Type",
        "Content-Length",
        "Cache-Control",
        "ETag",
        "Link",
        "X-Request-ID",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "RateLimit-Policy",
        "RateLimit",
    }
