"""Filters (docs/api.md, Query parameters): each one, their AND, empty values, bad input."""

import pytest

from tests.support.checks import assert_bad_parameters
from tests.support.factories import bearer

# Names chosen so that each metacharacter query, read as a regular expression, would match
# (or fail on) other names too.
LITERAL_NAMES = {
    "dotstar": "Regex .* Bot",
    "dots": "Three dots...",
    "paren": "Paren (beta)",
    "bracket": "Bracket [x]",
    "backslash": "Back\\slash",
    "dollar": "Price $5",
    "caret": "Caret ^up",
    "lazy": "Lazy +? plus",
    "pipe": "Either|or",
    "brace": "Braces {2}",
    "plain": "Plain bot",
}


@pytest.fixture
def token(world):
    return world.token(user=world.user("Ada"))


def _get(client, token, query: str, path: str = "/v1/bots/"):
    return client.get(f"{path}?{query}", headers=bearer(token))


def _slugs(client, token, query: str, path: str = "/v1/bots/") -> list[str]:
    response = _get(client, token, query, path)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["totalResults"] == len(body["results"])
    return [bot["slug"] for bot in body["results"]]


# name --------------------------------------------------------------------------------------


@pytest.fixture
def writers(world):
    world.bot("writer-pro", name="Writer Pro")
    world.bot("copy-writer", name="Copy Writer")
    world.bot("painter", name="Painter")
    world.bot("rewrite", name="ReWrite")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("writ", ["copy-writer", "rewrite", "writer-pro"]),
        ("WRITER", ["copy-writer", "writer-pro"]),
        ("wRiTe", ["copy-writer", "rewrite", "writer-pro"]),
        ("pro", ["writer-pro"]),
        ("Copy Writer", ["copy-writer"]),
        ("er P", ["writer-pro"]),
        ("ain", ["painter"]),
        ("xyz", []),
        ("Writer Pro ", []),
    ],
)
def test_bot_name_is_a_case_insensitive_substring(client, token, writers, name, expected):
    assert _slugs(client, token, f"name={name}") == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (".*", ["dotstar"]),
        (".", ["dotstar", "dots"]),
        ("...", ["dots"]),
        ("(", ["paren"]),
        ("(beta)", ["paren"]),
        ("[", ["bracket"]),
        ("[x]", ["bracket"]),
        ("\\", ["backslash"]),
        ("\\s", ["backslash"]),
        ("$", ["dollar"]),
        ("$5", ["dollar"]),
        ("^", ["caret"]),
        ("^up", ["caret"]),
        ("+?", ["lazy"]),
        ("|", ["pipe"]),
        ("{2}", ["brace"]),
        ("t{2}", []),
        ("^Plain", []),
    ],
)
def test_bot_name_metacharacters_are_literal(client, world, token, name, expected):
    for slug, bot_name in LITERAL_NAMES.items():
        world.bot(slug, name=bot_name)
    by_name = dict(sorted((bot_name, slug) for slug, bot_name in LITERAL_NAMES.items()))
    expected_in_order = [slug for slug in by_name.values() if slug in expected]
    response = client.get("/v1/bots/", query_string={"name": name}, headers=bearer(token))
    assert response.status_code == 200, response.get_json()
    assert [bot["slug"] for bot in response.get_json()["results"]] == expected_in_order


def test_bot_name_matches_unicode_case_insensitively(client, world, token):
    world.bot("creme", name="Crème Brûlée")
    world.bot("plain", name="Plain")
    response = client.get("/v1/bots/", query_string={"name": "brû"}, headers=bearer(token))
    assert [bot["slug"] for bot in response.get_json()["results"]] == ["creme"]


# name on requests: the requested bot's name -------------------------------------------------


@pytest.fixture
def runs(world):
    """Requests of Ada's for each bot of LITERAL_NAMES, and one of a deleted bot."""
    acme = world.organization()
    user = world.user("Ada", organizations=[acme])
    bots = {slug: world.bot(slug, name=name) for slug, name in LITERAL_NAMES.items()}
    ids = {
        slug: world.bot_request(bot=bot_id, created_by=user, organization=acme)
        for slug, bot_id in bots.items()
    }
    gone = world.bot("gone", name="Gone Plain")
    ids["gone"] = world.bot_request(bot=gone, created_by=user, organization=acme)
    world.db.bots.delete_one({"_id": gone})
    return {str(value): slug for slug, value in ids.items()}, world.token(user=user), acme


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plain", {"plain"}),
        ("PLAIN BOT", {"plain"}),
        (".*", {"dotstar"}),
        ("(", {"paren"}),
        ("[x]", {"bracket"}),
        ("\\", {"backslash"}),
        ("$", {"dollar"}),
        ("^", {"caret"}),
        ("+?", {"lazy"}),
        ("nothing", set()),
    ],
)
@pytest.mark.parametrize("listing", ["user", "organization"])
def test_request_name_filters_on_the_bot_name(client, runs, listing, name, expected):
    names, token, acme = runs
    path = "/v1/requests/" if listing == "user" else f"/v1/organizations/{acme}/requests/"
    response = client.get(path, query_string={"name": name}, headers=bearer(token))
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert {names[item["id"]] for item in body["results"]} == expected
    assert body["totalResults"] == len(expected)


