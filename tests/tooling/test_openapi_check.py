"""The suite's own check of every response against the OpenAPI document
(tests/support/openapi_check.py) refuses what the document does not allow."""

import pytest

from tests.support.openapi_check import check, document_of


@pytest.fixture
def answer(offline_app):
    """A real 401 and the app's document, to spoil one thing at a time."""
    response = offline_app.test_client().get("/v1/bots/")
    assert response.status_code == 401
    return document_of(offline_app), response


@pytest.mark.parametrize(
    ("header", "value", "said"),
    [
        ("Cache-Control", "public", "is not one of"),
        ("X-Request-ID", "no spaces allowed", "does not match"),
        ("X-RateLimit-Limit", "many", "not an integer"),
        ("X-Powered-By", "Flask", "headers it does not declare"),
    ],
)
def test_a_header_the_document_does_not_allow_is_refused(answer, header, value, said):
    document, response = answer
    response.headers[header] = value

    with pytest.raises(AssertionError, match=said):
        check(document, response)


def test_a_body_the_document_does_not_allow_is_refused(answer):
    document, response = answer
    response.set_data(b'{"code": "401"}')

    with pytest.raises(AssertionError, match="does not allow"):
        check(document, response)


def test_the_answer_as_sent_passes(answer):
    check(*answer)
