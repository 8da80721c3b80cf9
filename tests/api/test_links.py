"""`Link` headers on every list (docs/api.md#paging-links): first, prev, next and last, as GitHub
sends them."""

from urllib.parse import parse_qsl, urlsplit

import mongomock
import pytest
from requests.utils import parse_header_links

from app import create_app
from tests.conftest import TEST_SETTINGS
from tests.support.factories import World, bearer


def _links(response) -> dict[str, str]:
    assert response.status_code == 200, response.get_json()
    return {link["rel"]: link["url"] for link in parse_header_links(response.headers["Link"])}


def _pages(links: dict[str, str]) -> dict[str, int]:
    return {rel: int(dict(parse_qsl(urlsplit(url).query))["page"]) for rel, url in links.items()}


@pytest.fixture
def setting(world):
    """23 public bots of Acme; Ada's 23 requests, in Acme."""
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    for number in range(23):
        bot = world.bot(f"b{number:02d}", name=f"Bot {number:02d}", organization=acme)
        world.bot_request(bot=bot, created_by=ada, organization=acme)
    return {
        "acme": acme,
        "token": world.token(user=ada),
        "org_token": world.token(organization=acme),
    }


def _lists(setting) -> list[tuple[str, str]]:
    acme = setting["acme"]
    return [
        ("/v1/bots/", setting["token"]),
        (f"/v1/organizations/{acme}/bots/", setting["org_token"]),
        ("/v1/requests/", setting["token"]),
        (f"/v1/organizations/{acme}/requests/", setting["org_token"]),
    ]


@pytest.mark.parametrize("which", range(4), ids=["bots", "org-bots", "requests", "org-requests"])
def test_following_next_from_page_one_sees_every_id_once(client, setting, which):
    path, token = _lists(setting)[which]
    url, seen, pages = f"http://localhost{path}?limit=4", [], 0
    while url:
        response = client.get(url, headers=bearer(token))
        links = _links(response)
        body = response.get_json()
        seen += [item["id"] for item in body["results"]]
        pages += 1
        url = links.get("next")
    assert pages == body["totalPages"] == 6
    assert len(seen) == len(set(seen)) == body["totalResults"] == 23


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=5", {"first": 1, "next": 2, "last": 5}),
        ("limit=5&page=1", {"first": 1, "next": 2, "last": 5}),
        ("limit=5&page=2", {"first": 1, "prev": 1, "next": 3, "last": 5}),
        ("limit=5&page=4", {"first": 1, "prev": 3, "next": 5, "last": 5}),
        ("limit=5&page=5", {"first": 1, "prev": 4, "last": 5}),
        ("limit=5&page=9", {"first": 1, "prev": 8, "last": 5}),
        ("limit=23", {"first": 1, "last": 1}),
        ("limit=100&page=2", {"first": 1, "prev": 1, "last": 1}),
        ("name=nothing", {"first": 1}),
        ("name=nothing&page=3", {"first": 1, "prev": 2}),
    ],
)
def test_which_links_a_page_has(client, setting, query, expected):
    response = client.get(f"/v1/bots/?{query}", headers=bearer(setting["token"]))
    assert _pages(_links(response)) == expected


def test_each_link_is_the_request_url_with_only_page_changed(client, setting):
    """Other parameters keep their order, encoded; an empty one stays; `page` keeps its place."""
    query = "sortBy=createdAt%3Adesc&name=b%C3%BB%20%26%2B%3D%3E%2C&page=2&limit=2&tags="
    response = client.get(f"/v1/bots/?{query}", headers=bearer(setting["token"]))
    links = _links(response)
    assert links == {
        rel: f"http://localhost/v1/bots/?{query.replace('page=2', f'page={page}')}"
        for rel, page in {"first": 1, "prev": 1}.items()
    }


def test_page_is_added_last_when_the_request_has_none(client, setting):
    path = f"/v1/organizations/{setting['acme']}/requests/"
    response = client.get(f"{path}?limit=10&sortBy=updatedAt", headers=bearer(setting["org_token"]))
    links = _links(response)
    assert links["next"] == f"http://localhost{path}?limit=10&sortBy=updatedAt&page=2"
    assert links["last"] == f"http://localhost{path}?limit=10&sortBy=updatedAt&page=3"


def test_the_header_reads_as_github_writes_it(client, setting):
    response = client.get("/v1/bots/?limit=10&page=2", headers=bearer(setting["token"]))
    assert response.headers["Link"] == ", ".join(
        f'<http://localhost/v1/bots/?limit=10&page={page}>; rel="{rel}"'
        for rel, page in [("first", 1), ("prev", 1), ("next", 3), ("last", 3)]
    )


def test_a_single_item_has_no_link(client, setting, world):
    world.bot("solo")
    response = client.get("/v1/bots/solo/", headers=bearer(setting["token"]))
    assert response.status_code == 200
    assert "Link" not in response.headers


def test_an_error_has_no_link(client, setting):
    response = client.get("/v1/bots/?page=0", headers=bearer(setting["token"]))
    assert response.status_code == 400
    assert "Link" not in response.headers


def test_the_links_are_absolute_on_the_requested_host(client, setting):
    response = client.get(
        "/v1/bots/?limit=5",
        base_url="http://api.example.com:8080",
        headers=bearer(setting["token"]),
    )
    assert _links(response)["next"] == "http://api.example.com:8080/v1/bots/?limit=5&page=2"


@pytest.mark.parametrize(("proxies", "scheme"), [(0, "http"), (1, "https")])
def test_behind_trusted_proxies_the_links_take_the_forwarded_scheme(proxies, scheme):
    client = mongomock.MongoClient()
    world = World(client.botcatalogue)
    token = world.token(user=world.user("Ada"))
    for number in range(3):
        world.bot(f"b{number}")
    app = create_app(
        {**TEST_SETTINGS, "TRUSTED_PROXIES": proxies, "MONGODB_DB": "botcatalogue"},
        mongo_client=client,
    )
    response = app.test_client().get(
        "/v1/bots/?limit=1",
        base_url="http://api.example.com",
        headers={**bearer(token), "X-Forwarded-Proto": "https"},
    )
    assert _links(response)["last"] == f"{scheme}://api.example.com/v1/bots/?limit=1&page=3"


def test_the_openapi_document_declares_link_on_every_list(offline_app):
    document = offline_app.test_client().get("/v1/openapi.json").get_json()
    for path, operations in document["paths"].items():
        success = operations["get"]["responses"]["200"]
        # An export (docs/api.md#exports): a file, no page.
        if "application/json" not in success["content"]:
            assert "Link" not in success["headers"], path
            continue
        schema = success["content"]["application/json"]["schema"]
        is_page = [branch["$ref"].endswith("Page") for branch in schema.get("oneOf", [])] == [
            True,
            True,
        ]
        assert ("Link" in success["headers"]) == is_page, path
    assert document["components"]["headers"]["LINK"]["schema"] == {"type": "string"}
