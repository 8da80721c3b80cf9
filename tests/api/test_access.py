"""Who sees what (docs/api.md, Who sees what): every endpoint against every kind of caller.

The tables name exactly which bots and requests come back, in the default order, so a rule
that lets one document too many or too few through fails here.
"""

import datetime as dt

import pytest

from runtime.bearer_tokens import hash_token
from tests.support.cast import BOTS, CALLERS, ENDPOINTS, REQUESTS, bad_credentials, build_cast
from tests.support.checks import assert_error
from tests.support.factories import bearer

PUBLIC_VIEW = {
    "id",
    "slug",
    "name",
    "description",
    "creditCost",
    "modelKey",
    "applyToApi",
    "inputs",
}
ADMIN_VIEW = PUBLIC_VIEW | {
    "organizationId",
    "isPublic",
    "service",
    "tags",
    "createdAt",
    "updatedAt",
}

FORBIDDEN = 403


@pytest.fixture
def cast(world):
    return build_cast(world)


def _get(client, cast, caller: str, path: str):
    return client.get(path, headers=cast.headers(caller))


def _slugs(response) -> list[str]:
    assert response.status_code == 200, response.get_json()
    return [bot["slug"] for bot in response.get_json()["results"]]


def _request_names(cast, response) -> list[str]:
    assert response.status_code == 200, response.get_json()
    return cast.request_names(item["id"] for item in response.get_json()["results"])


def _answers(client, cast, caller: str, paths: dict[str, str]) -> dict[str, tuple[int, dict]]:
    """Each path's status and JSON body; every error is checked for the error shape."""
    answers = {}
    for name, path in paths.items():
        response = _get(client, cast, caller, path)
        if response.status_code != 200:
            assert_error(response, response.status_code)
        answers[name] = (response.status_code, response.get_json())
    return answers


def _statuses(answers: dict[str, tuple[int, dict]]) -> dict[str, int]:
    return {name: status for name, (status, _) in answers.items()}


def _assert_readable_requests(cast, answers, readable) -> None:
    """`answers` for every request: 200 with that request if readable, else 404 (or all 403)."""
    if readable == FORBIDDEN:
        assert _statuses(answers) == dict.fromkeys(REQUESTS, 403)
        return
    assert _statuses(answers) == {name: 200 if name in readable else 404 for name in REQUESTS}
    assert {body["id"] for status, body in answers.values() if status == 200} == {
        str(cast.requests[name]) for name in readable
    }


# 4.1 ---------------------------------------------------------------------------------------

USER_REQUESTS = {
    "member": ["creator_acme", "member_acme", "member_personal"],
    "creator": ["creator_personal", "creator_acme"],
    "nonmember": ["stranger_other"],
    "admin": ["admin_personal"],
    "acme_token": FORBIDDEN,
    "other_token": FORBIDDEN,
}


@pytest.mark.parametrize("caller", CALLERS)
def test_user_request_list(client, cast, caller):
    response = _get(client, cast, caller, "/v1/requests/")
    expected = USER_REQUESTS[caller]
    if expected == FORBIDDEN:
        assert_error(response, 403)
    else:
        assert _request_names(cast, response) == expected
        assert response.get_json()["totalResults"] == len(expected)


# 4.3 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_user_request_by_id(client, cast, caller):
    """A request is readable exactly when the caller's list holds it; otherwise 404."""
    paths = {name: f"/v1/requests/{cast.requests[name]}/" for name in REQUESTS}
    _assert_readable_requests(cast, _answers(client, cast, caller, paths), USER_REQUESTS[caller])


@pytest.mark.parametrize(("caller", "status"), [("member", 404), ("acme_token", 403)])
def test_user_request_that_does_not_exist(client, cast, caller, status):
    assert_error(_get(client, cast, caller, "/v1/requests/0123456789abcdef01234567/"), status)


# 4.2 and 4.6 ------------------------------------------------------------------------------

ORGANIZATION_INSIDERS = {"acme": {"member", "acme_token"}, "other": {"nonmember", "other_token"}}
ORGANIZATION_LISTS = {
    ("requests", "acme"): ["creator_acme", "member_acme"],
    ("requests", "other"): ["stranger_other"],
    ("bots", "acme"): ["acme-private", "acme-public"],
    ("bots", "other"): ["other-private"],
}


