"""Field selection (docs/api.md#field-selection) through the API, on both backends.

What the database is asked for a selection (no join of a reference left out) is counted on
the wire in tests/integration/test_round_trips.py.
"""

import pytest

from tests.support.checks import assert_bad_parameters
from tests.support.factories import bearer


@pytest.fixture
def scene(world):
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    service, tag = world.service(), world.tag("fun")
    bot = world.bot("acme-bot", organization=acme, service=service, tags=[tag])
    world.bot("public-bot")
    request = world.bot_request(bot=bot, created_by=ada, organization=acme)
    world.bot_request(bot=None, created_by=ada, organization=acme, ip="=1+1")
    return {
        "acme": acme,
        "request": request,
        "ada": world.token(user=ada),
        "organization": world.token(organization=acme),
        "admin": world.token(user=world.user("Root", role="admin")),
    }


# name: (path, the items of its answer, a selection, a name its view does not hold)
ENDPOINTS = {
    "requests": ("/v1/requests/", "results", "bot,createdAt", "slug"),
    "request": ("/v1/requests/{request}/", None, "ip,organization", "name"),
    "organization requests": ("/v1/organizations/{acme}/requests/", "results", "ip", "isPublic"),
    "organization request": (
        "/v1/organizations/{acme}/requests/{request}/",
        None,
        "response,createdBy",
        "slug",
    ),
    "bots": ("/v1/bots/", "results", "slug,creditCost", "organizationId"),
    "organization bots": ("/v1/organizations/{acme}/bots/", "results", "organizationId", "tags"),
    "bot": ("/v1/bots/acme-bot/", None, "name,inputs", "isPublic"),
    "organization bot": ("/v1/organizations/{acme}/bots/acme-bot/", "bot", "slug", "isPublic"),
}


def _get(client, scene, path: str, token: str = "ada"):
    response = client.get(path.format(**scene), headers=bearer(scene[token]))
    assert response.status_code == 200, response.get_json()
    return response


def _items(body: dict, key: str | None) -> list[dict]:
    if key is None:
        return [body]
    return body[key] if key == "results" else [body[key]]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_selection_returns_the_selected_fields_and_id(client, scene, endpoint):
    path, key, selection, _ = ENDPOINTS[endpoint]
    full = _items(_get(client, scene, path).get_json(), key)
    joined = "&" if "?" in path else "?"
    chosen = _items(_get(client, scene, f"{path}{joined}fields={selection}").get_json(), key)
    names = {"id", *selection.split(",")}
    assert full and len(chosen) == len(full)
    for whole, part in zip(full, chosen, strict=True):
        assert part == {name: whole[name] for name in names}


@pytest.mark.parametrize(
    ("endpoint", "token"), [*((endpoint, "ada") for endpoint in ENDPOINTS), ("bot", "admin")]
)
def test_each_field_alone_is_what_the_whole_answer_shows(client, scene, endpoint, token):
    """What the repositories read for a selection and what the schemas show agree, for
    every name of every view (the admin's detailed bot included)."""
    path, key, _, _ = ENDPOINTS[endpoint]
    full = _items(_get(client, scene, path, token).get_json(), key)
    joined = "&" if "?" in path else "?"
    for name in full[0]:
        url = f"{path}{joined}fields={name}"
        chosen = _items(_get(client, scene, url, token).get_json(), key)
        assert chosen == [{"id": whole["id"], name: whole[name]} for whole in full], name


def test_the_rest_of_an_answer_stays_whole(client, scene):
    """4.8 selects the bot's fields, beside the whole organization; a list keeps its
    envelope."""
    body = _get(client, scene, "/v1/organizations/{acme}/bots/acme-bot/?fields=slug").get_json()
    assert body["organization"] == {"id": str(scene["acme"]), "name": "Acme"}
    page = _get(client, scene, "/v1/bots/?fields=slug&limit=1").get_json()
    assert set(page) == {"results", "page", "limit", "totalResults", "totalPages"}


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_an_empty_selection_is_every_field(client, scene, endpoint):
    path, *_ = ENDPOINTS[endpoint]
    joined = "&" if "?" in path else "?"
    assert (
        _get(client, scene, f"{path}{joined}fields=").get_json()
        == _get(client, scene, path).get_json()
    )


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("value", ["{other}", "id,{other}", "nope", "id,,slug", " id", "ID"])
def test_a_name_the_view_does_not_hold_is_a_400_naming_fields(client, scene, endpoint, value):
    path, _, _, other = ENDPOINTS[endpoint]
    joined = "&" if "?" in path else "?"
    url = f"{path}{joined}fields={value.format(other=other)}".format(**scene)
    assert_bad_parameters(client.get(url, headers=bearer(scene["ada"])), "fields")


def test_an_admin_field_is_the_admins_alone(client, scene):
    """4.7 accepts the names of the caller's own view: the admin view's for an admin."""
    url = "/v1/bots/acme-bot/?fields=isPublic,service,tags"
    assert_bad_parameters(client.get(url, headers=bearer(scene["ada"])), "fields")
    assert_bad_parameters(client.get(url, headers=bearer(scene["organization"])), "fields")
    body = _get(client, scene, url, token="admin").get_json()
    assert set(body) == {"id", "isPublic", "service", "tags"}
    assert body["service"]["slug"] == "writing" and [t["name"] for t in body["tags"]] == ["fun"]
    whole = _get(client, scene, "/v1/bots/acme-bot/", token="admin").get_json()
    assert {name: whole[name] for name in body} == body


def test_a_selection_has_its_own_etag(client, scene):
    tags = {
        _get(client, scene, f"/v1/requests/{scene['request']}/{query}").headers["ETag"]
        for query in ("", "?fields=ip", "?fields=ip,bot", "?fields=createdAt")
    }
    assert len(tags) == 4


def test_keyset_pages_select_as_offset_pages_do(client, scene):
    url = "/v1/requests/?pagination=keyset&limit=1&fields=ip"
    first = _get(client, scene, url).get_json()
    assert [set(item) for item in first["results"]] == [{"id", "ip"}]
    following = _get(client, scene, f"{url}&cursor={first['nextCursor']}").get_json()
    assert [set(item) for item in following["results"]] == [{"id", "ip"}]
    assert following["results"] != first["results"]


def test_a_deleted_reference_selected_is_null(client, scene, db):
    db.bots.delete_many({})
    page = _get(client, scene, "/v1/requests/?fields=bot").get_json()
    assert [item["bot"] for item in page["results"]] == [None, None]
