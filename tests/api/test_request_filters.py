"""Request filters (docs/api.md#filters): `bot`, `createdFrom`/`createdTo` and, on 4.2, `createdBy`.

Expected pages are computed here from the stored documents, independently of the queries:
visibility as docs/api.md#who-sees-what states it, each filter as docs/api.md#filters states
it, the order of docs/api.md#sorting.
"""

import datetime as dt
from urllib.parse import urlencode

import pytest
from bson import ObjectId

from tests.support.checks import assert_bad_parameters
from tests.support.factories import World, bearer

T0 = dt.datetime(2026, 3, 1, 12, 0)
MS = dt.timedelta(milliseconds=1)


def _at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


@pytest.fixture
def scene(world):
    return _scene(world)


@pytest.fixture(scope="module")
def shared_scene(module_db):
    """The scene, stored once for the tests that only read it."""
    return _scene(World(module_db))


def _scene(world: World) -> dict:
    """Ada is in Acme and Beta, Bo in Acme only, Cy in Beta only, Eve in none.

    Requests of each of them, personal and in organizations, of public and private bots, one
    a minute from T0, with `updatedAt` in another order than `createdAt`.
    """
    acme, beta = world.organization("Acme"), world.organization("Beta")
    users = {
        "ada": world.user("Ada", organizations=[acme, beta]),
        "bo": world.user("Bo", organizations=[acme]),
        "cy": world.user("Cy", organizations=[beta]),
        "eve": world.user("Eve"),
    }
    bots = {
        "writer": world.bot("writer", name="Writer"),
        "rewriter": world.bot("rewriter", name="ReWriter"),
        "acme-secret": world.bot(
            "acme-secret", name="Secret Writer", organization=acme, is_public=False
        ),
        "beta-painter": world.bot(
            "beta-painter", name="Painter", organization=beta, is_public=False
        ),
    }
    plan = [
        ("ada", "writer", None),
        ("ada", "acme-secret", "acme"),
        ("bo", "writer", "acme"),
        ("bo", "acme-secret", "acme"),
        ("cy", "beta-painter", "beta"),
        ("cy", "writer", None),
        ("eve", "writer", None),
        ("ada", "beta-painter", "beta"),
        ("bo", "rewriter", None),
        ("ada", "rewriter", "acme"),
    ]
    organizations = {"acme": acme, "beta": beta, None: None}
    for index in range(30):
        who, bot, organization = plan[index % len(plan)]
        world.bot_request(
            bot=bots[bot],
            created_by=users[who],
            organization=organizations[organization],
            createdAt=_at(index),
            updatedAt=_at((index * 7) % 30),
        )
    tokens = {name: world.token(user=user) for name, user in users.items()}
    tokens["acme"] = world.token(organization=acme)
    return {
        "db": world.db,
        "users": users,
        "bots": bots,
        "acme": acme,
        "beta": beta,
        "tokens": tokens,
    }


def _visible(scene, caller: str, organization: ObjectId | None) -> list[dict]:
    """docs/api.md#who-sees-what, as a filter over the stored requests."""
    requests = list(scene["db"].botrequests.find())
    if organization is not None:
        return [r for r in requests if r["organization"] == organization]
    user = scene["users"][caller]
    memberships = scene["db"].users.find_one({"_id": user})["organizations"]
    return [r for r in requests if r["createdBy"] == user or r["organization"] in memberships]


