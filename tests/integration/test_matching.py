"""A feed judges requests in memory (repositories/matching.py) exactly as the database selects
them: the database's own answer is the reference, on both backends, over the filters the
access policy and a feed write and the odd values another system may have stored."""

import itertools

import pytest
from bson import DBRef, Decimal128, Int64, ObjectId, Regex

from access import policy
from access.callers import Caller
from repositories.matching import matches

A, B, C = (ObjectId(f"{n:024x}") for n in (1, 2, 3))  # fixed: part of the test ids
VALUES = [
    A,
    B,
    [A],
    [B, A],
    [],
    [[A]],
    None,
    [None],
    str(A),
    1,
    Int64(1),
    Decimal128("1"),
    True,
    {"_id": A},
    DBRef("users", A),
    [DBRef("users", A)],
    {"$oid": str(A)},
]


def _documents() -> list[dict]:
    documents = []
    for number, (created_by, organization) in enumerate(itertools.product(VALUES, repeat=2)):
        document = {"_id": number, "createdBy": created_by, "organization": organization}
        documents.append(document)
        if number % 7 == 0:  # and with the fields left out
            documents.append({"_id": f"{number}-bare", "bot": A})
    return documents


def _filters() -> list[dict]:
    member = Caller.user(A, [B, C])
    return [
        policy.bot_requests(member).as_filter(),
        policy.bot_requests(Caller.user(A, [])).as_filter(),
        policy.organization(member, B).as_filter(),
        policy.organization_bot_request(Caller.user(C, []), B).as_filter(),
        {"$and": [policy.bot_requests(member).as_filter(), {"createdBy": A, "bot": A}]},
        {"$and": [policy.organization(member, C).as_filter(), {"bot": {"$in": []}}]},
    ]


def _assert_matches_as_selected(db, query: dict) -> None:
    documents = _documents()
    db.botrequests.insert_many([dict(document) for document in documents])

    selected = {document["_id"] for document in db.botrequests.find(query, {"_id": 1})}

    assert {d["_id"] for d in documents if matches(query, d)} == selected


@pytest.mark.parametrize("query", _filters(), ids=repr)
def test_a_document_matches_in_memory_where_the_database_selects_it(db, query):
    _assert_matches_as_selected(db, query)


@pytest.mark.parametrize("query", [{"organization": 1}, {"organization": {"$in": [1, "x", A]}}])
def test_numbers_of_any_type_are_equal_by_value(wire_db, query):
    """On the wire server only: mongomock tells an Int64 or a Decimal128 from an int."""
    _assert_matches_as_selected(wire_db, query)


@pytest.mark.parametrize(
    "query",
    [
        {"createdBy": None},
        {"createdBy": {"$ne": A}},
        {"a.b": A},
        {"$nor": []},
        {"createdBy": [A]},
        {"createdBy": Regex("^a")},
    ],  # fmt: skip
    ids=repr,
)
def test_what_it_would_judge_otherwise_it_refuses(query):
    with pytest.raises(ValueError):
        matches(query, {"createdBy": A})
