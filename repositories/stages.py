"""Aggregation stages that several repositories share."""


def lookup_one(field: str, collection: str, into: str | None = None) -> list[dict]:
    """Replace a reference by the referenced document, or drop it when there is none."""
    into = into or field
    return [
        {"$lookup": {"from": collection, "localField": field, "foreignField": "_id", "as": into}},
        {"$unwind": {"path": f"${into}", "preserveNullAndEmptyArrays": True}},
    ]