@pytest.mark.parametrize("organization", ["acme", "other"])
@pytest.mark.parametrize("resource", ["requests", "bots"])
@pytest.mark.parametrize("caller", CALLERS)
def test_organization_list(client, cast, caller, resource, organization):
    """Members and the organization's own token list all it holds; anyone else gets 403."""
    organization_id = cast.organizations[organization]
    response = _get(client, cast, caller, f"/v1/organizations/{organization_id}/{resource}/")
    if caller not in ORGANIZATION_INSIDERS[organization]:
        assert_error(response, 403)
    elif resource == "requests":
        assert _request_names(cast, response) == ORGANIZATION_LISTS[resource, organization]
    else:
        assert _slugs(response) == ORGANIZATION_LISTS[resource, organization]
        owners = {item["organizationId"] for item in response.get_json()["results"]}
        assert owners == {str(organization_id)}


@pytest.mark.parametrize("endpoint", ["requests", "bots"])
@pytest.mark.parametrize("caller", ["member", "admin", "acme_token"])
def test_organization_nobody_belongs_to_is_forbidden(client, cast, caller, endpoint):
    response = _get(client, cast, caller, f"/v1/organizations/0123456789abcdef01234567/{endpoint}/")
    assert_error(response, 403)


# 4.4 ---------------------------------------------------------------------------------------

ORGANIZATION_REQUEST_READABLE = {
    "member": {"member_acme", "creator_acme"},
    "acme_token": {"member_acme", "creator_acme"},
    "creator": {"creator_acme"},
    "nonmember": set(),
    "admin": set(),
    "other_token": FORBIDDEN,
}


@pytest.mark.parametrize("caller", CALLERS)
def test_organization_request_by_id(client, cast, caller):
    """Members and Acme's token read Acme's requests; a non-member only those it made."""
    acme = cast.organizations["acme"]
    paths = {name: f"/v1/organizations/{acme}/requests/{cast.requests[name]}/" for name in REQUESTS}
    answers = _answers(client, cast, caller, paths)
    _assert_readable_requests(cast, answers, ORGANIZATION_REQUEST_READABLE[caller])


def test_organization_request_through_another_organization_is_not_found(client, cast):
    """The request must belong to the organization in the path, even for a member of both."""
    other = cast.organizations["other"]
    cast.world.db.users.update_one(
        {"_id": cast.users["member"]}, {"$push": {"organizations": other}}
    )
    path = f"/v1/organizations/{other}/requests/{cast.requests['member_acme']}/"
    assert_error(_get(client, cast, "member", path), 404)


# 4.5 ---------------------------------------------------------------------------------------

BOT_LIST = {
    "member": ["acme-private", "acme-public", "public"],
    "creator": ["acme-public", "public"],
    "nonmember": ["acme-public", "other-private", "public"],
    "admin": list(BOTS),
    "acme_token": ["acme-public", "public"],
    "other_token": ["acme-public", "public"],
}

CUSTOM_BOT_LIST = {
    "member": ["acme-private", "acme-public"],
    "creator": [],
    "nonmember": ["other-private"],
    "admin": [],
    "acme_token": ["acme-private", "acme-public"],
    "other_token": ["other-private"],
}


@pytest.mark.parametrize("caller", CALLERS)
def test_bot_list(client, cast, caller):
    assert _slugs(_get(client, cast, caller, "/v1/bots/")) == BOT_LIST[caller]


@pytest.mark.parametrize("caller", CALLERS)
def test_custom_bot_list(client, cast, caller):
    assert _slugs(_get(client, cast, caller, "/v1/bots/?custom=true")) == CUSTOM_BOT_LIST[caller]


@pytest.mark.parametrize("caller", CALLERS)
def test_bot_list_items_are_the_public_view(client, cast, caller):
    for custom in ("false", "true"):
        response = _get(client, cast, caller, f"/v1/bots/?custom={custom}")
        assert all(set(item) == PUBLIC_VIEW for item in response.get_json()["results"])


