"""Aggregation stages that several repositories share."""


def lookup_all(field: str, collection: str, into: str) -> dict:
    """The documents a reference, or an array of them, names, as the array `into`."""
    return {"$lookup": {"from": collection, "localField": field, "foreignField": "_id", "as": into}}


def lookup_one(field: str, collection: str, into: str | None = None) -> list[dict]:
    """Replace a reference by the referenced document, or drop it when there is none."""
    into = into or field
    return [
        lookup_all(field, collection, into),
        {"$unwind": {"path": f"${into}", "preserveNullAndEmptyArrays": True}},
    ]
