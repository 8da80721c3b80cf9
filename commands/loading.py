"""Data files into the database: every document validated first, then all written, or none.

Beyond each document's own schema (commands/load_files.py), a load is checked as a whole: ids
unique within the load, unique values (bot slugs, token hashes) free in the load and in the
database. Only then is anything written (commands/load_writes.py), so a rejected load leaves
the database as it was.

A reference to a document that is neither in the load nor in the database is not a problem:
real exports hold requests of deleted bots and users. Such references are counted, for a
warning, and loaded as they are.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from marshmallow import Schema, fields
from pymongo.database import Database

from commands.load_files import Entry, Problem, read_files, validate_documents
from schemas.loaded_documents import COLLECTIONS


@dataclass(frozen=True)
class Validated:
    entries: list[Entry]
    # "collection.field" -> how many references point to a document that exists nowhere.
    dangling: Counter


class LoadError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


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
    entries, found = validate_documents(raw_by_source)
    found += _duplicate_ids(entries)
    found += _unique_values(db, entries)
    found = [*problems, *found]
    if found:
        sources = [source for source, _ in raw_by_source]
        raise LoadError(_in_file_order(sources, found))
    return Validated(entries, _dangling_references(db, entries))


def check_files(db: Database, paths: Iterable[Path]) -> Validated:
    """Every document of every file, validated; a LoadError lists every problem."""
    raw_by_source, problems = read_files(paths)
    return validate(db, raw_by_source, problems)
