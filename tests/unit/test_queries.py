"""The query schemas load into the repositories' own query objects, field by field; a list's
field selection stays beside its query (`Listing`), for the answer alone.

A schema field and a repository field are tied by name only where the query object is built,
so a rename on either side must fail here rather than drop a filter without a word.
"""

import dataclasses

import pytest
from flask import Flask

from repositories.bot_requests import BotRequestListQuery
from repositories.bots import BotListQuery
from repositories.usage import UsageQuery
from schemas.queries import (
    BotItemQuerySchema,
    BotListQuerySchema,
    BotRequestListQuerySchema,
    OrganizationBotListQuerySchema,
    OrganizationBotRequestListQuerySchema,
)
from schemas.usage import OrganizationUsageQuerySchema, UsageQuerySchema
from web.blueprint import QueryParser

ID = "0123456789abcdef01234567"
# A value for every parameter of every list and usage query.
GIVEN = {
    "page": "2",
    "limit": "5",
    "sortBy": "updatedAt:asc",
    "name": "text",
    "tags": ID,
    "custom": "true",
    "service": "text",
    "serviceId": ID,
    "serviceSlug": "text",
    "serviceDirectory": "text",
    "bot": "text",
    "createdFrom": "2026-01-01",
    "createdTo": "2026-01-02",
    "createdBy": ID,
    "from": "2026-01-01",
    "to": "2026-01-02",
    "groupBy": "day",
    "pagination": "offset",
    "count": "none",
    "fields": "id",
}
# A cursor is made by a page of its own list and order: tests/api/test_keyset.py.
NEEDS_A_REQUEST = {"cursor"}
# What the answer keeps and the repository never reads.
SELECTION = "fields"
# What a repository query holds that no parameter gives: the stored paths a list reads.
DERIVED = {BotListQuery: {"reads"}, BotRequestListQuery: {"reads", "whole"}}
# Each repository query, with the schemas that build it, the widest first.
FAMILIES = [
    (BotListQuery, [BotListQuerySchema, OrganizationBotListQuerySchema]),
    (BotRequestListQuery, [OrganizationBotRequestListQuerySchema, BotRequestListQuerySchema]),
    (UsageQuery, [OrganizationUsageQuerySchema, UsageQuerySchema]),
]


@pytest.mark.parametrize(
    ("built", "schema"), [(built, schema) for built, schemas in FAMILIES for schema in schemas]
)
def test_every_parameter_reaches_its_field_of_the_repositorys_query(built, schema):
    schema = schema()
    parameters = {
        field.data_key or name: name
        for name, field in schema.fields.items()
        if name not in NEEDS_A_REQUEST
    }
    loaded = schema.load({parameter: GIVEN[parameter] for parameter in parameters})
    defaults = schema.load({})
    if SELECTION in parameters.values():
        assert (loaded.selection, defaults.selection) == ({"id"}, None)
        loaded, defaults = loaded.query, defaults.query

    assert type(loaded) is built
    for name in set(parameters.values()) - {SELECTION}:
        assert getattr(loaded, name) not in (None, getattr(defaults, name)), name


def test_every_field_of_a_repository_query_is_some_parameter():
    for built, schemas in FAMILIES:
        widest = schemas[0]()
        derived = DERIVED.get(built, set())
        parameters = set(widest.fields) - {SELECTION}
        assert {field.name for field in dataclasses.fields(built)} == {*parameters, *derived}


BOT_REQUEST_VIEW = {"inputs", "ip", "response", "createdAt", "updatedAt"}
SUMMARIES = {"bot.creditCost", "bot.name", "bot.slug", "createdBy.name", "organization.name"}


@pytest.mark.parametrize(
    ("schema", "view", "selection", "selected"),
    [
        (
            BotListQuerySchema,
            {"slug", "name", "description", "creditCost", "modelKey", "applyToApi", "inputs"},
            "id,slug",
            {"_id", "slug"},
        ),
        (
            OrganizationBotListQuerySchema,
            {"slug", "name", "description", "creditCost", "modelKey", "applyToApi", "inputs",
             "organization"},
            "organizationId",
            {"_id", "organization"},
        ),
        (
            BotRequestListQuerySchema,
            BOT_REQUEST_VIEW | SUMMARIES,
            "bot,ip",
            {"_id", "bot.creditCost", "bot.name", "bot.slug", "ip"},
        ),
    ],
)  # fmt: skip
def test_a_list_reads_the_stored_paths_of_its_view_or_selection(schema, view, selection, selected):
    """Stored names, not the answer's (`id` is `_id`, `organizationId` is `organization`),
    and a summary's own fields."""
    assert schema().load({}).query.reads == {"_id", *view}
    assert schema().load({"fields": selection}).query.reads == selected


def _counting_loads(schema):
    loads = []
    original = schema.load

    def load(*args, **kwargs):
        loads.append(args)
        return original(*args, **kwargs)

    schema.load = load
    return loads


@pytest.mark.parametrize("query_string", ["", "fields=name"])
def test_an_empty_query_string_of_a_schema_that_loads_it_alike_is_loaded_once(query_string):
    """web/blueprint.py: the single items and the lists load the same empty query every time,
    so the parser keeps that load; a query string that says something is loaded each time."""
    parser, schema = QueryParser(unknown=None), BotItemQuerySchema()
    loads = _counting_loads(schema)
    app = Flask(__name__)

    answers = []
    for _ in range(3):
        with app.test_request_context(f"/v1/bots/a/?{query_string}"):
            answers.append(parser.parse(schema, location="query"))

    assert answers[0] == answers[1] == answers[2]
    assert len(loads) == (1 if not query_string else 3)


def test_an_empty_query_string_whose_load_depends_on_the_moment_is_loaded_each_time():
    """Usage's default period ends now (schemas/usage.py): it is not kept."""
    parser, schema = QueryParser(unknown=None), UsageQuerySchema()
    loads = _counting_loads(schema)
    app = Flask(__name__)

    for _ in range(3):
        with app.test_request_context("/v1/usage/"):
            parser.parse(schema, location="query")

    assert not UsageQuerySchema.EMPTY_LOADS_ALIKE
    assert len(loads) == 3