def test_request_name_filter_keeps_visibility(client, world):
    """Another user's request of a bot of the same name stays invisible."""
    ada, bob = world.user("Ada"), world.user("Bob")
    bot = world.bot("writer", name="Writer")
    mine = world.bot_request(bot=bot, created_by=ada)
    world.bot_request(bot=bot, created_by=bob)
    response = client.get("/v1/requests/?name=writer", headers=bearer(world.token(user=ada)))
    assert [item["id"] for item in response.get_json()["results"]] == [str(mine)]


# service filters ---------------------------------------------------------------------------


@pytest.fixture
def services(world):
    writing = world.service("Writing", "writing", "text")
    imaging = world.service("Imaging", "imaging", "media")
    plus = world.service("Writing Plus", "writing-plus", "text")
    dotted = world.service("W.*", "w-star", "odd")
    world.bot("b-writing", service=writing)
    world.bot("b-imaging", service=imaging)
    world.bot("b-plus", service=plus)
    world.bot("b-dotted", service=dotted)
    world.bot("b-none")
    return {"writing": writing, "imaging": imaging, "plus": plus}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("service=Writing", ["b-writing"]),
        ("service=writing", ["b-writing"]),
        ("service=WRITING%20PLUS", ["b-plus"]),
        ("service=Writ", []),
        ("service=riting", []),
        ("service=.*", []),
        ("service=W.*", ["b-dotted"]),
        ("service=w.%2A", ["b-dotted"]),
        ("serviceId={imaging}", ["b-imaging"]),
        ("serviceId=0123456789abcdef01234567", []),
        ("serviceSlug=writing", ["b-writing"]),
        ("serviceSlug=writing-plus", ["b-plus"]),
        ("serviceSlug=writ", []),
        ("serviceDirectory=text", ["b-plus", "b-writing"]),
        ("serviceDirectory=media", ["b-imaging"]),
        ("serviceDirectory=tex", []),
        ("serviceDirectory=text&service=writing%20plus", ["b-plus"]),
        ("serviceDirectory=text&serviceSlug=writing", ["b-writing"]),
        ("serviceDirectory=media&serviceId={writing}", []),
        ("serviceDirectory=text&serviceId={writing}", ["b-writing"]),
        ("service=imaging&serviceSlug=imaging&serviceDirectory=media", ["b-imaging"]),
        ("service=imaging&serviceSlug=writing", []),
    ],
)
def test_service_filters(client, token, services, query, expected):
    assert (
        _slugs(client, token, query.format(**{k: str(v) for k, v in services.items()})) == expected
    )


# tags --------------------------------------------------------------------------------------


@pytest.fixture
def tags(world):
    one, two, three = world.tag("one"), world.tag("two"), world.tag("three")
    acme = world.organization()
    world.bot("b1", tags=[one], organization=acme)
    world.bot("b2", tags=[two], organization=acme)
    world.bot("b12", tags=[one, two], organization=acme, is_public=False)
    world.bot("b0", organization=acme)
    return {"one": one, "two": two, "three": three}, acme


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["one"], ["b1", "b12"]),
        (["two"], ["b12", "b2"]),
        (["one", "two"], ["b1", "b12", "b2"]),
        (["two", "one"], ["b1", "b12", "b2"]),
        (["one", "one"], ["b1", "b12"]),
        (["three"], []),
        (["three", "two"], ["b12", "b2"]),
    ],
)
@pytest.mark.parametrize("listing", ["catalogue", "organization"])
def test_tags_match_any_of(client, world, tags, listing, names, expected):
    ids, acme = tags
    token = world.token(organization=acme)
    value = ",".join(str(ids[name]) for name in names)
    if listing == "catalogue":
        path, query = "/v1/bots/", f"custom=true&tags={value}"
    else:
        path, query = f"/v1/organizations/{acme}/bots/", f"tags={value}"
    assert _slugs(client, token, query, path) == expected


