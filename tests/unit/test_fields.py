"""The query fields, the output fields and the pipeline builders of repositories/, without a
database."""

import datetime as dt
import re

import pytest
from bson import DatetimeMS, Decimal128, Int64, ObjectId, Timestamp
from marshmallow import Schema, ValidationError

from access.policy import EVERYTHING, NOTHING, Visibility
from repositories.bson_order import sort_order
from repositories.pages import OffsetPage
from repositories.reads import contains, disjoint_filters, equals_ignoring_case
from schemas.fields import BsonNumber, IdText, TimestampField, format_timestamp, json_safe
from schemas.query_fields import (
    CommaSeparatedIds,
    ObjectIdString,
    QueryBoolean,
    QueryInteger,
    QueryText,
    SortBy,
)
from tests.support.page_reads import offset_page

ID = "0123456789abcdef01234567"


def _load(field, value):
    """Deserialize one value through a one-field schema, as the query parser does."""
    return Schema.from_dict({"value": field})().load({"value": value})["value"]


# Timestamps and BSON -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (dt.datetime(2026, 1, 2, 3, 4, 5, 678000), "2026-01-02T03:04:05.678Z"),
        (dt.datetime(2026, 1, 2, 3, 4, 5, 678999), "2026-01-02T03:04:05.678Z"),
        (dt.datetime(2026, 1, 2, 3, 4, 5), "2026-01-02T03:04:05.000Z"),
        (dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC), "2026-01-02T03:04:05.678Z"),
        (
            dt.datetime(2026, 1, 1, 22, 4, 5, 678000, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
            "2026-01-02T03:04:05.678Z",
        ),
    ],
)
def test_format_timestamp(value, shown):
    assert format_timestamp(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (DatetimeMS(1767323045678), "2026-01-02T03:04:05.678Z"),
        (DatetimeMS(2**62), 2**62),
        (DatetimeMS(-(2**62)), -(2**62)),
        ((1, ObjectId(ID)), [1, ID]),
        ({"k": (dt.datetime(2026, 1, 2),)}, {"k": ["2026-01-02T00:00:00.000Z"]}),
        (b"\x00", "AA=="),
    ],
)
def test_json_safe(value, shown):
    assert json_safe(value) == shown


# Query fields ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (DatetimeMS(0), "1970-01-01T00:00:00.000Z"),
        (DatetimeMS(2**62), None),
        (Timestamp(0, 1), "1970-01-01T00:00:00.000Z"),
        ("2026-01-02", None),
        (0, None),
    ],
)
def test_timestamp_field_is_a_timestamp_or_null(value, shown):
    assert TimestampField()._serialize(value, "createdAt", {}) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [(Int64(3), 3), (Decimal128("0.5"), 0.5), (2.5, 2.5), ("3", None), (False, None), ([1], None)],
)
def test_bson_number_is_a_number_or_null(value, shown):
    assert BsonNumber()._serialize(value, "creditCost", {}) == shown


@pytest.mark.parametrize(
    ("text", "number"), [("0", 0), ("7", 7), ("007", 7), ("999999999", 999999999)]
)
def test_query_integer(text, number):
    assert _load(QueryInteger(), text) == number


@pytest.mark.parametrize(
    "text", ["", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x1", "١", "1000000000", 7]
)
def test_query_integer_refuses(text):
    with pytest.raises(ValidationError):
        _load(QueryInteger(), text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("TRUE", True),
        ("tRuE", True),
        ("1", True),
        ("false", False),
        ("False", False),
        ("0", False),
    ],
)
def test_query_boolean(text, value):
    assert _load(QueryBoolean(), text) is value


@pytest.mark.parametrize("text", ["yes", "no", "on", "t", "2", "01", " true", "true "])
def test_query_boolean_refuses(text):
    with pytest.raises(ValidationError):
        _load(QueryBoolean(), text)


@pytest.mark.parametrize("text", ["a" * 200, "ünïcödé", ".*", "with spaces"])
def test_query_text(text):
    assert _load(QueryText(), text) == text


@pytest.mark.parametrize("text", ["a" * 201, "line\nbreak", "nul\x00", "tab\t", "\x7f"])
def test_query_text_refuses(text):
    with pytest.raises(ValidationError):
        _load(QueryText(), text)


def test_ids_keep_their_order_and_drop_repeats():
    a, b = "a" * 24, "b" * 24
    assert _load(CommaSeparatedIds(), f"{b},{a},{b}") == [ObjectId(b), ObjectId(a)]


def test_ids_up_to_fifty():
    assert len(_load(CommaSeparatedIds(), ",".join([ID] * 50))) == 1
    with pytest.raises(ValidationError, match="At most 50"):
        _load(CommaSeparatedIds(), ",".join([ID] * 51))


