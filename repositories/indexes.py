"""Every index the queries need; `flask db init` creates them, idempotently.

Each list query is one `$match` per visibility branch (repositories/pipelines.py), then a sort
on one attribute with `_id` breaking ties. An index serves such a query when it holds, in
order: the branch's equality fields, the sort attribute, `_id`, and then the fields the
filter still tests (the earlier branch it excludes, the `bot` ids of a name filter). MongoDB
then counts and selects the page from index keys alone, without reading a document, and
walks only `skip + limit` keys for the page. Each index serves both sort directions.

Bots are a catalogue (thousands of documents): their name, tags and service filters are
checked on the documents of the visible set. Bot requests grow without bound: every field a
request list filters on is in its index.
"""

import time
from collections.abc import Iterator
from dataclasses import dataclass

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import OperationFailure

# What a list may be sorted by (the query schemas' `sortBy`): each has its indexes below.
BOT_SORTS = ("name", "slug", "creditCost", "createdAt", "updatedAt")
REQUEST_SORTS = ("createdAt", "updatedAt")


def _bot_indexes() -> list[IndexModel]:
    indexes = [
        IndexModel([("slug", ASCENDING)], unique=True),
        IndexModel([("tags", ASCENDING)]),
        IndexModel([("service", ASCENDING)]),
    ]
    for attribute in BOT_SORTS:
        by = [(attribute, ASCENDING), ("_id", ASCENDING)]
        indexes += [
            # Public bots: every caller's first branch.
            IndexModel([("isPublic", ASCENDING), *by]),
            # An organization's bots; `isPublic` excludes the public branch before it.
            IndexModel([("organization", ASCENDING), *by, ("isPublic", ASCENDING)]),
            # Every bot: an admin's catalogue.
            IndexModel(by),
        ]
    return indexes


def _request_indexes() -> list[IndexModel]:
    """Each branch's equality fields, then the sort key and `_id`, then what is still tested.

    A `bot` (a slug, resolved to one bot first) or `createdBy` filter is an equality placed
    before the sort key, so its count and page walk only the keys it selects, however few
    of the branch's requests it keeps. A name filter's `bot: {$in}` uses the same indexes:
    MongoDB merges up to 200 equalities in sort order, and beyond that tests `bot` where it
    trails the branch's own index. `createdFrom` and `createdTo` bound the sort key itself
    when sorting by `createdAt`, and trail the `updatedAt` indexes, so that the count stays
    on index keys. When two filters meet (a member's requests of one bot), the first is the
    bound and the other trails.
    """
    indexes = []
    for attribute in REQUEST_SORTS:
        by = [(attribute, DESCENDING), ("_id", DESCENDING)]
        dated = [] if attribute == "createdAt" else [("createdAt", ASCENDING)]
        user, organization = ("createdBy", ASCENDING), ("organization", ASCENDING)
        bot = ("bot", ASCENDING)
        indexes += [
            # A user's own requests.
            IndexModel([user, *by, bot, *dated]),
            # An organization's requests; `createdBy` excludes the user's own branch.
            IndexModel([organization, *by, user, bot, *dated]),
            # Either of them, of one bot.
            IndexModel([user, bot, *by, *dated]),
            IndexModel([organization, bot, *by, user, *dated]),
            # One member's requests in an organization.
            IndexModel([organization, user, *by, bot, *dated]),
        ]
    return indexes


INDEXES: dict[str, list[IndexModel]] = {
    # Not unique: a token is found by its hash; that no two tokens share one is the writer's
    # business, and its own unique index on the field is reused as it is.
    "tokens": [IndexModel([("tokenHash", ASCENDING)])],
    # `tokens issue --user EMAIL`; an email may be missing or shared by several users.
    "users": [IndexModel([("email", ASCENDING)])],
    "bots": _bot_indexes(),
    "botrequests": _request_indexes(),
    "services": [IndexModel([("slug", ASCENDING)])],
}
# Indexes an earlier `db init` made that no query uses any more, dropped where it made them
# (docs/decisions/2026-11-28-lists-as-pipelines.md): they are known by name and by the partial
# filter they were made with, so a writer's index of the same name stays.
RETIRED = {
    "botrequests": {
        f"{attribute}_{side}_dates" for attribute in REQUEST_SORTS for side in ("above", "below")
    }
}
# Options that make MongoDB hold an index apart from another of the same keys: such an index
# covers part of the documents or compares strings otherwise, and serves only some queries.
_DISTINCT_OPTIONS = ("partialFilterExpression", "collation")
# Options worth reporting on an index reused under another definition than ours.
_REPORTED_OPTIONS = ("unique", "sparse", "hidden", "expireAfterSeconds")