# 4.7 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_bot_by_slug(client, cast, caller):
    """A bot is readable when the caller could list it, `custom=true` included; else 404."""
    slugs = (*BOTS, "no-such-bot")
    answers = _answers(client, cast, caller, {slug: f"/v1/bots/{slug}/" for slug in slugs})
    readable = set(BOT_LIST[caller]) | set(CUSTOM_BOT_LIST[caller])
    assert _statuses(answers) == {slug: 200 if slug in readable else 404 for slug in slugs}
    view = ADMIN_VIEW if caller == "admin" else PUBLIC_VIEW
    for slug, (status, body) in answers.items():
        if status == 200:
            assert (body["slug"], set(body)) == (slug, view)


def test_organization_token_reads_its_own_private_bot(client, cast):
    response = _get(client, cast, "acme_token", "/v1/bots/acme-private/")
    assert response.status_code == 200
    assert response.get_json()["id"] == str(cast.bots["acme-private"])


# 4.8 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_organization_bot_by_slug(client, cast, caller):
    """Only Acme's own bots are found through Acme; public bots of no one are not."""
    acme = cast.organizations["acme"]
    slugs = (*BOTS, "no-such-bot")
    paths = {slug: f"/v1/organizations/{acme}/bots/{slug}/" for slug in slugs}
    answers = _answers(client, cast, caller, paths)
    if caller not in ORGANIZATION_INSIDERS["acme"]:
        assert _statuses(answers) == dict.fromkeys(slugs, 403)
        return
    readable = {"acme-public", "acme-private"}
    assert _statuses(answers) == {slug: 200 if slug in readable else 404 for slug in slugs}
    for slug in readable:
        body = answers[slug][1]
        assert body["bot"]["slug"] == slug
        assert body["organization"] == {"id": str(acme), "name": "Acme"}


# Authentication ----------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_bad_credentials_are_401(client, cast, endpoint):
    path = cast.path(ENDPOINTS[endpoint])
    outcomes = {}
    for problem, headers in bad_credentials(cast.world, cast.users["member"]).items():
        response = client.get(path, headers=headers)
        outcomes[problem] = response.status_code
        body = assert_error(response, response.status_code)
        assert body["message"] == "A valid bearer token is required.", problem
        assert response.headers.get("WWW-Authenticate", "").split(" ")[0] == "Bearer", problem
    assert outcomes == dict.fromkeys(outcomes, 401)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_member_reaches_every_endpoint(client, cast, endpoint):
    """The counterpart of the 401 table: the same paths answer a valid member's token."""
    response = _get(client, cast, "member", cast.path(ENDPOINTS[endpoint]))
    assert response.status_code == 200


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_scheme_is_case_insensitive(client, cast, scheme):
    response = client.get(
        "/v1/bots/", headers={"Authorization": f"{scheme} {cast.tokens['member']}"}
    )
    assert response.status_code == 200


def test_token_expiring_in_the_future_is_valid(client, cast):
    tomorrow = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(days=1)
    token = cast.world.token(user=cast.users["member"], expires_at=tomorrow)
    response = client.get("/v1/bots/?custom=true", headers=bearer(token))
    assert _slugs(response) == CUSTOM_BOT_LIST["member"]


@pytest.mark.parametrize("stored", ["2000-01-01", 0, {"at": 1}], ids=["text", "number", "object"])
def test_an_expiry_stored_as_another_type_is_no_expiry(client, cast, stored):
    """As any value of the wrong type another writer stored (docs/api.md): not a 500."""
    token = cast.world.token(user=cast.users["member"])
    odd = {"$set": {"expiresAt": stored}}
    cast.world.db.tokens.update_one({"tokenHash": hash_token(token)}, odd)
    response = client.get("/v1/bots/?custom=true", headers=bearer(token))
    assert _slugs(response) == CUSTOM_BOT_LIST["member"]


def test_membership_is_read_at_each_request(client, cast):
    """Leaving an organization takes effect at once; the token carries no memberships."""
    cast.world.db.users.update_one({"_id": cast.users["member"]}, {"$set": {"organizations": []}})
    response = _get(client, cast, "member", f"/v1/organizations/{cast.organizations['acme']}/bots/")
    assert_error(response, 403)
