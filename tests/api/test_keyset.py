"""Keyset pages and count modes through the API (docs/api.md#keyset-pages), on both backends."""

import base64
import random
import re
from urllib.parse import parse_qs, urlsplit

import bson
import pytest

from tests.support.checks import assert_bad_parameters
from tests.support.factories import World, bearer

LISTS = {
    "bots": "/v1/bots/",
    "organization bots": "/v1/organizations/{acme}/bots/",
    "requests": "/v1/requests/",
    "organization requests": "/v1/organizations/{acme}/requests/",
}


@pytest.fixture
def scene(world):
    return _scene(world)


@pytest.fixture(scope="module")
def shared_scene(module_db):
    """The scene, stored once for the tests that only read it."""
    return _scene(World(module_db))


def _scene(world: World) -> dict:
    """A member of Acme who sees public bots, Acme's bots, its own requests and Acme's."""
    rng = random.Random(1)
    acme, other = world.organization("Acme"), world.organization("Other")
    ada = world.user("Ada", organizations=[acme])
    for number in range(17):
        organization = rng.choice([None, acme, other])
        world.bot(
            f"bot-{number:02d}",
            name=rng.choice(["alpha", "beta", None]),
            credit_cost=rng.choice([1, 2.5, None]),
            organization=organization,
            is_public=organization is None or rng.random() < 0.3,
        )
    for _ in range(23):
        world.bot_request(
            bot=None, created_by=rng.choice([ada, world.user("Bob")]), organization=acme
        )
    return {
        "token": world.token(user=ada),
        "acme": str(acme),
        "organization": world.token(organization=acme),
        "admin": world.token(user=world.user("Root", role="admin")),
    }


def _get(client, token, url: str):
    return client.get(url, headers=bearer(token))


def _next(response) -> str | None:
    found = re.search(r'<([^>]*)>; rel="next"', response.headers["Link"])
    return found and found.group(1).removeprefix("http://localhost")


def _offset_ids(client, token, path: str, query: str) -> list[str]:
    body = _get(client, token, f"{path}?{query}&limit=100").get_json()
    assert body["totalResults"] <= 100
    return [item.get("id") or item["bot"]["id"] for item in body["results"]]


def _keyset_walk(client, token, path: str, query: str, limit: int) -> list[str]:
    url, ids = f"{path}?pagination=keyset&limit={limit}&{query}", []
    while url:
        response = _get(client, token, url)
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        assert set(body) == {"results", "limit", "nextCursor"}
        ids += [item["id"] for item in body["results"]]
        url = _next(response)
        assert (url is None) == (body["nextCursor"] is None)
        if url:
            assert parse_qs(urlsplit(url).query)["cursor"] == [body["nextCursor"]]
    return ids


BOT_SORTS = ["", "sortBy=name", "sortBy=creditCost:desc,slug", "sortBy=updatedAt:asc"]
REQUEST_SORTS = ["", "sortBy=createdAt:asc", "sortBy=updatedAt:desc,createdAt"]
CASES = [
    (name, sort) for name in LISTS for sort in (REQUEST_SORTS if "requests" in name else BOT_SORTS)
]


@pytest.mark.parametrize(("name", "sort"), CASES)
def test_a_keyset_walk_gives_the_offset_order(module_client, shared_scene, name, sort):
    path = LISTS[name].format(acme=shared_scene["acme"])
    expected = _offset_ids(module_client, shared_scene["token"], path, sort)
    assert expected
    for limit in (1, 4, 100):
        assert _keyset_walk(module_client, shared_scene["token"], path, sort, limit) == expected


@pytest.mark.parametrize(
    ("caller", "name"),
    [
        ("organization", "bots"),
        ("organization", "organization bots"),
        ("organization", "organization requests"),
        ("admin", "bots"),
    ],
)
def test_every_caller_kind_walks_in_the_offset_order(module_client, shared_scene, caller, name):
    path = LISTS[name].format(acme=shared_scene["acme"])
    for sort in ("", "sortBy=updatedAt:desc,createdAt"):
        if "bots" in name:
            sort = sort.replace("updatedAt:desc,createdAt", "creditCost:desc,name")
        expected = _offset_ids(module_client, shared_scene[caller], path, sort)
        assert expected
        for limit in (1, 6):
            assert _keyset_walk(module_client, shared_scene[caller], path, sort, limit) == expected


def test_count_exact_adds_the_totals_to_a_keyset_page(client, scene):
    body = _get(client, scene["token"], "/v1/requests/?pagination=keyset&count=exact").get_json()
    assert (body["totalResults"], body["totalPages"], body["limit"]) == (23, 3, 10)


def test_count_none_leaves_the_totals_and_last_out_of_an_offset_page(client, scene):
    response = _get(client, scene["token"], "/v1/requests/?count=none&limit=10&page=2")
    body = response.get_json()
    assert set(body) == {"results", "page", "limit"} and len(body["results"]) == 10
    assert 'rel="last"' not in response.headers["Link"]
    assert 'rel="next"' in response.headers["Link"]
    last = _get(client, scene["token"], "/v1/requests/?count=none&limit=10&page=3")
    assert len(last.get_json()["results"]) == 3 and 'rel="next"' not in last.headers["Link"]


