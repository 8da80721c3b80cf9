"""Data files into the database: every document validated first, then all written, or none.

A file is `{"<collection>": [documents...], ...}` in JSON or MongoDB Extended JSON. Beyond
each document's own schema (schemas/stored.py), a load is checked as a whole: ids unique
within the load, unique values (bot slugs, token hashes) free in the load and in the
database. Only then is anything written, so a rejected load leaves the database as it was.

A reference to a document that is neither in the load nor in the database is not a problem:
real exports hold requests of deleted bots and users. Such references are counted, for a
warning, and loaded as they are.

Documents are written in ordered batches, so that a load the database cuts short can say
exactly which documents it wrote.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bson import json_util
from bson.errors import BSONError
from marshmallow import Schema, ValidationError, fields
from pymongo import ReplaceOne, UpdateOne
from pymongo.database import Database
from pymongo.errors import BulkWriteError, PyMongoError

from schemas.stored import COLLECTIONS


@dataclass(frozen=True)
class Problem:
    source: str
    message: str
    collection: str | None = None
    index: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.source
        if self.collection is not None:
            where += f": {self.collection}"
            if self.index is not None:
                where += f"[{self.index}]"
            if self.field is not None:
                where += f".{self.field}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Entry:
    """One valid document and where it came from, for the messages of later checks."""

    source: str
    collection: str
    index: int
    document: dict

    def problem(self, message: str, field: str | None = None) -> Problem:
        return Problem(self.source, message, self.collection, self.index, field)

    @property
    def place(self) -> str:
        return f"{self.source}: {self.collection}[{self.index}]"


@dataclass(frozen=True)
class Validated:
    entries: list[Entry]
    # "collection.field" -> how many references point to a document that exists nowhere.
    dangling: Counter


class LoadError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def parse(source: str, text: str) -> tuple[list[tuple[str, int, object]], list[Problem]]:
    """The raw documents of one file as (collection, index, document), or its problems."""
    try:
        data = json_util.loads(text, parse_constant=_reject_constant)
    except (ValueError, TypeError, BSONError) as error:
        return [], [Problem(source, f"Invalid JSON: {error}")]
    if not isinstance(data, dict):
        return [], [Problem(source, "Invalid file: expected an object of collections.")]
    raw, problems = [], []
    for collection, documents in data.items():
        if collection not in COLLECTIONS:
            known = ", ".join(COLLECTIONS)
            problems.append(
                Problem(source, f"Unknown collection; expected one of: {known}.", collection)
            )
        elif not isinstance(documents, list):
            problems.append(Problem(source, "Expected a list of documents.", collection))
        else:
            raw.extend((collection, index, document) for index, document in enumerate(documents))
    return raw, problems


def _flatten(messages, path: str = "") -> Iterable[tuple[str | None, str]]:
    """marshmallow's nested messages ({"tags": {1: [...]}}) as ("tags[1]", message) pairs."""
    if isinstance(messages, str):
        yield path or None, messages
    elif isinstance(messages, list):
        for message in messages:
            yield from _flatten(message, path)
    else:
        for key, nested in messages.items():
            if isinstance(key, int):
                child = f"{path}[{key}]"
            elif key == "_schema":
                child = path
            else:
                child = f"{path}.{key}" if path else key
            yield from _flatten(nested, child)


def _validate_documents(raw_by_source) -> tuple[list[Entry], list[Problem]]:
    """Each document against its schema; what did validate of an invalid one is kept too,
    so that the checks across documents report its other problems in the same run."""
    entries, problems = [], []
    for source, raw in raw_by_source:
        for collection, index, document in raw:
            problem = partial(Problem, source, collection=collection, index=index)
            if not isinstance(document, dict):
                problems.append(problem("Expected a document (an object)."))
                continue
            try:
                valid = COLLECTIONS[collection].load(document)
            except ValidationError as error:
                problems.extend(
                    problem(message, field=field) for field, message in _flatten(error.messages)
                )
                valid = {
                    name: value
                    for name, value in (error.valid_data or {}).items()
                    if name not in error.messages
                }
                if "_id" not in valid:
                    continue
            entries.append(Entry(source, collection, index, valid))
    return entries, problems


