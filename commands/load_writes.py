"""A checked load written: upserts by `_id` in ordered batches, so that a load the database
cuts short can say exactly which documents it wrote."""

from collections import defaultdict

from pymongo import ReplaceOne, UpdateOne
from pymongo.database import Database
from pymongo.errors import BulkWriteError, PyMongoError

from commands.load_files import Entry
from schemas.loaded_documents import COLLECTIONS

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
