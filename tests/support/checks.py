"""Assertions on the error body that every error shares (docs/api.md, Errors)."""


def assert_error(response, status: int) -> dict:
    """A JSON `{"code", "message"}` body with this status; returns the body."""
    assert response.status_code == status, response.get_json()
    assert response.content_type == "application/json"
    body = response.get_json()
    assert set(body) == {"code", "message"}
    assert body["code"] == status
    assert isinstance(body["message"], str) and body["message"].endswith(".")
    return body


def assert_bad_parameters(response, *parameters: str) -> None:
    """A 400 whose `details` name exactly these parameters, each with readable messages."""
    assert response.status_code == 400, response.get_json()
    assert response.content_type == "application/json"
    body = response.get_json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == 400 and body["message"]
    assert set(body["details"]) == set(parameters)
    for messages in body["details"].values():
        assert messages and all(isinstance(text, str) and text for text in messages)
