"""RFC 9457 problem details in every error body (docs/api.md#errors): each kind of error has
its documented type and title, `instance` names the request, and the media type follows
`Accept`."""

import re

import pytest

from tests.support import ROOT
from tests.support.cast import build_cast
from tests.support.checks import problem_checked
from tests.support.factories import bearer
from web.errors import PROBLEM_TYPES, problem_title, problem_type

DOCUMENTED = {
    match.group(1): (match.group(2), int(match.group(3)))
    for match in re.finditer(
        r"^\| `([a-z-]+)` \| ([^|]+?) \| (\d{3}) \|",
        (ROOT / "docs" / "api.md").read_text(),
        re.MULTILINE,
    )
}


@pytest.fixture
def cast(world):
    return build_cast(world)


def test_each_documented_type_is_the_one_its_status_is_given():
    """Fixed, not the Python version's phrases: 3.13 renamed 414's."""
    assert len(DOCUMENTED) == 14
    for name, (title, status) in DOCUMENTED.items():
        assert problem_title(status, unread=name == "malformed-request") == title
        assert problem_type(title) == PROBLEM_TYPES + name


@pytest.mark.parametrize(
    ("caller", "method", "path", "status"),
    [
        ("member", "GET", "/v1/bots/?limit=0", 400),
        (None, "GET", "/v1/bots/", 401),
        ("acme_token", "GET", "/v1/requests/", 403),
        ("member", "GET", "/v1/bots/no-such-bot/", 404),
        ("member", "DELETE", "/v1/bots/", 405),
    ],
)
def test_each_kind_of_error_has_its_documented_type(client, cast, caller, method, path, status):
    headers = {**(cast.headers(caller) if caller else {}), "X-Request-ID": "trace-me.42"}
    response = client.open(cast.path(path), method=method, headers=headers)

    body = response.get_json()
    assert response.status_code == status
    assert problem_checked(body, "trace-me.42")["code"] == status
    name = body["type"].removeprefix(PROBLEM_TYPES)
    assert DOCUMENTED[name] == (body["title"], status)


@pytest.mark.parametrize(
    ("accept", "media_type"),
    [
        (None, "application/json"),
        ("application/json", "application/json"),
        ("*/*", "application/json"),
        ("application/*", "application/json"),
        ("application/problem+json", "application/problem+json"),
        ("Application/Problem+JSON", "application/problem+json"),
        ("application/json;q=0.5, application/problem+json", "application/problem+json"),
        ("application/problem+json;q=0", "application/json"),
        ("application/problem+json; charset=utf-8", "application/problem+json"),
    ],
)
def test_the_media_type_follows_accept(client, cast, accept, media_type):
    headers = cast.headers("member") | ({"Accept": accept} if accept else {})
    response = client.get(cast.path("/v1/bots/no-such-bot/"), headers=headers)

    assert response.status_code == 404
    assert response.mimetype == media_type
    assert problem_checked(response.get_json())["code"] == 404


def test_a_400_keeps_its_details_beside_the_problem(client, cast):
    response = client.get(cast.path("/v1/bots/?limit=0&bogus=1"), headers=cast.headers("member"))

    body = problem_checked(response.get_json(), response.headers["X-Request-ID"])
    assert set(body) == {"code", "message", "details"}
    assert set(body["details"]) == {"limit", "bogus"}
    assert response.get_json()["title"] == "Invalid parameters"


def test_a_refused_token_says_so_in_problem_json(client):
    response = client.get(
        "/v1/bots/", headers={**bearer("bcs_" + "x" * 43), "Accept": "application/problem+json"}
    )

    assert response.status_code == 401
    assert response.mimetype == "application/problem+json"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.get_json()["type"] == PROBLEM_TYPES + "unauthorized"
