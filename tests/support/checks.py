"""Assertions on the error body that every error shares (docs/api.md, Errors)."""

from web.errors import PROBLEM_TYPES

PROBLEM_MEMBERS = {"type", "title", "status", "detail", "instance"}


def problem_checked(body: dict, request_id: str | None = None) -> dict:
    """The body's own members (`code`, `message`, `details`), once its RFC 9457 members are
    checked to agree with them; `instance` names `request_id` when given."""
    assert PROBLEM_MEMBERS <= set(body), body
    assert body["type"].startswith(PROBLEM_TYPES) and body["type"] != PROBLEM_TYPES
    assert isinstance(body["title"], str) and body["title"]
    assert body["status"] == body["code"] and body["detail"] == body["message"]
    assert body["instance"].startswith("urn:request:")
    if request_id is not None:
        assert body["instance"] == f"urn:request:{request_id}"
    return {key: value for key, value in body.items() if key not in PROBLEM_MEMBERS}


def assert_error(response, status: int) -> dict:
    """A JSON `{"code", "message"}` body with this status; returns the body."""
    assert response.status_code == status, response.get_json()
    assert response.content_type == "application/json"
    body = problem_checked(response.get_json(), response.headers["X-Request-ID"])
    assert set(body) == {"code", "message"}
    assert body["code"] == status
    assert isinstance(body["message"], str) and body["message"].endswith(".")
    return body


def assert_bad_parameters(response, *parameters: str) -> None:
    """A 400 whose `details` name exactly these parameters, each with readable messages."""
    assert response.status_code == 400, response.get_json()
    assert response.content_type == "application/json"
    body = problem_checked(response.get_json(), response.headers["X-Request-ID"])
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == 400 and body["message"]
    assert set(body["details"]) == set(parameters)
    for messages in body["details"].values():
        assert messages and all(isinstance(text, str) and text for text in messages)
