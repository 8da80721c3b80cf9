"""Pipeline pieces every list shares: the filter, the ordered page and its exact total."""

import re
from dataclasses import dataclass

from pymongo.collection import Collection

from policy import Visibility


@dataclass(frozen=True)
class Page:
    results: list[dict]
    page: int
    limit: int
    total_results: int

    @property
    def total_pages(self) -> int:
        return -(-self.total_results // self.limit)


def contains(text: str) -> dict:
    """Case-insensitive substring; every character literal, so no pattern can backtrack."""
    return {"$regex": re.escape(text), "$options": "i"}


def equals_ignoring_case(text: str) -> dict:
    return {"$regex": f"^{re.escape(text)}$", "$options": "i"}


def combine(visibility: Visibility, filters: dict) -> dict:
    """Visibility AND filters, keys merged flat where they do not collide."""
    visible = visibility.as_filter()
    if visible.keys() & filters.keys():
        return {"$and": [visible, filters]}
    return {**visible, **filters}


def sort_order(sort: list[tuple[str, int]]) -> dict:
    """The requested order, ties broken on `_id` in the last key's direction.

    Following the last key's direction lets one index {key: 1, _id: 1} serve both directions.
    """
    order = dict(sort)
    order["_id"] = sort[-1][1]
    return order


def lookup_one(field: str, collection: str, into: str | None = None) -> list[dict]:
    """Replace a reference by the referenced document, or drop it when there is none."""
    into = into or field
    return [
        {"$lookup": {"from": collection, "localField": field, "foreignField": "_id", "as": into}},
        {"$unwind": {"path": f"${into}", "preserveNullAndEmptyArrays": True}},
    ]


def fetch_page(
    collection: Collection,
    visibility: Visibility,
    filters: dict,
    *,
    sort: list[tuple[str, int]],
    page: int,
    limit: int,
    joins: list[dict] = (),
) -> Page:
    """Count every match, then order, skip and take the page; joins run on the page only."""
    if visibility.is_empty:
        return Page([], page, limit, 0)
    match = combine(visibility, filters)
    total = collection.count_documents(match)
    skip = (page - 1) * limit
    if skip >= total:
        return Page([], page, limit, total)
    pipeline = [
        {"$match": match},
        {"$sort": sort_order(sort)},
        {"$skip": skip},
        {"$limit": limit},
        *joins,
    ]
    return Page(list(collection.aggregate(pipeline)), page, limit, total)
