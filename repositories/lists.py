"""A list's page, offset or keyset, as its query asks (contract 7.4)."""

from pymongo.collection import Collection

from access.policy import Visibility
from repositories.keyset_pages import KeysetPage, fetch_keyset_page
from repositories.paging import ListQuery, OffsetPage, fetch_page


def fetch_list(
    collection: Collection,
    visibility: Visibility,
    filters: dict,
    query: ListQuery,
    *,
    joins: list[dict] = (),
    narrow: dict | None = None,
) -> OffsetPage | KeysetPage:
    if query.keyset:
        return fetch_keyset_page(
            collection, visibility, filters, sort=query.sort, limit=query.limit,
            resume=query.cursor, counted=query.counted, joins=joins, narrow=narrow,
        )  # fmt: skip
    return fetch_page(
        collection, visibility, filters, sort=query.sort, page=query.page or 1, limit=query.limit,
        joins=joins, narrow=narrow, counted=query.counted,
    )  # fmt: skip
