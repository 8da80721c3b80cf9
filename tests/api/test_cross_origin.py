"""A page on another origin reads the API only where `CORS_ORIGINS` names that origin
(docs/api.md#browsers-on-other-origins): the preflight is answered without a token and
counted by no rate limit; every answer, errors included, says which origin may read it and
which of its headers; none of that for an origin not named, or with the setting unset."""

import json

import pytest

from app import create_app
from runtime.config import settings_from_env
from tests.conftest import TEST_SETTINGS
from tests.support.browser import Page, chromium
from tests.support.factories import bearer
from tests.support.live_server import served

DASHBOARD = "https://dash.example.com"
ELSEWHERE = "https://elsewhere.example.com"


def _client(db, origins, **settings):
    settings = {**TEST_SETTINGS, "MONGODB_DB": db.name, "CORS_ORIGINS": origins, **settings}
    return create_app(settings, mongo_client=db.client).test_client()


def _preflight(client, origin, path="/v1/bots/"):
    return client.options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization, if-none-match, x-request-id",
        },
    )


def _listed(value: str) -> set[str]:
    return {item.strip().lower() for item in value.split(",")}


def test_a_named_origin_reads_the_answers_and_their_headers(db, world):
    token = world.token(user=world.user("Ada"))
    client = _client(db, (DASHBOARD,), RATELIMIT_ENABLED=True)

    response = client.get("/v1/bots/", headers={**bearer(token), "Origin": DASHBOARD})

    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == DASHBOARD
    assert "Access-Control-Allow-Credentials" not in response.headers
    assert "origin" in _listed(response.headers["Vary"])
    exposed = _listed(response.headers["Access-Control-Expose-Headers"])
    for header in ("etag", "link", "ratelimit", "ratelimit-policy", "x-ratelimit-remaining",
                   "retry-after", "x-request-id", "content-disposition"):  # fmt: skip
        assert header in exposed
    # Every header of the answer is exposed, one any page may read, or one for the browser.
    sent = {name.lower() for name in response.headers.keys()}
    readable = exposed | {"content-type", "content-length", "cache-control", "date", "vary"}
    assert not {name for name in sent - readable if not name.startswith("access-control-")}


def test_a_preflight_needs_no_token_and_spends_no_budget(db, world):
    token = world.token(user=world.user("Ada"))
    client = _client(db, (DASHBOARD,), RATELIMIT_ENABLED=True, RATELIMIT_DEFAULT="1 per minute")

    for _ in range(3):
        preflight = _preflight(client, DASHBOARD)
        assert preflight.status_code == 204
        assert preflight.headers["Access-Control-Allow-Origin"] == DASHBOARD
        assert _listed(preflight.headers["Access-Control-Allow-Methods"]) == {
            "get", "head", "options",
        }  # fmt: skip
        assert _listed(preflight.headers["Access-Control-Allow-Headers"]) == {
            "authorization", "if-none-match", "x-request-id",
        }  # fmt: skip
        assert int(preflight.headers["Access-Control-Max-Age"]) > 0
        assert "RateLimit" not in preflight.headers

    # The one request the budget allows is still there after three preflights.
    answer = client.get("/v1/bots/", headers={**bearer(token), "Origin": DASHBOARD})
    assert answer.status_code == 200
    assert answer.headers["X-RateLimit-Remaining"] == "0"


@pytest.mark.parametrize("case", ["no token", "unknown path", "refused"])
def test_an_error_is_readable_by_the_page_too(db, world, case):
    token = world.token(user=world.user("Ada"))
    client = _client(db, (DASHBOARD,), RATELIMIT_ENABLED=True, RATELIMIT_DEFAULT="1 per minute")
    headers = {"Origin": DASHBOARD, **({} if case == "no token" else bearer(token))}
    path = "/v1/nothing-here/" if case == "unknown path" else "/v1/bots/"
    if case == "refused":
        client.get(path, headers=headers)

    response = client.get(path, headers=headers)

    assert response.status_code == {"no token": 401, "unknown path": 404, "refused": 429}[case]
    assert response.headers["Access-Control-Allow-Origin"] == DASHBOARD
    assert response.json["status"] == response.status_code


@pytest.mark.parametrize("origins", [(), (DASHBOARD,)])
def test_an_origin_not_named_gets_no_access(db, world, origins):
    token = world.token(user=world.user("Ada"))
    client = _client(db, origins)

    answer = client.get("/v1/bots/", headers={**bearer(token), "Origin": ELSEWHERE})
    preflight = _preflight(client, ELSEWHERE)

    assert answer.status_code == 200
    for response in (answer, preflight):
        assert not [name for name in response.headers.keys() if name.startswith("Access-Control")]


