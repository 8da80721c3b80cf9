"""Paging and ordering: the page math, `sortBy`, the id tiebreak.

The rules are in docs/api.md (Query parameters, and Responses for the page).
"""

import datetime as dt
import random

import pytest
from bson import Decimal128, ObjectId

from app import create_app
from tests.conftest import TEST_SETTINGS
from tests.support.checks import assert_bad_parameters
from tests.support.factories import World, bearer

T0 = dt.datetime(2026, 1, 1)


def _at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


@pytest.fixture
def token(world):
    return world.token(user=world.user("Ada"))


def _page(client, token, query: str, path: str = "/v1/bots/") -> dict:
    response = client.get(f"{path}?{query}", headers=bearer(token))
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _slugs(body: dict) -> list[str]:
    return [bot["slug"] for bot in body["results"]]


# Page math ---------------------------------------------------------------------------------


@pytest.fixture
def twenty_three(world):
    """Bots b00..b22: the default order (name ascending) is the order of their numbers."""
    return [world.bot(f"b{number:02d}") for number in range(23)]


@pytest.mark.parametrize(
    ("query", "slugs", "total_pages"),
    [
        ("", [f"b{n:02d}" for n in range(10)], 3),
        ("page=2", [f"b{n:02d}" for n in range(10, 20)], 3),
        ("page=3", ["b20", "b21", "b22"], 3),
        ("page=4", [], 3),
        ("page=1000", [], 3),
        ("limit=5&page=5", ["b20", "b21", "b22"], 5),
        ("limit=23", [f"b{n:02d}" for n in range(23)], 1),
        ("limit=22&page=2", ["b22"], 2),
        ("limit=100", [f"b{n:02d}" for n in range(23)], 1),
        ("limit=1&page=23", ["b22"], 23),
        ("limit=1&page=24", [], 23),
    ],
)
def test_pages(client, token, twenty_three, query, slugs, total_pages):
    body = _page(client, token, query)
    assert _slugs(body) == slugs
    assert body["totalResults"] == 23
    assert body["totalPages"] == total_pages


def test_page_and_limit_are_echoed(client, token, twenty_three):
    body = _page(client, token, "page=2&limit=7")
    assert (body["page"], body["limit"], body["totalPages"]) == (2, 7, 4)


def test_defaults_are_page_one_of_ten(client, token, twenty_three):
    body = _page(client, token, "")
    assert (body["page"], body["limit"], len(body["results"])) == (1, 10, 10)


def test_an_exact_multiple_has_no_empty_last_page(client, world, token):
    for number in range(20):
        world.bot(f"b{number:02d}")
    assert _page(client, token, "")["totalPages"] == 2


@pytest.mark.parametrize("path", ["/v1/bots/", "/v1/requests/"])
@pytest.mark.parametrize("page", ["1", "3"])
def test_nothing_matches(client, token, path, page):
    body = _page(client, token, f"page={page}", path)
    assert body == {
        "results": [],
        "page": int(page),
        "limit": 10,
        "totalPages": 0,
        "totalResults": 0,
    }


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=-1", "limit"),
        ("limit=1.5", "limit"),
        ("limit=1e1", "limit"),
        ("limit=+5", "limit"),
        ("limit=%205", "limit"),
        ("limit=5%20", "limit"),
        ("limit=ten", "limit"),
        ("limit=0x10", "limit"),
        ("limit=%D9%A1", "limit"),
        ("limit=99999999999999999999", "limit"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=1.0", "page"),
        ("page=one", "page"),
        ("page=99999999999999999999", "page"),
        ("limit=100&page=100002", "page"),
        ("limit=1&page=10000002", "page"),
        ("limit=10&page=1000002", "page"),
    ],
)
@pytest.mark.parametrize("path", ["/v1/bots/", "/v1/requests/"])
def test_bad_paging_is_400(client, token, path, query, parameter):
    assert_bad_parameters(client.get(f"{path}?{query}", headers=bearer(token)), parameter)


@pytest.mark.parametrize(
    "query", ["limit=1", "limit=100", "limit=100&page=100001", "limit=1&page=10000001"]
)
def test_paging_at_its_bounds_is_accepted(client, token, twenty_three, query):
    """`(page - 1) * limit` may reach 10,000,000 but not pass it."""
    body = _page(client, token, query)
    assert body["totalResults"] == 23


# Sorting -----------------------------------------------------------------------------------

# slug -> (name, creditCost, createdAt, updatedAt): every attribute orders them differently.
SORTABLE_BOTS = {
    "alpha": ("Delta", 3, 2, 1),
    "bravo": ("Charlie", 1, 4, 3),
    "charlie": ("Alpha", 4, 1, 2),
    "delta": ("Bravo", 2, 3, 4),
}
BOT_ORDERS = {
    "slug": ["alpha", "bravo", "charlie", "delta"],
    "name": ["charlie", "delta", "bravo", "alpha"],
    "creditCost": ["bravo", "delta", "alpha", "charlie"],
    "createdAt": ["charlie", "alpha", "delta", "bravo"],
    "updatedAt": ["alpha", "charlie", "bravo", "delta"],
}