def _expected(scene, caller, organization, query: dict) -> list[str]:
    """docs/api.md#filters and #sorting over the visible requests: the ids of the whole result,
    in order."""
    requests = _visible(scene, caller, organization)
    bots = {doc["_id"]: doc for doc in scene["db"].bots.find()}
    if "bot" in query:
        requests = [r for r in requests if bots[r["bot"]]["slug"] == query["bot"]]
    if "name" in query:
        requests = [r for r in requests if query["name"].lower() in bots[r["bot"]]["name"].lower()]
    if "createdFrom" in query:
        requests = [r for r in requests if r["createdAt"] >= query["createdFrom"]]
    if "createdTo" in query:
        requests = [r for r in requests if r["createdAt"] < query["createdTo"]]
    if "createdBy" in query:
        requests = [r for r in requests if r["createdBy"] == query["createdBy"]]
    attribute, _, direction = query.get("sortBy", "createdAt:desc").partition(":")
    requests.sort(key=lambda r: (r[attribute], r["_id"]), reverse=direction == "desc")
    return [str(r["_id"]) for r in requests]


def _query_string(query: dict) -> str:
    def text(value):
        if isinstance(value, dt.datetime):
            return value.isoformat(timespec="microseconds") + "Z"
        return str(value)

    return urlencode({key: text(value) for key, value in query.items()})


def _list(client, scene, caller, organization, query: dict, **paging) -> dict:
    path = (
        "/v1/requests/" if organization is None else f"/v1/organizations/{organization}/requests/"
    )
    url = f"{path}?{_query_string({**query, **paging})}"
    response = client.get(url, headers=bearer(scene["tokens"][caller]))
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _all_pages(client, scene, caller, organization, query: dict, limit: int) -> list[str]:
    ids, page = [], 1
    while True:
        body = _list(client, scene, caller, organization, query, page=page, limit=limit)
        ids += [item["id"] for item in body["results"]]
        if page >= body["totalPages"]:
            assert body["totalResults"] == len(ids)
            return ids
        page += 1


LISTINGS = [
    ("ada", None),
    ("bo", None),
    ("eve", None),
    ("ada", "acme"),
    ("acme", "acme"),
    ("cy", "beta"),
]

QUERIES = [
    {"bot": "writer"},
    {"bot": "acme-secret"},
    {"bot": "no-such-bot"},
    {"createdFrom": _at(10)},
    {"createdTo": _at(10)},
    {"createdFrom": _at(3), "createdTo": _at(17)},
    {"bot": "writer", "createdFrom": _at(5), "createdTo": _at(25)},
    {"bot": "writer", "name": "writ"},
    {"bot": "writer", "name": "painter"},
    {"name": "writer", "createdFrom": _at(2), "sortBy": "updatedAt:asc"},
    {"bot": "rewriter", "createdTo": _at(29), "sortBy": "updatedAt:desc"},
    {"createdFrom": _at(4), "createdTo": _at(26), "sortBy": "createdAt:asc"},
]


@pytest.mark.parametrize(("caller", "organization"), LISTINGS)
@pytest.mark.parametrize("query", QUERIES, ids=_query_string)
def test_filters_combine_with_name_sort_and_paging(
    module_client, shared_scene, caller, organization, query
):
    scene = shared_scene
    organization = scene.get(organization)
    expected = _expected(scene, caller, organization, query)
    assert _all_pages(module_client, scene, caller, organization, query, limit=3) == expected


MEMBER_QUERIES = [
    {"createdBy": "ada"},
    {"createdBy": "bo", "bot": "acme-secret"},
    {"createdBy": "bo", "createdFrom": _at(3), "createdTo": _at(20), "sortBy": "updatedAt"},
    {"createdBy": "ada", "name": "writer", "createdTo": _at(28)},
    {"createdBy": "cy"},
    {"createdBy": "eve"},
]


@pytest.mark.parametrize("caller", ["ada", "bo", "acme"])
@pytest.mark.parametrize("query", MEMBER_QUERIES, ids=_query_string)
def test_created_by_gives_that_users_requests_in_the_organization(
    module_client, shared_scene, caller, query
):
    scene = shared_scene
    query = {**query, "createdBy": scene["users"][query["createdBy"]]}
    expected = _expected(scene, caller, scene["acme"], query)
    assert _all_pages(module_client, scene, caller, scene["acme"], query, limit=2) == expected