# custom and AND ----------------------------------------------------------------------------


@pytest.fixture
def catalogue(world):
    acme = world.organization()
    world.bot("public")
    world.bot("acme-public", organization=acme)
    world.bot("acme-private", organization=acme, is_public=False)
    return world.token(user=world.user("Ada", organizations=[acme]))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", ["acme-private", "acme-public"]),
        ("TRUE", ["acme-private", "acme-public"]),
        ("True", ["acme-private", "acme-public"]),
        ("1", ["acme-private", "acme-public"]),
        ("false", ["acme-private", "acme-public", "public"]),
        ("FALSE", ["acme-private", "acme-public", "public"]),
        ("0", ["acme-private", "acme-public", "public"]),
        ("", ["acme-private", "acme-public", "public"]),
    ],
)
def test_custom(client, catalogue, value, expected):
    assert _slugs(client, catalogue, f"custom={value}") == expected


def test_filters_combine_with_and(client, world, token):
    acme = world.organization()
    writing, imaging = world.service("Writing", "writing"), world.service("Imaging", "imaging")
    hot, cold = world.tag("hot"), world.tag("cold")
    world.bot("writer-hot", name="Writer Hot", service=writing, tags=[hot], organization=acme)
    world.bot("writer-cold", name="Writer Cold", service=writing, tags=[cold], organization=acme)
    world.bot("imager-hot", name="Writer Imager", service=imaging, tags=[hot], organization=acme)
    world.bot("painter-hot", name="Painter", service=writing, tags=[hot], organization=acme)
    world.bot("writer-hot-other", name="Writer Hot 2", service=writing, tags=[hot])
    member = world.token(user=world.user("Bo", organizations=[acme]))
    query = f"name=writer&service=writing&tags={hot}&custom=true"
    assert _slugs(client, member, query) == ["writer-hot"]
    assert _slugs(client, member, f"name=writer&service=writing&tags={hot}") == [
        "writer-hot",
        "writer-hot-other",
    ]


@pytest.mark.parametrize(
    "query",
    [
        "name=&service=&serviceId=&serviceSlug=&serviceDirectory=&tags=&custom=&sortBy=&limit=&page=",
        "custom",
        "name",
    ],
)
def test_empty_values_are_no_filter(client, catalogue, query):
    body = client.get(f"/v1/bots/?{query}", headers=bearer(catalogue)).get_json()
    assert [bot["slug"] for bot in body["results"]] == ["acme-private", "acme-public", "public"]
    assert (body["page"], body["limit"]) == (1, 10)


@pytest.mark.parametrize("path", ["/v1/requests/", "/v1/organizations/{acme}/bots/"])
def test_empty_values_on_other_lists(client, world, path):
    acme = world.organization()
    world.bot("acme-bot", organization=acme)
    token = world.token(organization=acme)
    if path == "/v1/requests/":
        token = world.token(user=world.user("Ada", organizations=[acme]))
        world.bot_request(bot=None, created_by=None, organization=acme)
        query = "name=&sortBy=&limit=&page="
    else:
        query = "name=&tags=&sortBy=&limit=&page="
    response = client.get(f"{path.format(acme=acme)}?{query}", headers=bearer(token))
    assert response.status_code == 200
    assert response.get_json()["totalResults"] == 1


# invalid input -----------------------------------------------------------------------------

VALID_ID = "0123456789abcdef01234567"
BOT_LIST = "/v1/bots/"
ORGANIZATION_BOTS = "/v1/organizations/{acme}/bots/"
REQUESTS = "/v1/requests/"
ORGANIZATION_REQUESTS = "/v1/organizations/{acme}/requests/"


