"""HTTP behaviour: routes, methods, slashes, ids in paths, the error body.

The rules are in docs/api.md (Errors, and HTTP behaviour).
"""

import pytest

from app import create_app
from repositories.bots import BotRepository
from tests.conftest import TEST_SETTINGS
from tests.support.cast import ENDPOINTS, build_cast
from tests.support.checks import assert_error
from tests.support.factories import bearer


@pytest.fixture
def cast(world):
    return build_cast(world)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/v1",
        "/v1/",
        "/v1/nope/",
        "/v2/bots/",
        "/bots/",
        "/v1/bots/public/extra/",
        "/v1/organizations/",
        "/v1/organizations/0123456789abcdef01234567/",
        "/v1/organizations/0123456789abcdef01234567/members/",
        "/v1/requests/0123456789abcdef01234567/bot/",
    ],
)
@pytest.mark.parametrize("authenticated", [True, False])
def test_unknown_route_is_a_json_404(client, cast, path, authenticated):
    headers = cast.headers("member") if authenticated else {}
    assert_error(client.get(path, headers=headers), 404)


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_other_methods_are_a_json_405_with_allow(client, cast, endpoint, method):
    response = client.open(
        cast.path(ENDPOINTS[endpoint]), method=method, headers=cast.headers("member"), json={}
    )
    assert_error(response, 405)
    allowed = {value.strip() for value in response.headers["Allow"].split(",")}
    assert allowed == {"GET", "HEAD", "OPTIONS"}


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_options_lists_the_methods_without_content(client, cast, endpoint):
    response = client.options(cast.path(ENDPOINTS[endpoint]), headers=cast.headers("member"))

    assert response.status_code == 204
    assert {value.strip() for value in response.headers["Allow"].split(",")} == {
        "GET",
        "HEAD",
        "OPTIONS",
    }
    assert "Content-Type" not in response.headers
    assert response.data == b""


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_head_answers_like_get_without_a_body(client, cast, endpoint):
    response = client.head(cast.path(ENDPOINTS[endpoint]), headers=cast.headers("member"))
    assert response.status_code == 200
    assert response.content_type == "application/json"
    assert response.data == b""


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_served_with_and_without_the_trailing_slash(client, cast, endpoint):
    path = cast.path(ENDPOINTS[endpoint])
    with_slash = client.get(path, headers=cast.headers("member"))
    without = client.get(path.rstrip("/"), headers=cast.headers("member"))
    assert (with_slash.status_code, without.status_code) == (200, 200)
    assert with_slash.content_type == "application/json"
    assert without.get_json() == with_slash.get_json()


@pytest.mark.parametrize(
    ("doubled", "single"),
    [
        ("/v1//bots/", "/v1/bots/"),
        ("/v1//bots", "/v1/bots/"),
        ("/v1//bots/?custom=true&sortBy=name:desc", "/v1/bots/?custom=true&sortBy=name:desc"),
        ("/v1//bots/public/", "/v1/bots/public/"),
        ("/v1//bots/public", "/v1/bots/public/"),
        ("/v1//requests/", "/v1/requests/"),
        ("/v1//organizations/{acme}//bots/", "/v1/organizations/{acme}/bots/"),
    ],
)
def test_doubled_slash_form_is_served(client, cast, doubled, single):
    doubled_response = client.get(cast.path(doubled), headers=cast.headers("member"))
    single_response = client.get(cast.path(single), headers=cast.headers("member"))
    assert doubled_response.status_code == 200
    assert doubled_response.get_json() == single_response.get_json()


BAD_IDS = {
    "short": "abc",
    "23 hex": "0123456789abcdef0123456",
    "25 hex": "0123456789abcdef012345678",
    "24 non-hex": "0123456789abcdef0123456g",
    "24 letters": "zzzzzzzzzzzzzzzzzzzzzzzz",
    "with dashes": "01234567-89ab-cdef-0123-4567",
    "unicode digits": "٠١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠١٢٣",
    "encoded": "%24ne",
}