def _fields_with(schema: Schema, key: str) -> list[tuple[str, fields.Field]]:
    """Fields whose metadata has `key`, including the items of list fields."""
    found = []
    for name, field in schema.fields.items():
        inner = field.inner if isinstance(field, fields.List) else field
        if key in inner.metadata:
            found.append((name, inner))
    return found


def _duplicate_ids(entries: list[Entry]) -> list[Problem]:
    seen: dict[tuple, Entry] = {}
    problems = []
    for entry in entries:
        key = (entry.collection, entry.document["_id"])
        if key in seen:
            problems.append(entry.problem(f"Duplicate _id; also at {seen[key].place}.", "_id"))
        else:
            seen[key] = entry
    return problems


def _unique_values(db: Database, entries: list[Entry]) -> list[Problem]:
    """No two documents of the load, nor one of the load and another stored one, share a value.

    A stored document counts even when the load replaces it under another value: the
    writes happen one by one, and a unique index (ours on bots.slug, or the writer's) must
    hold after each of them.
    """
    problems = []
    for collection, schema in COLLECTIONS.items():
        mine = [entry for entry in entries if entry.collection == collection]
        for name, _ in _fields_with(schema, "unique"):
            holders: dict = {}
            for entry in mine:
                value = entry.document.get(name)
                if value is None:
                    continue
                if value in holders:
                    other = holders[value]
                    problems.append(
                        entry.problem(f"Duplicate {name} {value!r}; also at {other.place}.", name)
                    )
                else:
                    holders[value] = entry
            if not holders:
                continue
            stored = db[collection].find({name: {"$in": list(holders)}}, {name: 1})
            for document in stored:
                entry = holders[document[name]]
                if document["_id"] != entry.document["_id"]:
                    problems.append(
                        entry.problem(
                            f"{name} {document[name]!r} is already used in the database by "
                            f"{collection} _id {document['_id']}.",
                            name,
                        )
                    )
    return problems


def _dangling_references(db: Database, entries: list[Entry]) -> Counter:
    loaded = defaultdict(set)
    for entry in entries:
        loaded[entry.collection].add(entry.document["_id"])
    wanted = defaultdict(list)  # target collection -> [("collection.field", id)]
    for entry in entries:
        for name, field in _fields_with(COLLECTIONS[entry.collection], "references"):
            value = entry.document.get(name)
            target = field.metadata["references"]
            where = f"{entry.collection}.{name}"
            if isinstance(value, list):
                wanted[target].extend((where, ref) for ref in value)
            elif value is not None:
                wanted[target].append((where, value))
    dangling = Counter()
    for target, references in wanted.items():
        missing = {ref for _, ref in references} - loaded[target]
        if missing:
            missing -= set(db[target].distinct("_id", {"_id": {"$in": list(missing)}}))
        dangling.update(where for where, ref in references if ref in missing)
    return dangling


def _in_file_order(sources: list[str], problems: list[Problem]) -> list[Problem]:
    collections = list(COLLECTIONS)

    def position(problem: Problem):
        collection = problem.collection
        return (
            sources.index(problem.source),
            collections.index(collection) if collection in collections else -1,
            -1 if problem.index is None else problem.index,
        )

    return sorted(problems, key=position)


def validate(db: Database, raw_by_source, problems: list[Problem] = ()) -> Validated:
    """Valid entries of every source, or a LoadError listing every problem found.

    `problems` are those already found while reading the sources, reported in file order
    with the rest.
    """
    entries, found = _validate_documents(raw_by_source)
    found += _duplicate_ids(entries)
    found += _unique_values(db, entries)
    found = [*problems, *found]
    if found:
        sources = [source for source, _ in raw_by_source]
        raise LoadError(_in_file_order(sources, found))
    return Validated(entries, _dangling_references(db, entries))


