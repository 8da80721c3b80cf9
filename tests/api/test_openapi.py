"""The OpenAPI document: valid, and complete for every route the app serves."""

import json
import re
from unittest.mock import ANY

import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate

# Routes that serve the documentation itself rather than the API, and `/mcp`, whose
# messages MCP describes (`tools/list`; docs/decisions/2026-11-29-agents-over-mcp.md).
DOCUMENTATION_ENDPOINTS = re.compile(r"^(api-docs|docs_assets|agents)\.")

ERROR_REF = {"$ref": "#/components/schemas/Error"}


@pytest.fixture
def document(offline_app):
    response = offline_app.test_client().get("/v1/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def _openapi_path(rule) -> str:
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)


def _operations(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                yield path, method, operation


def _resolve(document, node: dict) -> dict:
    while "$ref" in node:
        section, name = node["$ref"].split("/")[-2:]
        node = document["components"][section][name]
    return node


def test_document_is_valid_openapi_3(document):
    validate(document)
    assert document["openapi"].startswith("3.")


def test_document_needs_no_token(offline_app):
    assert offline_app.test_client().get("/v1/openapi.json").status_code == 200


def _undocumented(app) -> set[tuple[str, str]]:
    document = app.test_client().get("/v1/openapi.json").get_json()
    served = {
        (_openapi_path(rule), method.lower())
        for rule in app.url_map.iter_rules()
        if not DOCUMENTATION_ENDPOINTS.match(rule.endpoint)
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    return served - {(path, method) for path, method, _ in _operations(document)}


def test_every_route_is_documented(offline_app, document):
    assert _undocumented(offline_app) == set()
    assert {"/healthz", "/readyz", "/v1/bots/{slug}/"} <= document["paths"].keys()


def test_a_route_without_documentation_is_caught(offline_app):
    offline_app.add_url_rule("/v1/secret/<int:n>", "secret", lambda n: "")
    assert _undocumented(offline_app) == {("/v1/secret/{n}", "get")}


DOWNLOADS = {"/v1/requests/export", "/v1/organizations/{organization_id}/requests/export"}
FEEDS = {"/v1/requests/feed", "/v1/organizations/{organization_id}/requests/feed"}


def test_every_operation_has_a_summary_a_schema_and_the_shared_responses(document):
    for path, _, operation in _operations(document):
        assert operation.get("summary"), path
        ok = operation["responses"]["200"]
        header_parameters = {
            _resolve(document, parameter)["name"] for parameter in operation["parameters"]
        }
        assert {"X-Request-ID", "Cache-Control"} <= ok["headers"].keys(), path
        assert {"405", "default"} <= operation["responses"].keys(), path
        assert "X-Request-ID" in header_parameters, path
        if path in DOWNLOADS | FEEDS:
            continue
        assert ok["content"]["application/json"]["schema"], path
        assert "ETag" in ok["headers"] and "304" in operation["responses"], path
        assert "content" not in _resolve(document, operation["responses"]["304"])
        assert "If-None-Match" in header_parameters, path


def test_an_export_is_a_streamed_file_without_etag(document):
    """docs/api.md#exports: NDJSON or CSV, as an attachment; a streamed body has no ETag: no 304."""
    for path in DOWNLOADS:
        operation = document["paths"][path]["get"]
        ok = operation["responses"]["200"]
        assert ok["content"] == {
            media_type: {"schema": {"type": "string"}}
            for media_type in ("application/x-ndjson", "text/csv")
        }
        assert "Content-Disposition" in ok["headers"] and "ETag" not in ok["headers"]
        assert "304" not in operation["responses"]
        names = {parameter.get("name") for parameter in operation["parameters"]}
        assert {"format", "fields", "sortBy", "createdFrom", "createdTo"} <= names
        assert not {"page", "limit", "cursor", "If-None-Match"} & names


def test_a_feed_is_an_event_stream_without_etag(document):
    """docs/api.md#live-feed: `text/event-stream`, not a file; resumed by `lastEventId` (or the
    `Last-Event-ID` header, which an `EventSource` sends), 410 when its history is gone."""
    for path in FEEDS:
        operation = document["paths"][path]["get"]
        ok = operation["responses"]["200"]
        assert ok["content"] == {"text/event-stream": {"schema": {"type": "string"}}}
        assert not {"Content-Disposition", "ETag"} & ok["headers"].keys()
        assert {"410", "429", "503"} <= operation["responses"].keys()
        assert "304" not in operation["responses"]
        parameters = [*document["paths"][path].get("parameters", []), *operation["parameters"]]
        names = {parameter.get("name") for parameter in parameters}
        assert {"bot", "fields", "lastEventId", "Last-Event-ID"} <= names
        assert not {"page", "limit", "cursor", "sortBy", "If-None-Match"} & names
        [header] = [p for p in parameters if p.get("name") == "Last-Event-ID"]
        assert header["in"] == "header" and header["schema"]["type"] == "string"


def test_every_operation_has_a_unique_operation_id_and_a_description(document):
    operation_ids = [operation["operationId"] for _, _, operation in _operations(document)]
    assert len(operation_ids) == len(set(operation_ids))
    assert all(re.fullmatch("[a-z][a-zA-Z]+", operation_id) for operation_id in operation_ids)
    for path, _, operation in _operations(document):
        assert operation["description"].strip(), path
        assert operation["description"] != operation["summary"], path


def test_tags_are_described_and_servers_given(document):
    tags = {tag["name"]: tag["description"] for tag in document["tags"]}
    assert all(tags.values())
    for path, _, operation in _operations(document):
        assert len(operation["tags"]) == 1 and operation["tags"][0] in tags, path
    assert document["servers"] == [{"url": "/", "description": ANY}]


def test_path_parameters_are_described(document):
    for path, item in document["paths"].items():
        for parameter in item.get("parameters", []):
            assert parameter["description"], (path, parameter["name"])


def test_nullable_summaries_are_their_schema_or_null(document):
    """JSON Schema's null beside the reference (OpenAPI 3.1), which generated clients read as
    an optional summary rather than a shapeless object."""
    properties = document["components"]["schemas"]["BotRequest"]["properties"]
    assert properties["bot"] == {
        "anyOf": [{"$ref": "#/components/schemas/BotSummary"}, {"type": "null"}]
    }
    validator = OAS31Validator({**properties["bot"], "components": document["components"]})
    assert validator.is_valid(None) and not validator.is_valid({"other": "object"})


def test_fields_of_stored_documents_are_nullable_or_free(document):
    """Another writer may leave out any key, which dumps as null; free-form content has no
    type, so that a value of any type is documented. OpenAPI 3.1 has no `nullable`: null is
    one of a JSON Schema type list."""
    schemas = document["components"]["schemas"]
    assert schemas["Bot"]["properties"]["name"] == {"type": ["string", "null"]}
    assert schemas["Bot"]["properties"]["creditCost"] == {"type": ["number", "null"]}
    assert "type" not in schemas["BotRequest"]["properties"]["response"]
    assert '"nullable"' not in json.dumps(document)


def test_errors_carry_the_error_schema(document):
    for path, _, operation in _operations(document):
        for status, response in operation["responses"].items():
            if status not in ("200", "304"):
                content = _resolve(document, response)["content"]["application/json"]
                assert content["schema"] == ERROR_REF, (path, status)


@pytest.mark.parametrize(
    ("path", "statuses"),
    [
        ("/v1/bots/", {"400", "401", "429", "503"}),
        ("/v1/bots/{slug}/", {"401", "404", "429", "503"}),
        ("/v1/organizations/{organization_id}/bots/", {"400", "401", "403", "404", "429"}),
        ("/v1/organizations/{organization_id}/bots/{slug}/", {"401", "403", "404", "429"}),
        ("/v1/requests/", {"400", "401", "403", "429", "503"}),
        ("/v1/requests/{bot_request_id}/", {"401", "403", "404", "429"}),
        ("/v1/organizations/{organization_id}/requests/", {"400", "401", "403", "404"}),
        (
            "/v1/organizations/{organization_id}/requests/{bot_request_id}/",
            {"401", "403", "404", "429"},
        ),
        ("/readyz", {"503"}),
    ],
)
def test_each_operation_documents_its_errors(document, path, statuses):
    assert statuses <= document["paths"][path]["get"]["responses"].keys()


def test_authenticated_operations_use_the_bearer_scheme(document):
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert scheme == {**scheme, "type": "http", "scheme": "bearer"}
    in_query = document["components"]["securitySchemes"]["queryToken"]
    assert in_query == {**in_query, "type": "apiKey", "in": "query", "name": "access_token"}
    for path, _, operation in _operations(document):
        if path.endswith("/feed"):
            # A browser's EventSource sends no header (docs/api.md#live-feed).
            assert operation["security"] == [{"bearerAuth": []}, {"queryToken": []}], path
        elif path.startswith("/v1/"):
            assert operation["security"] == [{"bearerAuth": []}], path
        else:
            assert operation["security"] == [], path
            assert "401" not in operation["responses"], path


def test_every_operation_that_uses_the_database_documents_503_with_retry_after(document):
    """Each looks its token up (or pings, for /readyz) under a database permit: a stalled or
    busy database, or admission control, may answer 503."""
    checked = set()
    for path, _, operation in _operations(document):
        if {"bearerAuth": []} in operation.get("security", []) or path == "/readyz":
            unavailable = _resolve(document, operation["responses"]["503"])
            assert "Retry-After" in unavailable["headers"], path
            checked.add(path)
    assert {"/v1/bots/", "/v1/usage/", "/readyz"} <= checked


def test_probes_are_not_rate_limited_so_document_no_429(document):
    for path in ("/healthz", "/readyz"):
        assert "429" not in document["paths"][path]["get"]["responses"]
    assert "503" not in document["paths"]["/healthz"]["get"]["responses"]


def test_rate_limit_and_auth_responses_document_their_headers(document):
    responses = document["components"]["responses"]
    assert {"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} <= (
        responses["TOO_MANY_REQUESTS"]["headers"].keys()
    )
    assert "WWW-Authenticate" in responses["UNAUTHORIZED"]["headers"]
    assert "Allow" in responses["METHOD_NOT_ALLOWED"]["headers"]


def _query_parameters(document, path):
    return {
        parameter["name"]: parameter
        for parameter in document["paths"][path]["get"].get("parameters", [])
        if parameter.get("in") == "query"
    }


def test_every_query_parameter_is_typed(document):
    for path, _, operation in _operations(document):
        for parameter in operation.get("parameters", []):
            if parameter.get("in") == "query":
                assert parameter["schema"].get("type") in {"string", "integer", "boolean"}, (
                    path,
                    parameter["name"],
                )


def test_paging_parameters_have_ranges_and_defaults(document):
    for path in ("/v1/bots/", "/v1/requests/"):
        parameters = _query_parameters(document, path)
        assert parameters["limit"]["schema"] == {
            "type": "integer",
            "default": 10,
            "minimum": 1,
            "maximum": 100,
        }
        # No default: a generated client would send it with keyset pages, which take none.
        assert parameters["page"]["schema"] == {"type": "integer", "minimum": 1}
        assert parameters["cursor"]["schema"]["maxLength"] == 512
        assert parameters["count"]["schema"]["enum"] == ["exact", "none"]
        assert parameters["pagination"]["schema"]["enum"] == ["offset", "keyset"]


def test_query_fields_are_documented_in_their_query_syntax(document):
    bots = _query_parameters(document, "/v1/bots/")
    sort = bots["sortBy"]["schema"]
    assert (sort["type"], sort["default"]) == ("string", "name:asc")
    sort_syntax = re.compile(sort["pattern"])
    assert sort_syntax.fullmatch("creditCost:DESC,name,slug:asc")
    for refused in ("name,name:desc", "name:up", "isPublic", "", "name,"):
        assert not sort_syntax.fullmatch(refused), refused
    assert bots["custom"]["schema"] == {"type": "boolean", "default": False}
    name = bots["name"]["schema"]
    assert (name["type"], name["maxLength"]) == ("string", 200)
    assert re.fullmatch(name["pattern"], "Ünïcödé (x) [y] .*")
    assert not re.fullmatch(name["pattern"], "a\nb")
    assert not re.fullmatch(name["pattern"], "a\x00b")
    assert bots["serviceId"]["schema"]["pattern"] == "^[0-9a-fA-F]{24}$"
    tags = re.compile(bots["tags"]["schema"]["pattern"])
    assert tags.fullmatch(",".join(["a" * 24] * 50))
    assert not tags.fullmatch(",".join(["a" * 24] * 51))
    requests = _query_parameters(document, "/v1/requests/")
    assert requests["sortBy"]["schema"]["default"] == "createdAt:desc"


def test_custom_response_fields_are_mapped_to_openapi_types(document):
    schemas = document["components"]["schemas"]
    # Another writer's ids need not be ObjectIds: no pattern is promised for them.
    assert schemas["Bot"]["properties"]["id"] == {"type": "string", "description": ANY}
    assert schemas["Bot"]["properties"]["id"]["description"].startswith("Usually 24")
    assert schemas["BotRequest"]["properties"]["createdAt"]["type"] == ["string", "null"]
    assert schemas["BotRequest"]["properties"]["createdAt"]["format"] == "date-time"
    assert schemas["Bot"]["properties"]["creditCost"]["type"] == ["number", "null"]


def test_one_bot_is_either_the_detailed_or_the_public_view(document):
    schema = document["paths"]["/v1/bots/{slug}/"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]["schema"]
    # Either may match a selection of public fields (docs/api.md#field-selection): anyOf, not oneOf.
    assert schema == {
        "anyOf": [
            {"$ref": "#/components/schemas/BotDetail"},
            {"$ref": "#/components/schemas/Bot"},
        ]
    }
    detail = document["components"]["schemas"]["BotDetail"]["properties"]
    assert {"isPublic", "service", "tags", "createdAt"} <= detail.keys()
    assert "isPublic" not in document["components"]["schemas"]["Bot"]["properties"]


def test_every_endpoint_documents_its_field_selection(document):
    """docs/api.md#field-selection: `fields` on the eight endpoints, its names those of the item's
    widest view; an item requires only its `id`, which every selection holds."""
    operations = [
        item["get"]
        for path, item in document["paths"].items()
        if path.startswith("/v1/") and "usage" not in path
    ]
    # And the two exports (docs/api.md#exports) and the two feeds (docs/api.md#live-feed).
    assert len(operations) == 12
    for operation in operations:
        [fields] = [p for p in operation["parameters"] if p.get("name") == "fields"]
        assert fields["in"] == "query" and "`id` always" in fields["description"]
        assert re.fullmatch(fields["schema"]["pattern"], "id,name") or re.fullmatch(
            fields["schema"]["pattern"], "id,ip"
        ), operation["operationId"]
    schemas = document["components"]["schemas"]
    for name in ("BotRequest", "Bot", "BotDetail", "OrganizationBotListItem"):
        assert schemas[name]["required"] == ["id"], name


def test_probes_are_documented(document):
    for path in ("/healthz", "/readyz"):
        ok = document["paths"][path]["get"]["responses"]["200"]
        assert ok["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Status"
        }


def test_path_ids_are_documented_as_whole_ids(document):
    parameters = document["paths"][
        "/v1/organizations/{organization_id}/requests/{bot_request_id}/"
    ]["parameters"]
    for parameter in parameters:
        pattern = re.compile(parameter["schema"]["pattern"])
        assert pattern.search("a" * 24)
        assert not pattern.search("a" * 25), parameter["name"]


def test_every_operation_that_answers_a_page_declares_its_links_and_cursor(document):
    """A page is sent by `Blueprint.list_response` alone, which declares both; a page schema
    given to a plain `response` would send neither the `Link` header nor the cursor."""
    listing = []
    for path, _, operation in _operations(document):
        success = operation["responses"].get("200", {})
        schema = success.get("content", {}).get("application/json", {}).get("schema", {})
        pages = [ref["$ref"].rsplit("/", 1)[-1] for ref in schema.get("oneOf", [])]
        if any(name.endswith("KeysetPage") for name in pages):
            listing.append(path)
            assert "Link" in success["headers"], path
            assert {"cursor", "pagination", "fields"} <= _query_parameters(document, path).keys()
    assert len(listing) == 4