def test_the_filters_select_what_the_scene_says(client, scene):
    """The expectations are not vacuous: each filter keeps some requests and drops others."""
    everything = _expected(scene, "ada", None, {})
    for query in QUERIES[:2] + QUERIES[3:7]:
        assert 0 < len(_expected(scene, "ada", None, query)) < len(everything), query
    acme = scene["acme"]
    by_bo = _expected(scene, "acme", acme, {"createdBy": scene["users"]["bo"]})
    assert 0 < len(by_bo) < len(_expected(scene, "acme", acme, {}))


def test_an_unknown_bot_gives_an_empty_page(client, scene):
    body = _list(client, scene, "ada", None, {"bot": "no-such-bot"})
    assert body == {"results": [], "page": 1, "limit": 10, "totalPages": 0, "totalResults": 0}


def test_empty_values_mean_no_filter(client, scene):
    unfiltered = _list(client, scene, "ada", scene["acme"], {})
    empty = {"bot": "", "createdFrom": "", "createdTo": "", "createdBy": ""}
    assert _list(client, scene, "ada", scene["acme"], empty) == unfiltered


# Isolation: a filter narrows what the caller sees, never widens it -------------------------


def test_a_bot_of_another_organization_adds_nothing(client, scene):
    """Bo is not in Beta: its private bot's requests stay invisible, though they exist."""
    assert scene["db"].botrequests.count_documents({"bot": scene["bots"]["beta-painter"]})
    assert _list(client, scene, "bo", None, {"bot": "beta-painter"})["totalResults"] == 0


def test_created_by_of_an_outsider_adds_nothing(client, scene):
    """Cy has requests, in Beta and personal, none in Acme: nothing in Acme's list."""
    body = _list(client, scene, "bo", scene["acme"], {"createdBy": scene["users"]["cy"]})
    assert body["totalResults"] == 0


def test_created_by_keeps_to_the_organization(client, scene):
    """Ada's requests in Beta and her personal ones stay out of Acme's list."""
    ada = scene["users"]["ada"]
    ids = _all_pages(client, scene, "acme", scene["acme"], {"createdBy": ada}, limit=100)
    stored = scene["db"].botrequests.find({"_id": {"$in": [ObjectId(i) for i in ids]}})
    assert {(r["createdBy"], r["organization"]) for r in stored} == {(ada, scene["acme"])}


def test_the_filters_do_not_open_a_forbidden_organization(client, scene):
    url = f"/v1/organizations/{scene['acme']}/requests/?createdBy={scene['users']['cy']}&bot=writer"
    response = client.get(url, headers=bearer(scene["tokens"]["cy"]))
    assert response.status_code == 403


# Timestamps: boundaries, offsets, dates -----------------------------------------------------


@pytest.fixture
def ticks(world):
    """Eve's requests at T0 - 1 ms, T0, T0 + 1 ms and T0 + 2 ms."""
    eve = world.user("Eve")
    bot = world.bot("writer")
    for offset in (-1, 0, 1, 2):
        world.bot_request(bot=bot, created_by=eve, createdAt=T0 + offset * MS, updatedAt=T0)
    return world.token(user=eve)


