"""One JSON log line per request, never a secret; every 500 logged with its request id."""

import logging

import pytest

from repositories.bots import BotRepository
from tests.support.checks import problem_checked
from tests.support.factories import bearer

REQUEST_LOGGER = "bot_catalogue.requests"


def _lines(json_log) -> list[dict]:
    return [line for line in json_log() if line["logger"] == REQUEST_LOGGER]


def test_one_line_per_request_with_who_what_and_how(client, world, json_log):
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    token = world.token(user=ada)

    response = client.get(
        "/v1/bots/?name=hush-hush&limit=5", headers={**bearer(token), "X-Request-ID": "r-1"}
    )

    assert response.status_code == 200
    [line] = _lines(json_log)
    assert line["requestId"] == "r-1"
    assert line["method"] == "GET"
    assert line["path"] == "/v1/bots/"
    assert line["query"] == ["limit", "name"]
    assert line["status"] == 200
    assert isinstance(line["durationMs"], float) and line["durationMs"] >= 0
    assert line["callerKind"] == "user"
    assert line["callerId"] == str(ada)
    assert line["clientAddress"] == "127.0.0.1"
    assert line["time"].endswith("+00:00")


def test_no_token_nor_query_value_reaches_the_log(client, world, caplog, json_log):
    token = world.token(organization=world.organization("Acme"))
    caplog.set_level(logging.DEBUG)

    client.get("/v1/bots/?name=hush-hush", headers=bearer(token))
    client.get("/v1/requests/", headers=bearer(token))
    client.get(f"/v1/bots/?access_token={token}")
    client.get("/v1/bots/", headers=bearer(token + "x"))

    assert len(_lines(json_log)) == 4
    for text in caplog.text, str(json_log()):
        assert token not in text
        assert "hush-hush" not in text
    assert [line["callerKind"] for line in _lines(json_log)] == [
        "organization",
        "organization",
        None,
        None,
    ]
    assert [line["status"] for line in _lines(json_log)] == [200, 403, 401, 401]


def test_unmatched_routes_and_rejected_methods_are_logged(offline_app, json_log):
    client = offline_app.test_client()

    client.get("/nowhere")
    client.delete("/v1/bots/")

    assert [(line["path"], line["status"]) for line in _lines(json_log)] == [
        ("/nowhere", 404),
        ("/v1/bots/", 405),
    ]


@pytest.fixture
def failing_app(app, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("internal detail: collection botz is gone")

    monkeypatch.setattr(BotRepository, "find_page", explode)
    app.config["PROPAGATE_EXCEPTIONS"] = False
    return app


def test_a_500_is_logged_with_its_traceback_and_request_id(failing_app, world, caplog, json_log):
    token = world.token(user=world.user("Ada"))

    response = failing_app.test_client().get(
        "/v1/bots/", headers={**bearer(token), "X-Request-ID": "boom-42"}
    )

    assert response.status_code == 500
    assert problem_checked(response.get_json()) == {
        "code": 500,
        "message": "The server encountered an internal error.",
    }
    assert response.headers["X-Request-ID"] == "boom-42"
    [error] = [record for record in caplog.records if record.levelno == logging.ERROR]
    assert error.exc_info and error.exc_info[0] is RuntimeError
    [error_line] = [line for line in json_log() if line["level"] == "ERROR"]
    assert error_line["requestId"] == "boom-42"
    assert "collection botz is gone" in error_line["traceback"]
    [line] = _lines(json_log)
    assert (line["requestId"], line["status"]) == ("boom-42", 500)
    assert token not in caplog.text and token not in str(json_log())
