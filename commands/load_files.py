"""What `db load` reads: data files parsed into documents, each checked against its
collection's schema (schemas/loaded_documents.py), every problem kept with the file,
collection, index and field it is about.

A file is `{"<collection>": [documents...], ...}` in JSON or MongoDB Extended JSON.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bson import json_util
from bson.errors import BSONError
from marshmallow import ValidationError

from schemas.loaded_documents import COLLECTIONS


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


def validate_documents(raw_by_source) -> tuple[list[Entry], list[Problem]]:
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


def documents(raw: dict[str, list[dict]], source: str) -> list:
    """In-memory documents shaped like a file, for callers that build their data in code."""
    return [(source, [(c, i, d) for c, docs in raw.items() for i, d in enumerate(docs)])]