@dataclass(frozen=True)
class Outcome:
    """What happened to one index of INDEXES: `built`, `present` (ours, from an earlier
    run) or `reused` (the writer's, on the same keys, under `existing`); or to one of
    RETIRED: `dropped`."""

    collection: str
    name: str
    action: str
    seconds: float = 0.0
    existing: str = ""
    differences: tuple[str, ...] = ()


class IndexConflict(Exception):
    """An index of ours cannot be made; the message says why, in one line."""

    def __init__(self, collection: str, name: str, problem: str):
        super().__init__(f"{collection}.{name}: {problem}")


def _keys(index) -> list:
    return list(index["key"].items())


def _differences(index, model: IndexModel) -> tuple[str, ...]:
    """How the reused index differs from ours, e.g. ("unique",) or ("not unique",)."""
    found = []
    for option in _REPORTED_OPTIONS:
        theirs, ours = index.get(option) or None, model.document.get(option) or None
        if theirs == ours:
            continue
        if theirs is None:
            found.append(f"not {option}")
        else:
            found.append(option if theirs is True else f"{option} {theirs}")
    return tuple(found)


def _ensure(collection: Collection, model: IndexModel, existing: list) -> Outcome:
    name = model.document["name"]
    keys = _keys(model.document)
    same_keys = [
        index
        for index in existing
        if _keys(index) == keys
        and all(index.get(option) == model.document.get(option) for option in _DISTINCT_OPTIONS)
    ]
    if same_keys:
        index = next((index for index in same_keys if index["name"] == name), same_keys[0])
        action = "present" if index["name"] == name else "reused"
        differences = _differences(index, model)
        return Outcome(
            collection.name, name, action, existing=index["name"], differences=differences
        )
    taken = next((index for index in existing if index["name"] == name), None)
    if taken is not None:
        problem = (
            f"an index of this name exists with another definition (keys {dict(taken['key'])}"
            f"{', partial' if 'partialFilterExpression' in taken else ''}); "
            "drop or rename it, then run db init again."
        )
        raise IndexConflict(collection.name, name, problem)
    started = time.perf_counter()
    try:
        collection.create_indexes([model])
    except OperationFailure as error:
        problem = (error.details or {}).get("errmsg") or str(error)
        raise IndexConflict(collection.name, name, problem) from None
    return Outcome(collection.name, name, "built", time.perf_counter() - started)


def index_outcomes(db: Database) -> Iterator[Outcome | IndexConflict]:
    """Each index of INDEXES in turn, as it is made or found.

    An index on the same keys is used under whatever name the writer gave it, whatever its
    other options (the outcome lists how they differ from ours): MongoDB refuses a second
    index that differs only in them. A conflict is yielded, not raised, so that the other
    indexes are still made.
    """
    for name, models in INDEXES.items():
        collection = db[name]
        existing = list(collection.list_indexes())
        for model in models:
            try:
                yield _ensure(collection, model, existing)
            except IndexConflict as conflict:
                yield conflict
        yield from _drop_retired(collection, existing)


def _drop_retired(collection: Collection, existing: list) -> Iterator[Outcome]:
    retired = RETIRED.get(collection.name, {})
    for index in existing:
        name, keys = index["name"], _keys(index)
        if name in retired and len(keys) == 1 and "partialFilterExpression" in index:
            collection.drop_index(name)
            yield Outcome(collection.name, name, "dropped")


def ensure_indexes(db: Database) -> None:
    """Every index in place, or the first conflict raised: for the tests and benchmarks."""
    for outcome in index_outcomes(db):
        if isinstance(outcome, IndexConflict):
            raise outcome
