"""Aggregation stages that several repositories share.

A joined document takes the place of its reference when the answer shows it there (a bot
request's `bot`); otherwise it goes beside it, named after it: `userDocument` beside `user`,
or `userDocuments` for the array `$lookup` gives, as `tagDocuments` beside `tags`.
"""


def fields_of(paths) -> set[str]:
    """The top-level fields of stored paths: `bot` of `bot.name`."""
    return {path.partition(".")[0] for path in paths}


def lookup_all(field: str, collection: str, into: str) -> dict:
    """The documents a reference, or an array of them, names, as the array `into`."""
    return {"$lookup": {"from": collection, "localField": field, "foreignField": "_id", "as": into}}


def lookup_one(field: str, collection: str, into: str | None = None) -> list[dict]:
    """The document a reference names, in its place or as `into`; none when there is none."""
    into = into or field
    return [
        lookup_all(field, collection, into),
        {"$unwind": {"path": f"${into}", "preserveNullAndEmptyArrays": True}},
    ]
