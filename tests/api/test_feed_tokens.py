"""A browser's `EventSource` sends no header: the live feeds take the token as the
`access_token` query parameter too (docs/api.md#live-feed), and no other endpoint does."""

import logging

import mongomock

from tests.support.checks import assert_bad_parameters, assert_error
from tests.support.factories import bearer


def _opened(db) -> int:
    """A feed that opened: on mongomock, which runs no change stream, the 503 that says so
    (after authentication, which would have been a 401)."""
    return 503 if isinstance(db.client, mongomock.MongoClient) else 200


def test_a_feed_takes_its_token_from_the_query_and_logs_none(client, db, world, caplog, json_log):
    acme = world.organization("Acme")
    token = world.token(user=world.user("Ada", organizations=[acme]))
    caplog.set_level(logging.DEBUG)

    statuses = []
    for path in ("/v1/requests/feed", f"/v1/organizations/{acme}/requests/feed"):
        response = client.get(f"{path}?access_token={token}", buffered=False)
        statuses.append(response.status_code)
        response.close()  # an open feed streams until its client leaves
    refused = client.get(f"/v1/requests/feed?access_token={token}x")

    assert statuses == [_opened(db)] * 2
    assert_error(refused, 401)
    for text in caplog.text, str(json_log()):
        assert token not in text


def test_a_token_in_the_header_and_the_query_is_a_400(client, world):
    token = world.token(user=world.user("Ada"))

    response = client.get(f"/v1/requests/feed?access_token={token}", headers=bearer(token))

    assert_bad_parameters(response, "access_token")
    assert "not both" in response.get_json()["details"]["access_token"][0]
    assert token not in response.get_data(as_text=True)


def test_no_other_endpoint_takes_a_token_in_the_query(client, world):
    token = world.token(user=world.user("Ada"))

    unauthenticated = client.get(f"/v1/requests/?access_token={token}")
    unknown = client.get(f"/v1/requests/?access_token={token}", headers=bearer(token))

    assert_error(unauthenticated, 401)
    assert_bad_parameters(unknown, "access_token")
    assert unknown.get_json()["details"] == {"access_token": ["Unknown parameter."]}


def test_another_schemes_header_beside_the_query_token_is_not_a_conflict(client, db, world):
    """A browser behind a proxy's basic authentication sends its `Authorization: Basic`
    with every request, an EventSource's too."""
    token = world.token(user=world.user("Ada"))
    basic = {"Authorization": "Basic dXNlcjpwYXNz"}

    response = client.get(f"/v1/requests/feed?access_token={token}", headers=basic, buffered=False)
    response.close()

    assert response.status_code == _opened(db)