@pytest.mark.parametrize(
    ("path", "query", "parameters"),
    [
        # parameters an endpoint does not know
        (BOT_LIST, "foo=1", ["foo"]),
        (BOT_LIST, "Name=x", ["Name"]),
        (BOT_LIST, "sort_by=name", ["sort_by"]),
        (BOT_LIST, "sort=name", ["sort"]),
        (BOT_LIST, "service_id=" + VALID_ID, ["service_id"]),
        (ORGANIZATION_BOTS, "custom=true", ["custom"]),
        (ORGANIZATION_BOTS, "service=x", ["service"]),
        (ORGANIZATION_BOTS, "serviceId=" + VALID_ID, ["serviceId"]),
        (REQUESTS, "tags=" + VALID_ID, ["tags"]),
        (REQUESTS, "custom=true", ["custom"]),
        (ORGANIZATION_REQUESTS, "service=x", ["service"]),
        (BOT_LIST, "foo=1&bar=2", ["foo", "bar"]),
        (BOT_LIST, "foo=", ["foo"]),
        # repeated parameters
        (BOT_LIST, "name=a&name=b", ["name"]),
        (BOT_LIST, "name=a&name=a", ["name"]),
        (BOT_LIST, "page=1&page=1", ["page"]),
        (REQUESTS, "sortBy=createdAt&sortBy=updatedAt", ["sortBy"]),
        (BOT_LIST, "tags={id}&tags={id}", ["tags"]),
        # malformed ids
        (BOT_LIST, "tags=abc", ["tags"]),
        (BOT_LIST, "tags={id},abc", ["tags"]),
        (BOT_LIST, "tags={id},", ["tags"]),
        (BOT_LIST, "tags=,{id}", ["tags"]),
        (BOT_LIST, "tags={id}%20", ["tags"]),
        (BOT_LIST, "tags=" + "g" * 24, ["tags"]),
        (BOT_LIST, "tags=" + "a" * 23, ["tags"]),
        (BOT_LIST, "tags=" + "a" * 25, ["tags"]),
        (ORGANIZATION_BOTS, "tags=abc", ["tags"]),
        (BOT_LIST, "serviceId=abc", ["serviceId"]),
        (BOT_LIST, "serviceId=" + "a" * 23, ["serviceId"]),
        (BOT_LIST, "serviceId={id},{id}", ["serviceId"]),
        # bounds
        (BOT_LIST, "tags=" + ",".join([VALID_ID] * 51), ["tags"]),
        (BOT_LIST, "name=" + "a" * 201, ["name"]),
        (REQUESTS, "name=" + "a" * 201, ["name"]),
        (BOT_LIST, "service=" + "a" * 201, ["service"]),
        (BOT_LIST, "serviceSlug=" + "a" * 201, ["serviceSlug"]),
        (BOT_LIST, "serviceDirectory=" + "a" * 201, ["serviceDirectory"]),
        # bad values
        (BOT_LIST, "custom=yes", ["custom"]),
        (BOT_LIST, "custom=2", ["custom"]),
        (BOT_LIST, "custom=t", ["custom"]),
        (BOT_LIST, "custom=%20true", ["custom"]),
        (BOT_LIST, "sortBy=nope", ["sortBy"]),
        (BOT_LIST, "custom=maybe&limit=0&foo=1", ["custom", "limit", "foo"]),
    ],
)
def test_invalid_input_is_400_naming_the_parameter(client, world, path, query, parameters):
    acme = world.organization()
    token = world.token(user=world.user("Ada", organizations=[acme]))
    response = _get(client, token, query.format(id=VALID_ID), path.format(acme=acme))
    assert_bad_parameters(response, *parameters)


@pytest.mark.parametrize(
    "query",
    [
        "tags=" + ",".join([VALID_ID] * 50),
        "name=" + "a" * 200,
        "service=" + "a" * 200,
        "serviceSlug=" + "a" * 200,
        "serviceDirectory=" + "a" * 200,
    ],
)
def test_values_at_their_bounds_are_accepted(client, token, query):
    response = _get(client, token, query)
    assert response.status_code == 200
    assert response.get_json()["results"] == []


ITEMS = (
    "/v1/requests/{run}/",
    "/v1/organizations/{acme}/requests/{run}/",
    "/v1/bots/public/",
    "/v1/organizations/{acme}/bots/acme-bot/",
)


@pytest.fixture
def items(world):
    """A member of Acme and one item for each single-item endpoint."""
    acme = world.organization()
    user = world.user("Ada", organizations=[acme])
    world.bot("public")
    bot = world.bot("acme-bot", organization=acme)
    run = world.bot_request(bot=bot, created_by=user, organization=acme)
    return world.token(user=user), {"acme": acme, "run": run}


@pytest.mark.parametrize(
    ("query", "parameters"),
    [
        ("", []),
        ("foo=1", ["foo"]),
        ("foo=", ["foo"]),
        ("name=x", ["name"]),
        ("page=1&a=b", ["page", "a"]),
    ],
)
@pytest.mark.parametrize("template", ITEMS)
def test_single_items_take_no_parameters(client, items, template, query, parameters):
    """Every endpoint refuses what it does not know, the single-item ones included."""
    token, ids = items
    response = _get(client, token, query, template.format(**ids))
    if parameters:
        assert_bad_parameters(response, *parameters)
    else:
        assert response.status_code == 200