BATCH_SIZE = 1000


class WriteError(Exception):
    """The database failed mid-load; `lines` say what was written, what may be, and what not.

    Each batch is an ordered bulk write: a write error stops it at a known document, and
    every document before that one was written. Any other failure (a lost connection, a
    timeout, a write concern not met) leaves the batch in doubt.
    """

    def __init__(self, reason: str, lines: list[str]):
        super().__init__(reason)
        self.reason = reason
        self.lines = lines


def _failure(
    error: PyMongoError, written: dict, group: list[Entry], done: int, untouched: list[str]
) -> WriteError:
    """`done`: how many of `group` the batches before the failed one wrote; `untouched`:
    the collections of the load after this one."""
    lines = [f"{name}: all {count} written." for name, count in written.items()]
    collection = group[0].collection
    batch = group[done : done + BATCH_SIZE]
    if isinstance(error, BulkWriteError) and error.details.get("writeErrors"):
        first_error = error.details["writeErrors"][0]
        reason = first_error.get("errmsg", str(error))
        done += first_error["index"]
        lines.append(f"{collection}: {done} of {len(group)} written")
        if done:
            lines[-1] += f", up to {group[done - 1].place}"
        lines[-1] += f"; {group[done].place} was refused, nothing after it was written."
    else:
        reason = str(error)
        lines.append(
            f"{collection}: {done} of {len(group)} written; {batch[0].place} to "
            f"{batch[-1].place} may be partly written, nothing after them was."
        )
    if untouched:
        lines.append(f"Not written at all: {', '.join(untouched)}.")
    return WriteError(reason, lines)


def _operation(document: dict, replace: bool):
    selector = {"_id": document["_id"]}
    if replace:
        return ReplaceOne(selector, document, upsert=True)
    return UpdateOne(selector, {"$setOnInsert": document}, upsert=True)


def write(db: Database, entries: list[Entry], *, replace: bool = True) -> dict[str, tuple]:
    """Upsert by `_id`, in batches; `replace=False` keeps documents already stored as they
    are. A WriteError says how far a load the database cut short went.

    Returns, per collection, (new documents, documents replaced or kept).
    """
    groups = defaultdict(list)
    for entry in entries:
        groups[entry.collection].append(entry)
    counts, written = {}, {}
    order = [collection for collection in COLLECTIONS if groups[collection]]
    for position, collection in enumerate(order):
        group = groups[collection]
        new = 0
        for done in range(0, len(group), BATCH_SIZE):
            batch = group[done : done + BATCH_SIZE]
            operations = [_operation(entry.document, replace) for entry in batch]
            try:
                new += db[collection].bulk_write(operations).upserted_count
            except PyMongoError as error:
                raise _failure(error, written, group, done, order[position + 1 :]) from None
        counts[collection] = (new, len(group) - new)
        written[collection] = len(group)
    return counts


def read_files(paths: Iterable[Path]) -> tuple[list, list[Problem]]:
    raw_by_source, problems = [], []
    for path in paths:
        try:
            raw, found = parse(str(path), path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            raw, found = [], [Problem(str(path), f"Cannot read the file: {error}")]
        raw_by_source.append((str(path), raw))
        problems += found
    return raw_by_source, problems


def check_files(db: Database, paths: Iterable[Path]) -> Validated:
    """Every document of every file, validated; a LoadError lists every problem."""
    raw_by_source, problems = read_files(paths)
    return validate(db, raw_by_source, problems)


def documents(raw: dict[str, list[dict]], source: str) -> list:
    """In-memory documents shaped like a file, for callers that build their data in code."""
    return [(source, [(c, i, d) for c, docs in raw.items() for i, d in enumerate(docs)])]
