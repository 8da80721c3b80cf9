"""Hostile input: injection, pathological patterns, huge and odd values are a clear 4xx or a
literal match, never a 500 and never a query the client wrote."""

import pytest

from tests.support.factories import bearer


@pytest.fixture
def token(world):
    acme = world.organization("Acme")
    world.bot("plain", name="Plain Bot")
    world.bot("stars", name="a.*b (x) [y] $z ^w \\q +?")
    world.bot("unicode", name="Ünïcödé 日本語 🤖")
    world.bot("aaaa", name="a" * 60 + "!")
    world.bot("secret", organization=acme, is_public=False)
    return world.token(user=world.user("Mallory"))


def slugs(response):
    return [bot["slug"] for bot in response.get_json()["results"]]


@pytest.mark.parametrize(
    "query, parameter",
    [
        ("name[$ne]=x", "name[$ne]"),
        ("name[$regex]=.*", "name[$regex]"),
        ("$where=1", "$where"),
        ("sortBy=$where", "sortBy"),
        ("sortBy=name:$natural", "sortBy"),
        ("sortBy=isPublic", "sortBy"),
        ('tags=["5f0000000000000000000000"]', "tags"),
        ('serviceId={"$ne":null}', "serviceId"),
        ('custom={"$ne":false}', "custom"),
        ("limit=1e2", "limit"),
        ("limit=-1", "limit"),
        ("limit=%2B5", "limit"),
        ("page=99999999999999999999999999999", "page"),
        ("page=1.0", "page"),
        ("name=" + "x" * 201, "name"),
        ("name=a%00b", "name"),
        ("name=a%0Ab", "name"),
        ("tags=" + ",".join(["5f0000000000000000000000"] * 51), "tags"),
        ("name=a&name=b", "name"),
        ("page=１", "page"),
    ],
)
def test_injection_and_malformed_parameters_are_a_400_naming_the_parameter(
    client, token, query, parameter
):
    response = client.get(f"/v1/bots/?{query}", headers=bearer(token))

    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == 400
    assert parameter in body["details"]


@pytest.mark.parametrize(
    "name, expected",
    [
        ('{"$ne": null}', []),
        (".*", ["stars"]),
        ("a.*b (x) [y] $z ^w \\q +?", ["stars"]),
        ("(a+)+$", []),
        ("(a|aa)*!", []),
        ("ÜNÏCÖDÉ", ["unicode"]),
        ("日本", ["unicode"]),
        ("🤖", ["unicode"]),
        ("a" * 60 + "!", ["aaaa"]),
    ],
)
def test_name_is_matched_literally(client, token, name, expected):
    response = client.get("/v1/bots/", query_string={"name": name}, headers=bearer(token))

    assert response.status_code == 200
    assert slugs(response) == expected


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer",
        "Bearer ",
        "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
        "Token abc",
        "Bearer " + "x" * 10_000,
        "Bearer tök€n",
        "Bearer \x01\x02",
        'Bearer {"$ne": null}',
        "Bearer bcs_a bcs_b",
        "",
    ],
)
def test_malformed_authorization_is_a_401(client, token, authorization):
    response = client.get("/v1/bots/", headers={"Authorization": authorization})

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.get_json()["code"] == 401
    assert token not in response.get_data(as_text=True)


@pytest.mark.parametrize(
    "path",
    [
        "/v1/requests/%24ne/",
        "/v1/requests/..%2F..%2F/",
        "/v1/requests/5f000000000000000000000g/",
        "/v1/requests/5f00000000000000000000000/",
        "/v1/requests/" + "a" * 5000 + "/",
        "/v1/requests/日本/",
        "/v1/organizations/%7B%22%24ne%22%3Anull%7D/bots/",
        "/v1/organizations/null/requests/",
        "/v1/bots/%00/",
        "/v1/bots/" + "x" * 5000 + "/",
        "/v1/bots/secret%00/",
    ],
)
def test_odd_path_ids_are_a_404(client, token, path):
    response = client.get(path, headers=bearer(token))

    assert response.status_code == 404
    assert response.get_json()["code"] == 404