def test_the_first_link_of_a_keyset_page_has_no_cursor(client, scene):
    first = _get(client, scene["token"], "/v1/requests/?pagination=keyset&limit=5")
    second = _get(client, scene["token"], _next(first))
    links = dict(
        (rel, url) for url, rel in re.findall(r'<([^>]*)>; rel="(\w+)"', second.headers["Link"])
    )
    assert set(links) == {"first", "next"}
    assert links["first"] == "http://localhost/v1/requests/?pagination=keyset&limit=5"


REGEX = bson.Regex("a")  # a position no walk holds: the tail's


def _forged(document: dict) -> str:
    return base64.urlsafe_b64encode(bson.encode(document)).decode().rstrip("=")


def _a_cursor(client, scene, query: str = "") -> str:
    url = f"/v1/bots/?pagination=keyset&limit=2{query}"
    return _get(client, scene["token"], url).get_json()["nextCursor"]


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor",
        "%%%",
        "A" * 600,
        "",
        _forged({"e": "bots.list_bots"}),
        _forged({"e": "bots.list_bots", "s": [["name", 1]], "p": "walk", "v": ["a"]}),
        _forged({"e": "bots.list_bots", "s": [["name", 2]], "p": "walk", "v": ["a", 1]}),
        _forged({"e": "bots.list_bots", "s": [["name", 1]], "p": "up", "v": ["a", 1]}),
        _forged({"e": "bots.list_bots", "s": [["name", 1]], "p": "walk", "v": [[1], 1]}),
        _forged({"e": "bots.list_bots", "s": "name", "p": "walk", "v": ["a", 1]}),
        _forged({"e": "bots.list_bots", "s": [["name", 1]], "p": "walk", "v": [{"$gt": 1}, 1]}),
        _forged({"e": "bots.list_bots", "s": [["name", 1]], "p": "walk", "a": 1, "v": [1, 1]}),
        _forged({"e": "bots.list_bots", "s": [["name", 1]], "p": "walk", "v": [REGEX, 1]}),
    ],
)
def test_a_malformed_cursor_is_a_400_naming_it(module_client, shared_scene, cursor):
    response = _get(module_client, shared_scene["token"], f"/v1/bots/?cursor={cursor}")
    if cursor == "":
        assert response.status_code == 200  # an empty parameter is one not given
    else:
        assert_bad_parameters(response, "cursor")


def test_a_cursor_is_bound_to_its_endpoint_and_sort(client, scene):
    cursor = _a_cursor(client, scene)
    acme = scene["acme"]
    for url in (
        f"/v1/organizations/{acme}/bots/?cursor={cursor}",
        f"/v1/bots/?cursor={cursor}&sortBy=slug",
        f"/v1/bots/?cursor={cursor}&pagination=offset",
    ):
        assert_bad_parameters(_get(client, scene["token"], url), "cursor")
    assert_bad_parameters(_get(client, scene["token"], f"/v1/bots/?cursor={cursor}&page=1"), "page")
    assert_bad_parameters(
        _get(client, scene["token"], "/v1/bots/?pagination=keyset&page=2"), "page"
    )
    assert _get(client, scene["token"], f"/v1/bots/?cursor={cursor}").status_code == 200


def test_a_forged_cursor_moves_a_walk_but_never_widens_it(client, scene, world):
    """A position anywhere, even before everything: the page holds what the caller may see."""
    visible = set(_offset_ids(client, scene["token"], "/v1/bots/", ""))
    for values in (
        [None, 0],
        ["", bson.ObjectId()],
        [bson.MinKey(), bson.MinKey()],
        [bson.Timestamp(1, 1), bson.ObjectId()],
        [bson.Code("x"), bson.ObjectId()],
    ):
        forged = _forged({"e": "bots.list_bots", "s": [["name", 1]], "p": "walk", "v": values})
        body = _get(client, scene["token"], f"/v1/bots/?cursor={forged}&limit=100").get_json()
        assert {bot["id"] for bot in body["results"]} <= visible


@pytest.mark.parametrize("query", ["pagination=sideways", "count=some", "count=exact&count=none"])
def test_bad_paging_modes_are_400(module_client, shared_scene, query):
    response = _get(module_client, shared_scene["token"], f"/v1/bots/?{query}")
    assert_bad_parameters(response, query.partition("=")[0])


def test_a_long_name_keeps_the_cursor_short_and_the_walk_exact(client, world):
    """A position too long for 512 characters travels as its item's id."""
    token = world.token(user=world.user("Ada"))
    for number in range(5):
        world.bot(f"long-{number}", name=f"{number}" + "n" * 700)
    expected = _offset_ids(client, token, "/v1/bots/", "")
    url, ids = "/v1/bots/?pagination=keyset&limit=2", []
    while url:
        response = _get(client, token, url)
        body = response.get_json()
        assert body["nextCursor"] is None or len(body["nextCursor"]) <= 512
        ids += [bot["id"] for bot in body["results"]]
        url = _next(response)
    assert ids == expected


def test_a_cursor_whose_item_is_gone_is_a_400(client, world, db):
    token = world.token(user=world.user("Ada"))
    for number in range(3):
        world.bot(f"long-{number}", name=f"{number}" + "n" * 700)
    cursor = _get(client, token, "/v1/bots/?pagination=keyset&limit=1").get_json()["nextCursor"]
    db.bots.delete_one({"slug": "long-0"})
    assert_bad_parameters(_get(client, token, f"/v1/bots/?cursor={cursor}"), "cursor")