@pytest.mark.parametrize("text", ["", ",", f"{ID},", f"{ID},x", ID.upper() + "g", f" {ID}"])
def test_ids_refuse(text):
    with pytest.raises(ValidationError):
        _load(CommaSeparatedIds(), text)


def test_object_id_string():
    field = ObjectIdString()
    assert _load(field, ID) == ObjectId(ID)
    for bad in ("x", ID[:-1], 7, None):
        with pytest.raises(ValidationError):
            _load(field, bad)


def test_stored_id_is_text_whatever_its_type():
    field = IdText()
    assert field.serialize("v", {"v": ObjectId(ID)}) == ID
    assert field.serialize("v", {"v": "legacy-1"}) == "legacy-1"
    assert field.serialize("v", {"v": 42}) == "42"
    assert field.serialize("v", {"v": None}) is None


BOT_ATTRIBUTES = ("name", "slug", "creditCost")


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("name", [("name", 1)]),
        ("name:asc", [("name", 1)]),
        ("name:DESC", [("name", -1)]),
        ("creditCost:desc,name", [("creditCost", -1), ("name", 1)]),
        ("slug:Desc,name:aSc,creditCost", [("slug", -1), ("name", 1), ("creditCost", 1)]),
    ],
)
def test_sort_by(text, order):
    assert _load(SortBy(BOT_ATTRIBUTES), text) == order


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("name,name:desc", "more than once"),
        ("colour", "Cannot sort by 'colour'"),
        ("name:sideways", "Unknown sort direction"),
        ("name:", "Malformed"),
        ("name\n", "Malformed"),
        ("", "Malformed"),
        ("name,,slug", "Malformed"),
    ],
)
def test_sort_by_refuses(text, complaint):
    with pytest.raises(ValidationError, match=complaint):
        _load(SortBy(BOT_ATTRIBUTES), text)


# Pipeline builders -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "limit", "pages"),
    [(0, 10, 0), (1, 10, 1), (10, 10, 1), (11, 10, 2), (23, 10, 3), (100, 100, 1), (5, 1, 5)],
)
def test_total_pages_is_the_ceiling(total, limit, pages):
    assert OffsetPage([], 1, limit, total).total_pages == pages


@pytest.mark.parametrize("text", [".*", "(", "[x]", "\\", "$", "^", "+?", "a|b", "{2}", "a b", "#"])
def test_contains_is_literal(text):
    pattern = re.compile(contains(text)["$regex"], re.IGNORECASE)
    assert pattern.search(f"before {text.upper()} after")
    assert not pattern.search("before after")
    assert contains(text)["$options"] == "i"


def test_equals_ignoring_case_is_anchored_and_literal():
    pattern = re.compile(equals_ignoring_case("W.*")["$regex"], re.IGNORECASE)
    assert pattern.search("w.*")
    assert not pattern.search("Writing")
    assert not pattern.search("xW.*")


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        ([("name", 1)], [("name", 1), ("_id", 1)]),
        ([("name", -1)], [("name", -1), ("_id", -1)]),
        ([("creditCost", -1), ("name", 1)], [("creditCost", -1), ("name", 1), ("_id", 1)]),
        ([("createdAt", 1), ("updatedAt", -1)], [("createdAt", 1), ("updatedAt", -1), ("_id", -1)]),
    ],
)
def test_sort_order_ends_on_id(sort, order):
    assert list(sort_order(sort).items()) == order


@pytest.mark.parametrize(
    ("visibility", "filters", "combined"),
    [
        (EVERYTHING, {}, [{}]),
        (EVERYTHING, {"name": "x"}, [{"name": "x"}]),
        (Visibility.of({"isPublic": True}), {"name": "x"}, [{"isPublic": True, "name": "x"}]),
        (
            Visibility.of({"isPublic": True}, {"organization": 1}),
            {"tags": 2},
            [
                {"isPublic": True, "tags": 2},
                {"organization": 1, "isPublic": {"$ne": True}, "tags": 2},
            ],
        ),
        (
            Visibility.of({"organization": 1}),
            {"organization": 2},
            [{"$and": [{"organization": 1}, {"organization": 2}]}],
        ),
    ],
)
def test_filters_never_loosen_the_visibility(visibility, filters, combined):
    """One filter per visibility branch, each ANDed with the filters and never widened."""
    assert disjoint_filters(visibility, filters) == combined


def test_nothing_visible_reads_nothing():
    """An empty visibility answers an empty page without a query."""
    page = offset_page(None, NOTHING, {}, sort=[("name", 1)], page=3, limit=5)
    assert (page.results, page.page, page.limit, page.total_results) == ([], 3, 5, 0)