@pytest.mark.parametrize(
    ("named", "asking"),
    [(DASHBOARD, "https://dash.example.com.evil.net"), (DASHBOARD, "https://dashxexample.com"),
     (DASHBOARD, "https://dash.example.co"), ("http://[::1]:8080", "http://1:8080")],
)  # fmt: skip
def test_an_origin_is_named_exactly_never_by_a_pattern(db, world, named, asking):
    token = world.token(user=world.user("Ada"))
    client = _client(db, (named, "http://localhost:3000"))

    for origin, allowed in ((named, True), (asking, False)):
        response = client.get("/v1/bots/", headers={**bearer(token), "Origin": origin})
        assert (response.headers.get("Access-Control-Allow-Origin") == origin) is allowed
        assert ("Access-Control-Allow-Origin" in response.headers) is allowed
        assert response.headers.get_all("Vary") == ["Origin"]
    # Nor to a caller that is no browser's page.
    without = client.get("/v1/bots/", headers=bearer(token))
    assert "Access-Control-Allow-Origin" not in without.headers


def test_star_lets_any_origin_read_without_credentials(db, world):
    token = world.token(user=world.user("Ada"))
    client = _client(db, ("*",))

    response = client.get("/v1/bots/", headers={**bearer(token), "Origin": ELSEWHERE})

    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in response.headers


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", ()),
        ("https://Dash.example.com/", (DASHBOARD,)),
        (f"{DASHBOARD}, http://localhost:3000,{DASHBOARD}", (DASHBOARD, "http://localhost:3000")),
        ("*", ("*",)),
    ],
)
def test_the_setting_reads_origins_as_a_browser_sends_them(value, expected):
    assert settings_from_env({"CORS_ORIGINS": value})["CORS_ORIGINS"] == expected


@pytest.mark.parametrize(
    "value",
    ["https://dash.example.com/app", "dash.example.com", "ftp://dash.example.com",
     "https://user:secret@dash.example.com", "https://dash.example.com:99999",
     "https://dash.example.com?x=1", f"*, {DASHBOARD}",
     # Never what a browser sends: a default port, a name not in punycode, IPv6 uncompressed.
     "https://dash.example.com:443", "http://dash.example.com:80", "https://dash.example.com:",
     "https://bücher.example", "http://[0:0::1]:8080",
     # What Flask-CORS would read as a pattern.
     "https://*.example.com", "https://dash.example.com$", "https://dash.example.com?",
     "https://(dash|evil).example.com"],
)  # fmt: skip
def test_what_no_browser_would_send_as_an_origin_stops_the_start(value):
    with pytest.raises(Exception, match="CORS_ORIGINS: takes \\* or origins"):
        settings_from_env({"CORS_ORIGINS": value})


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="no chromium binary on this machine")
def test_a_page_on_a_named_origin_reads_the_api_in_a_browser(db, world):
    """Chromium's own CORS checks, preflight included: the named origin's page reads an
    answer, its headers and an error's problem details; another origin's page reads nothing."""
    token = world.token(user=world.user("Ada"))
    with served(_page) as named, served(_page) as elsewhere:
        api = create_app(
            {
                **TEST_SETTINGS,
                "MONGODB_DB": db.name,
                "CORS_ORIGINS": (named,),
                "RATELIMIT_ENABLED": True,
            },
            mongo_client=db.client,
        )
        with served(api) as base, Page(named + "/") as page, Page(elsewhere + "/") as other:
            read = _READ % (json.dumps(base + "/v1/bots/"), json.dumps(f"Bearer {token}"))
            unauthorized = _READ % (json.dumps(base + "/v1/bots/"), json.dumps("Bearer nope"))

            answer = page.evaluate(read)
            refused = page.evaluate(unauthorized)
            blocked = other.evaluate(read)

    assert answer["status"] == 200 and "results" in answer["body"]
    # Headers a page may read only where they are exposed.
    assert answer["rateLimitPolicy"] == '"default";q=600;w=60'
    assert answer["etag"] and answer["requestId"]
    assert refused["status"] == 401 and refused["body"]["status"] == 401
    assert blocked == {"failed": "TypeError"}


# What a dashboard's script would do: fetch with the token in `Authorization` (which makes the
# browser ask a preflight first), then read the status, some headers and the body.
_READ = """
fetch(%s, {headers: {Authorization: %s}})
  .then(async (response) => ({
    status: response.status,
    etag: response.headers.get("ETag"),
    requestId: response.headers.get("X-Request-ID"),
    rateLimitPolicy: response.headers.get("RateLimit-Policy"),
    body: await response.json(),
  }))
  .catch((error) => ({failed: error.name}))
"""


def _page(environ, start_response):
    """A dashboard's page, on an origin of its own."""
    start_response("200 OK", [("Content-Type", "text/html")])
    return [b"<!doctype html><title>dashboard</title>"]
