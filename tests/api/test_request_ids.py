"""X-Request-ID: the caller's when sane, a fresh one otherwise, on every response."""

import re

import pytest

FRESH = re.compile(r"[0-9a-f]{32}")


@pytest.mark.parametrize(
    "given",
    ["abc", "a" * 128, "Trace-1_2.3:4", "0"],
)
def test_a_sane_request_id_is_echoed(offline_app, given):
    response = offline_app.test_client().get("/healthz", headers={"X-Request-ID": given})

    assert response.headers["X-Request-ID"] == given


@pytest.mark.parametrize(
    "given",
    ["", "a" * 129, "has space", "semi;colon", 'quote"', "é", "<script>", "a/b"],
)
def test_an_insane_request_id_is_replaced(offline_app, given):
    response = offline_app.test_client().get("/healthz", headers={"X-Request-ID": given})

    assert FRESH.fullmatch(response.headers["X-Request-ID"])


def test_each_request_without_an_id_gets_its_own(offline_app):
    client = offline_app.test_client()

    first = client.get("/healthz").headers["X-Request-ID"]
    second = client.get("/healthz").headers["X-Request-ID"]

    assert FRESH.fullmatch(first) and FRESH.fullmatch(second)
    assert first != second


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/v1/bots/", 401),
        ("GET", "/nowhere", 404),
        ("POST", "/v1/bots/", 405),
        ("GET", "/v1/bots/?limit=0", 401),
    ],
)
def test_errors_carry_the_request_id_too(offline_app, method, path, status):
    response = offline_app.test_client().open(
        path, method=method, headers={"X-Request-ID": "err-1"}
    )

    assert response.status_code == status
    assert response.headers["X-Request-ID"] == "err-1"
