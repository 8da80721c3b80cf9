"""A bot request's summaries put in after it is read (repositories/summaries.py): references
matched by MongoDB's equality, arrays, deleted and missing references, and what is not shown."""

import mongomock
import pytest
from bson import Decimal128, Int64, ObjectId, Regex

from repositories.bson_equality import equality_key
from repositories.summaries import Summaries
from runtime.exact_cache import ExactCache


@pytest.mark.parametrize(
    "one, other, equal",
    [
        (1, 1.0, True),
        (Int64(1), Decimal128("1.00"), True),
        (-0.0, 0, True),
        (0.1, Decimal128("0.1"), False),  # a double is not its decimal
        (True, 1, False),
        ("1", 1, False),
        ({"a": 1, "b": 2}, {"a": 1, "b": 2}, True),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, False),  # field order counts in BSON
        ({"a": 1}, {"a": Int64(1)}, True),  # values within it by the same rule
        ([1, "x"], [1.0, "x"], True),
        (ObjectId("0123456789abcdef01234567"), "0123456789abcdef01234567", False),
    ],
)
def test_references_are_equal_as_mongodbs_equality_says(one, other, equal):
    assert (equality_key(one) == equality_key(other)) is equal


@pytest.fixture
def db():
    database = mongomock.MongoClient().db
    database.bots.insert_many(
        [
            {"_id": 1, "slug": "one", "name": "One", "creditCost": 1, "secret": "x"},
            {"_id": "two", "slug": "two", "name": "Two", "creditCost": 2},
            {"_id": {"a": 1.0}, "slug": "doc", "name": "Doc", "creditCost": 0},
        ]
    )
    database.users.insert_one({"_id": ObjectId("0123456789abcdef01234567"), "name": "Ada"})
    return database


def _filled(db, requests: list[dict], shown=("bot", "createdBy")) -> list[dict]:
    return Summaries(ExactCache("test", (), 0), lambda: db).fill(requests, shown)


ADA = ObjectId("0123456789abcdef01234567")
ONE = {"_id": 1, "slug": "one", "name": "One", "creditCost": 1}


def test_each_reference_shows_its_summary_and_only_its_fields(db):
    [request] = _filled(db, [{"_id": 7, "bot": 1.0, "createdBy": ADA}])

    assert request == {"_id": 7, "bot": ONE, "createdBy": {"_id": ADA, "name": "Ada"}}


@pytest.mark.parametrize(
    "reference, shown",
    [
        ([ObjectId(), "two", 1], "two"),  # an array: its first element that names a bot
        (["missing", Int64(1)], "one"),
        ([], None),
        ([[1]], None),  # no _id is an array
        (Regex("^t"), None),  # nor a pattern, which `$in` would match as one
        (None, None),
        ("deleted", None),
        ({"a": 1}, "doc"),  # a document equals the same fields with equal numbers
    ],
)
def test_odd_references_show_the_document_they_name_or_nothing(db, reference, shown):
    [request] = _filled(db, [{"_id": 7, "bot": reference}])

    assert (request["bot"]["slug"] if "bot" in request else None) == shown


class _Recording:
    """A database whose `find`s are recorded, as (collection, the ids asked)."""

    def __init__(self, db):
        self.db, self.finds = db, []

    def __call__(self):
        return self

    def __getitem__(self, name):
        collection, finds = self.db[name], self.finds

        class Recorded:
            def find(self, filter, *args, **kwargs):
                finds.append((name, filter["_id"]["$in"]))
                return collection.find(filter, *args, **kwargs)

        recorded = Recorded()
        recorded.name = name
        return recorded


def test_what_can_be_no_id_is_never_asked_for(db):
    recording = _Recording(db)
    requests = [{"_id": 1, "bot": Regex("^t")}, {"_id": 2, "bot": [[1]]}, {"_id": 3, "bot": None}]
    requests.append({"_id": 4, "bot": "two"})

    Summaries(ExactCache("test", (), 0), recording).fill(requests, ("bot",))

    assert recording.finds == [("bots", ["two"])]


def test_a_missing_reference_stays_missing_and_one_not_shown_stays_an_id(db):
    requests = _filled(db, [{"_id": 7}, {"_id": 8, "bot": 1}], shown=("createdBy",))

    assert requests == [{"_id": 7}, {"_id": 8, "bot": 1}]


def test_a_page_reads_each_collection_once_whatever_its_size(db):
    recording = _Recording(db)
    requests = [{"_id": n, "bot": n % 2 or "two", "createdBy": ADA} for n in range(50)]

    Summaries(ExactCache("test", (), 0), recording).fill(requests, ("bot", "createdBy"))

    assert sorted((name, sorted(map(str, ids))) for name, ids in recording.finds) == [
        ("bots", ["1", "two"]),
        ("users", [str(ADA)]),
    ]
    assert requests[1]["bot"]["slug"] == "one" and requests[0]["bot"]["slug"] == "two"


def test_a_request_listed_twice_gets_its_summaries_once(db):
    request = {"_id": 7, "bot": 1}

    _filled(db, [request, request])

    assert request["bot"] == ONE