@pytest.fixture
def sortable_bots(world):
    for slug, (name, cost, created, updated) in SORTABLE_BOTS.items():
        world.bot(slug, name=name, credit_cost=cost, createdAt=_at(created), updatedAt=_at(updated))


@pytest.mark.parametrize(
    ("direction", "reverse"),
    [
        ("", False),
        (":asc", False),
        (":desc", True),
        (":DESC", True),
        (":Asc", False),
        (":dEsC", True),
    ],
)
@pytest.mark.parametrize("attribute", BOT_ORDERS)
def test_bot_sort(client, token, sortable_bots, attribute, direction, reverse):
    expected = BOT_ORDERS[attribute][::-1] if reverse else BOT_ORDERS[attribute]
    assert _slugs(_page(client, token, f"sortBy={attribute}{direction}")) == expected


def test_bot_default_order_is_name_ascending(client, token, sortable_bots):
    assert _slugs(_page(client, token, "")) == BOT_ORDERS["name"]


def test_organization_bots_sort_too(client, world, sortable_bots):
    acme = world.organization()
    world.db.bots.update_many({}, {"$set": {"organization": acme}})
    token = world.token(organization=acme)
    path = f"/v1/organizations/{acme}/bots/"
    assert _slugs(_page(client, token, "", path)) == BOT_ORDERS["name"]
    assert _slugs(_page(client, token, "sortBy=creditCost:desc", path)) == [
        "charlie",
        "alpha",
        "delta",
        "bravo",
    ]


@pytest.mark.parametrize(
    ("sort_by", "expected"),
    [
        ("creditCost:desc,name", ["y", "z", "x", "w"]),
        ("creditCost:desc,name:desc", ["z", "y", "x", "w"]),
        ("creditCost,name:desc", ["w", "x", "z", "y"]),
        ("creditCost,slug", ["w", "x", "y", "z"]),
        ("name,creditCost", ["x", "y", "w", "z"]),
    ],
)
def test_multi_key_sort(client, world, token, sort_by, expected):
    for slug, name, cost in [("w", "Bea", 1), ("x", "Abe", 2), ("y", "Abe", 3), ("z", "Cid", 3)]:
        world.bot(slug, name=name, credit_cost=cost)
    assert _slugs(_page(client, token, f"sortBy={sort_by}")) == expected


# id -> (createdAt, updatedAt)
SORTABLE_REQUESTS = {"first": (1, 3), "second": (2, 1), "third": (3, 2)}
REQUEST_ORDERS = {
    "createdAt": ["first", "second", "third"],
    "updatedAt": ["second", "third", "first"],
}


@pytest.fixture
def sortable_requests(world):
    user = world.user("Ada")
    ids = {}
    for name, (created, updated) in SORTABLE_REQUESTS.items():
        ids[name] = world.bot_request(
            bot=None, created_by=user, createdAt=_at(created), updatedAt=_at(updated)
        )
    return {str(value): name for name, value in ids.items()}, world.token(user=user)


def _request_names(body: dict, names: dict) -> list[str]:
    return [names[item["id"]] for item in body["results"]]


@pytest.mark.parametrize(("direction", "reverse"), [("", False), (":asc", False), (":DESC", True)])
@pytest.mark.parametrize("attribute", REQUEST_ORDERS)
def test_request_sort(client, sortable_requests, attribute, direction, reverse):
    names, token = sortable_requests
    expected = REQUEST_ORDERS[attribute][::-1] if reverse else REQUEST_ORDERS[attribute]
    body = _page(client, token, f"sortBy={attribute}{direction}", "/v1/requests/")
    assert _request_names(body, names) == expected


def test_request_default_order_is_newest_first(client, sortable_requests):
    names, token = sortable_requests
    body = _page(client, token, "", "/v1/requests/")
    assert _request_names(body, names) == ["third", "second", "first"]


def test_request_multi_key_sort(client, world):
    user = world.user("Ada")
    token = world.token(user=user)
    runs = {
        "a": world.bot_request(bot=None, created_by=user, createdAt=_at(1), updatedAt=_at(2)),
        "b": world.bot_request(bot=None, created_by=user, createdAt=_at(1), updatedAt=_at(1)),
        "c": world.bot_request(bot=None, created_by=user, createdAt=_at(0), updatedAt=_at(5)),
    }
    names = {str(value): name for name, value in runs.items()}
    body = _page(client, token, "sortBy=createdAt:desc,updatedAt:asc", "/v1/requests/")
    assert _request_names(body, names) == ["b", "a", "c"]


