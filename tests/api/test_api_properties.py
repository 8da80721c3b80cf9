"""Property-based API testing: schemathesis generates requests from the app's own OpenAPI
document and checks, for every caller kind, that no response is a 5xx, that every response
conforms to its documented schema, and that errors carry the JSON error body."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from marshmallow import ValidationError
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app import create_app
from domain.errors import InvalidParameter
from schemas.bots import BotDetailSchema, BotSchema
from schemas.exports import OrganizationRequestExportQuerySchema
from schemas.queries import MAX_OFFSET
from schemas.query_fields import QueryTimestamp
from schemas.selection import names
from schemas.usage import OrganizationUsageQuerySchema
from tests.conftest import TEST_SETTINGS
from tests.support.factories import World
from web import export_files

MAX_EXAMPLES = 25


@pytest.fixture(scope="module", params=["mongomock", "wire"])
def populated_app(request):
    import mongomock
    import pymongo

    if request.param == "mongomock":
        client = mongomock.MongoClient()
    else:
        client = pymongo.MongoClient(request.getfixturevalue("wire_uri"))
    db = client[f"properties_{request.param}"]
    world = World(db)
    acme = world.organization("Acme")
    service = world.service()
    tag = world.tag("writing")
    member = world.user("Member", organizations=[acme])
    admin = world.user("Admin", role="admin")
    for index in range(12):
        bot = world.bot(
            f"bot-{index}",
            organization=acme if index % 3 == 0 else None,
            is_public=index % 2 == 0,
            service=service,
            tags=[tag],
        )
        world.bot_request(bot=bot, created_by=member, organization=acme if index % 2 else None)
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": db.name}, mongo_client=client)
    app.config["CALLER_TOKENS"] = {
        "member": world.token(user=member),
        "admin": world.token(user=admin),
        "organization": world.token(organization=acme),
        "anonymous": None,
    }
    yield app
    client.drop_database(db.name)
    client.close()


def _beyond_offset_bound(query: dict) -> bool:
    """`(page - 1) * limit` above the bound: a rule across two parameters, which OpenAPI
    cannot state, so schemathesis takes such a request for valid; the API refuses it."""
    try:
        page, limit = int(query.get("page", 1)), int(query.get("limit", 10))
    except (TypeError, ValueError):
        return False
    return (page - 1) * limit > MAX_OFFSET


def _unordered_period(query: dict) -> bool:
    """`createdFrom` not before `createdTo`: another rule across two parameters."""
    if not (query.get("createdFrom") and query.get("createdTo")):
        return False
    try:
        start, end = (
            QueryTimestamp().deserialize(query[key]) for key in ("createdFrom", "createdTo")
        )
    except ValidationError:
        return False
    return not start < end


def _unaccepted_usage_period(query: dict) -> bool:
    """`from` and `to` (usage) in order and at most 366 days apart, the defaults included:
    a rule across two parameters, which the usage tests check (tests/api/test_usage.py)."""
    if not ("from" in query or "to" in query):
        return False
    period = {key: query[key] for key in ("from", "to") if key in query}
    try:
        for value in period.values():
            QueryTimestamp().deserialize(value)
        OrganizationUsageQuerySchema().load(period)
    except ValidationError as error:
        return "to" in error.messages
    return False


def _unstated_paging(query: dict) -> bool:
    """A `cursor` is only ever one the service made (an opaque token no schema can generate),
    and `page` does not go with keyset paging: rules the paging tests check
    (tests/api/test_keyset.py)."""
    keyset = "cursor" in query or query.get("pagination") == "keyset"
    return "cursor" in query or (keyset and "page" in query)


def _unstated_export(app, case) -> bool:
    """An export's period (at most 366 days, by default the 30 before now) and its `fields`
    (the item's names in NDJSON, the columns in CSV, as `format` or `Accept` says): rules
    across parameters and headers, which tests/api/test_exports.py checks."""
    if not case.operation.path.endswith("/export"):
        return False
    with app.test_request_context(headers=case.headers or {}):
        try:
            export_files.negotiated(OrganizationRequestExportQuerySchema().load(case.query or {}))
        except ValidationError as error:
            return bool({"createdTo", "fields"} & set(error.messages))
        except InvalidParameter as error:
            return error.parameter == "fields"
    return False


_ADMIN_FIELDS = set(names(BotDetailSchema)) - set(names(BotSchema))


def _selection_by_caller(query: dict) -> bool:
    """4.7's `fields` with a name of the admin view: a 200 for an admin, a 400 for anyone
    else (tests/api/test_fields.py); the document states the names of the widest view."""
    return bool(set(str(query.get("fields", "")).split(",")) & _ADMIN_FIELDS)


@pytest.mark.slow
def test_api_conforms_to_its_openapi_document(populated_app):
    """Every operation of the document, each generated request sent once per caller kind.

    schemathesis' pytest plugin does not run under this pytest, so its hypothesis strategies
    are driven directly.
    """
    schema = schemathesis.openapi.from_wsgi("/v1/openapi.json", populated_app)
    tokens = populated_app.config["CALLER_TOKENS"].values()

    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.endswith("/feed"):
            continue  # an endless stream, or a 503 without change streams: tests/*/test_feeds.py

        @given(case=operation.as_strategy())
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def conforms(case):
            query = case.query or {}
            unstated = (
                _beyond_offset_bound(query)
                or _unordered_period(query)
                or _unaccepted_usage_period(query)
                or _unstated_paging(query)
                or _unstated_export(populated_app, case)
            )
            by_caller = _selection_by_caller(query)
            excluded = [positive_data_acceptance] if unstated or by_caller else []
            for token in tokens:
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                response = case.call_and_validate(headers=headers, excluded_checks=excluded)
                assert response.status_code < 500
                if unstated and token:
                    assert response.status_code in {400, 403}, case.query
                if response.status_code >= 400:
                    body = response.json()
                    assert body["code"] == response.status_code
                    assert isinstance(body["message"], str)

        conforms()