BAD_ID_PATHS = {
    "4.2 organization": "/v1/organizations/{bad}/requests/",
    "4.3 request": "/v1/requests/{bad}/",
    "4.4 organization": "/v1/organizations/{bad}/requests/{member_acme}/",
    "4.4 request": "/v1/organizations/{acme}/requests/{bad}/",
    "4.4 both": "/v1/organizations/{bad}/requests/{bad}/",
    "4.6 organization": "/v1/organizations/{bad}/bots/",
    "4.8 organization": "/v1/organizations/{bad}/bots/acme-public/",
}


@pytest.mark.parametrize("caller", ["member", "nonmember", "other_token", "acme_token"])
def test_invalid_id_in_path_is_404_before_membership(client, cast, caller):
    """Not 403 for an outsider, not 500 for anyone: a malformed id names nothing."""
    outcomes = {}
    for where, template in BAD_ID_PATHS.items():
        for problem, bad in BAD_IDS.items():
            response = client.get(
                cast.path(template.replace("{bad}", bad)), headers=cast.headers(caller)
            )
            outcomes[where, problem] = response.status_code
            if response.status_code == 404:
                assert_error(response, 404)
    assert outcomes == dict.fromkeys(outcomes, 404)


@pytest.mark.parametrize(
    "template",
    [
        "/v1/requests/{id}/",
        "/v1/organizations/{acme}/requests/{id}/",
        "/v1/organizations/{acme}/bots/",
    ],
)
def test_ids_in_paths_are_case_insensitive_hex(client, cast, template):
    """The id is the same ObjectId in upper case; the response spells it in lower case."""
    upper = template.format(
        id=str(cast.requests["member_acme"]).upper(), acme=str(cast.organizations["acme"]).upper()
    )
    lower = template.format(id=cast.requests["member_acme"], acme=cast.organizations["acme"])
    response = client.get(upper, headers=cast.headers("member"))
    assert response.status_code == 200
    assert response.get_json() == client.get(lower, headers=cast.headers("member")).get_json()


UNUSUAL_SLUGS = (
    "%00",
    "$where",
    "$ne",
    "%7B%22%24ne%22%3A%201%7D",
    ".",
    "..",
    "a" * 5000,
    "%C3%A9",
    "public%20",
    "PUBLIC",
)


@pytest.mark.parametrize("organization", [False, True])
def test_unusual_slugs_are_a_404(client, cast, organization):
    """A slug is only ever compared for equality; no value of it reaches a 500."""
    prefix = f"/v1/organizations/{cast.organizations['acme']}" if organization else "/v1"
    outcomes = {}
    for slug in UNUSUAL_SLUGS:
        response = client.get(f"{prefix}/bots/{slug}/", headers=cast.headers("member"))
        outcomes[slug] = response.status_code
        if response.status_code == 404:
            assert_error(response, 404)
    assert outcomes == dict.fromkeys(UNUSUAL_SLUGS, 404)


@pytest.mark.parametrize(
    ("path", "caller", "status"),
    [
        ("/v1/bots/", "member", 200),
        ("/v1/bots/?limit=0", "member", 400),
        ("/v1/bots/", None, 401),
        ("/v1/requests/", "acme_token", 403),
        ("/v1/bots/nope/", "member", 404),
    ],
)
def test_every_response_is_json(client, cast, path, caller, status):
    headers = cast.headers(caller) if caller else {}
    response = client.get(path, headers=headers)
    assert response.status_code == status
    assert response.mimetype == "application/json"
    assert response.get_json() is not None


def test_unexpected_error_is_a_json_500_without_internals(db, world, monkeypatch, caplog):
    app = create_app(
        {**TEST_SETTINGS, "TESTING": False, "PROPAGATE_EXCEPTIONS": False, "MONGODB_DB": db.name},
        mongo_client=db.client,
    )
    token = world.token(user=world.user("Ada"))

    def explode(*args, **kwargs):
        raise RuntimeError("secret internals at /srv/app/repositories/bots.py")

    monkeypatch.setattr(BotRepository, "find_page", explode)
    response = app.test_client().get("/v1/bots/", headers=bearer(token))

    body = assert_error(response, 500)
    assert body["message"] == "The server encountered an internal error."
    assert b"secret" not in response.data and b"Traceback" not in response.data
    assert any(
        "secret internals" in str(record.exc_info[1])
        for record in caplog.records
        if record.exc_info
    )