def _created(client, token, query: str) -> list[str]:
    response = client.get(f"/v1/requests/?sortBy=createdAt:asc&{query}", headers=bearer(token))
    assert response.status_code == 200, response.get_json()
    return [item["createdAt"][17:-1] for item in response.get_json()["results"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("createdFrom=2026-03-01T12:00:00Z", ["00.000", "00.001", "00.002"]),
        ("createdFrom=2026-03-01T12:00:00.000Z", ["00.000", "00.001", "00.002"]),
        ("createdTo=2026-03-01T12:00:00Z", ["59.999"]),
        (
            "createdFrom=2026-03-01T12:00:00Z&createdTo=2026-03-01T12:00:00.002Z",
            ["00.000", "00.001"],
        ),
        # Between two milliseconds: the next one is the bound, either way.
        ("createdFrom=2026-03-01T12:00:00.0005Z", ["00.001", "00.002"]),
        ("createdTo=2026-03-01T12:00:00.0005Z", ["59.999", "00.000"]),
        ("createdFrom=2026-03-01T11:59:59.9991Z&createdTo=2026-03-01T12:00:00.0009Z", ["00.000"]),
        # Offsets: the same instants.
        ("createdFrom=2026-03-01T14:00:00%2B02:00", ["00.000", "00.001", "00.002"]),
        ("createdFrom=2026-03-01T14:00:00+02:00", ["00.000", "00.001", "00.002"]),
        ("createdTo=2026-03-01T07:30:00.001-04:30", ["59.999", "00.000"]),
        ("createdFrom=2026-03-01T12:00:00.001%2B00:00", ["00.001", "00.002"]),
        # A date alone: midnight UTC.
        ("createdFrom=2026-03-01", ["59.999", "00.000", "00.001", "00.002"]),
        ("createdTo=2026-03-01", []),
        ("createdFrom=2026-03-02", []),
        ("createdFrom=2026-02-28&createdTo=2026-03-02", ["59.999", "00.000", "00.001", "00.002"]),
    ],
)
def test_created_from_is_inclusive_and_created_to_exclusive(client, ticks, query, expected):
    assert _created(client, ticks, query) == expected


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("createdFrom=yesterday", "createdFrom"),
        ("createdFrom=2026-13-01", "createdFrom"),
        ("createdFrom=2026-02-30", "createdFrom"),
        ("createdTo=2026-03-01T25:00:00Z", "createdTo"),
        ("createdTo=1700000000", "createdTo"),
        # A time without Z or an offset is refused, not guessed.
        ("createdFrom=2026-03-01T12:00:00", "createdFrom"),
        ("createdTo=2026-03-01T12:00", "createdTo"),
        ("createdFrom=2026-03-01&createdTo=2026-03-01", "createdTo"),
        ("createdFrom=2026-03-02&createdTo=2026-03-01", "createdTo"),
        ("createdFrom=2026-03-01T14:00:00%2B02:00&createdTo=2026-03-01T12:00:00Z", "createdTo"),
        ("bot=" + "x" * 201, "bot"),
        ("bot=a%00b", "bot"),
    ],
)
@pytest.mark.parametrize("listing", ["user", "organization"])
def test_bad_filter_values_are_a_400_naming_the_parameter(
    module_client, shared_scene, listing, query, parameter
):
    scene = shared_scene
    path = "/v1/requests/" if listing == "user" else f"/v1/organizations/{scene['acme']}/requests/"
    response = module_client.get(f"{path}?{query}", headers=bearer(scene["tokens"]["ada"]))
    assert_bad_parameters(response, parameter)


@pytest.mark.parametrize(
    "value",
    ["nope", "0123456789abcdef0123456", "0123456789abcdef012345678", "0123456789abcdef0123456g"],
)
def test_a_malformed_created_by_is_a_400(client, scene, value):
    url = f"/v1/organizations/{scene['acme']}/requests/?createdBy={value}"
    response = client.get(url, headers=bearer(scene["tokens"]["ada"]))
    assert_bad_parameters(response, "createdBy")


def test_created_by_is_unknown_on_the_users_list(client, scene):
    url = f"/v1/requests/?createdBy={scene['users']['ada']}"
    response = client.get(url, headers=bearer(scene["tokens"]["ada"]))
    assert_bad_parameters(response, "createdBy")


def test_the_filters_are_unknown_on_other_lists(client, scene):
    response = client.get(
        "/v1/bots/?bot=writer&createdFrom=2026-01-01", headers=bearer(scene["tokens"]["ada"])
    )
    assert_bad_parameters(response, "bot", "createdFrom")
