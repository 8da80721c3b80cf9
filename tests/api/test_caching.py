"""Strong ETags on every 200, 304 on a matching If-None-Match, private no-cache everywhere."""

import pytest

from tests.support.factories import bearer


@pytest.fixture
def reader(world):
    acme = world.organization("Acme")
    world.bot("public-bot")
    return world.token(user=world.user("Ada", organizations=[acme]))


def test_a_200_carries_a_strong_etag(client, reader):
    response = client.get("/v1/bots/", headers=bearer(reader))

    assert response.status_code == 200
    etag = response.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    assert response.headers["Cache-Control"] == "private, no-cache"


def test_if_none_match_with_the_etag_gives_an_empty_304(client, reader):
    first = client.get("/v1/bots/", headers=bearer(reader))

    again = client.get(
        "/v1/bots/", headers={**bearer(reader), "If-None-Match": first.headers["ETag"]}
    )

    assert again.status_code == 304
    assert again.data == b""
    assert again.headers["ETag"] == first.headers["ETag"]
    assert again.headers["Cache-Control"] == "private, no-cache"
    assert again.headers["X-Request-ID"]


def test_the_app_leaves_date_to_the_server(client, reader):
    """gunicorn writes it on every answer and drops an app's own (tests/deployment/
    test_http_lint.py checks it is there); Flask's development server would send two."""
    first = client.get("/v1/bots/", headers=bearer(reader))
    again = client.get(
        "/v1/bots/", headers={**bearer(reader), "If-None-Match": first.headers["ETag"]}
    )

    assert [first.status_code, again.status_code] == [200, 304]
    assert "Date" not in first.headers and "Date" not in again.headers


def test_a_stale_etag_gets_the_new_body(client, world, reader):
    first = client.get("/v1/bots/", headers=bearer(reader))
    world.bot("another-bot")

    again = client.get(
        "/v1/bots/", headers={**bearer(reader), "If-None-Match": first.headers["ETag"]}
    )

    assert again.status_code == 200
    assert again.headers["ETag"] != first.headers["ETag"]
    assert again.get_json()["totalResults"] == 2


def test_the_etag_follows_the_body_not_the_request(client, reader):
    """Two requests with different ids but the same answer share the tag."""
    one = client.get("/v1/bots/", headers={**bearer(reader), "X-Request-ID": "one"})
    two = client.get("/v1/bots/", headers={**bearer(reader), "X-Request-ID": "two"})

    assert one.headers["ETag"] == two.headers["ETag"]


def test_errors_get_no_etag_but_the_cache_policy(client):
    response = client.get("/v1/bots/")

    assert response.status_code == 401
    assert "ETag" not in response.headers
    assert response.headers["Cache-Control"] == "private, no-cache"


@pytest.mark.parametrize("path", ["/healthz", "/v1/openapi.json", "/docs"])
def test_unauthenticated_pages_are_conditional_too(offline_app, path):
    client = offline_app.test_client()
    first = client.get(path)

    again = client.get(path, headers={"If-None-Match": first.headers["ETag"]})

    assert first.status_code == 200
    assert again.status_code == 304
    assert again.data == b""