@pytest.mark.parametrize(
    ("path", "sort_by"),
    [
        ("/v1/bots/", "name,name"),
        ("/v1/bots/", "name:asc,creditCost,name:desc"),
        ("/v1/bots/", "description"),
        ("/v1/bots/", "id"),
        ("/v1/bots/", "_id"),
        ("/v1/bots/", "Name"),
        ("/v1/bots/", "isPublic"),
        ("/v1/bots/", "name:up"),
        ("/v1/bots/", "name:"),
        ("/v1/bots/", ":asc"),
        ("/v1/bots/", "name:asc:desc"),
        ("/v1/bots/", "name,"),
        ("/v1/bots/", ",name"),
        ("/v1/bots/", "name%20"),
        ("/v1/bots/", "name%0A"),
        ("/v1/bots/", "name%20:asc"),
        ("/v1/bots/", "name:-1"),
        ("/v1/bots/", "-name"),
        ("/v1/bots/", "name;creditCost"),
        ("/v1/requests/", "name"),
        ("/v1/requests/", "creditCost"),
        ("/v1/requests/", "createdAt,createdAt:desc"),
        ("/v1/requests/", "createdAt:newest"),
    ],
)
def test_bad_sort_is_400(client, token, path, sort_by):
    assert_bad_parameters(client.get(f"{path}?sortBy={sort_by}", headers=bearer(token)), "sortBy")


# Tiebreak ----------------------------------------------------------------------------------


def _shuffled_ids(count: int) -> list[ObjectId]:
    """Ids inserted out of their own order, so that insertion order cannot pass for `_id`."""
    ids = sorted(ObjectId() for _ in range(count))
    random.Random(7).shuffle(ids)
    return ids


def _walk(client, token, path: str, query: str, limit: int) -> list[str]:
    seen, page = [], 1
    while True:
        body = _page(client, token, f"{query}&limit={limit}&page={page}", path)
        if not body["results"]:
            assert page == body["totalPages"] + 1
            return seen
        seen.extend(item["id"] for item in body["results"])
        page += 1


@pytest.mark.parametrize("sort_by", ["name", "name:desc", "creditCost:desc,name", "createdAt:desc"])
def test_bot_ties_break_on_id_across_pages(client, world, token, sort_by):
    """Equal sort keys: every page walked in turn gives each id once, in id order."""
    ids = _shuffled_ids(25)
    for index, bot_id in enumerate(ids):
        world.bot(f"same-{index}", name="Same", credit_cost=5, createdAt=T0, _id=bot_id)
    walked = _walk(client, token, "/v1/bots/", f"sortBy={sort_by}", limit=7)
    expected = sorted(str(bot_id) for bot_id in ids)
    assert walked in (expected, expected[::-1])


@pytest.mark.parametrize("sort_by", ["", "createdAt", "updatedAt:desc"])
def test_request_ties_break_on_id_across_pages(client, world, sort_by):
    user = world.user("Ada")
    token = world.token(user=user)
    ids = _shuffled_ids(25)
    for request_id in ids:
        world.bot_request(bot=None, created_by=user, createdAt=T0, updatedAt=T0, _id=request_id)
    walked = _walk(client, token, "/v1/requests/", f"sortBy={sort_by}", limit=4)
    expected = sorted(str(request_id) for request_id in ids)
    assert walked in (expected, expected[::-1])


def test_ties_break_on_id_among_visibility_branches(client, world):
    """A member's requests come from two branches (own and organization's); still one order."""
    acme = world.organization()
    user = world.user("Ada", organizations=[acme])
    other = world.user("Bob", organizations=[acme])
    token = world.token(user=user)
    ids = _shuffled_ids(20)
    for index, request_id in enumerate(ids):
        world.bot_request(
            bot=None,
            created_by=user if index % 2 else other,
            organization=None if index % 2 else acme,
            createdAt=T0,
            _id=request_id,
        )
    walked = _walk(client, token, "/v1/requests/", "sortBy=createdAt", limit=3)
    expected = sorted(str(request_id) for request_id in ids)
    assert walked in (expected, expected[::-1])


def test_a_member_sorting_by_a_signalling_nan_gets_the_servers_order(wire_db):
    """A member's bots are two branches (public, its organizations'); their order was
    merged in Python, which raised on a Decimal128 signalling NaN: a 500, where an admin
    (one branch, sorted by the server) got a 200. mongomock cannot sort such values."""
    world = World(wire_db)
    acme = world.organization("Acme")
    token = world.token(user=world.user("Ada", organizations=[acme]))
    world.bot("nan", credit_cost=Decimal128("sNaN"))
    world.bot("one", credit_cost=1)
    world.bot("listed", credit_cost=[3, 0.5], organization=acme, is_public=False)
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": wire_db.name}, mongo_client=wire_db.client)
    body = _page(app.test_client(), token, "sortBy=creditCost")
    expected = wire_db.bots.find({}, {"slug": 1}, sort=[("creditCost", 1), ("_id", 1)])
    assert _slugs(body) == [bot["slug"] for bot in expected] == ["nan", "listed", "one"]
