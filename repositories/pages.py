"""A list's page: the query that asks for it, the plan that reads it, and the two kinds of page.

A list is read in offset pages unless its query asks for keyset pages (`ListQuery.keyset`,
the one place that decides). A repository turns the caller's visibility, its filters and
the query into one `ListPlan`, built once, which repositories/pipelines.py reads. Either page
holds its items and, when counted, its exact total, at a cost that follows the page rather
than the list.
"""

from dataclasses import dataclass

from access.policy import Visibility
from repositories.bson_order import Resume, sort_order
from repositories.reads import disjoint_filters


@dataclass(frozen=True, kw_only=True)
class ListQuery:
    """Which page of a list, in which order; a list's query (`BotListQuery`...) adds its filters.

    Offset pages by default; keyset pages when `pagination` says so or a `cursor` resumes
    one (docs/api.md#keyset-pages). `count` is "exact" or "none"; unsaid, offset pages count and
    keyset pages do not.
    """

    sort: list[tuple[str, int]]
    page: int | None  # None: the first
    limit: int
    pagination: str | None = None
    cursor: Resume | None = None
    count: str | None = None

    @property
    def keyset(self) -> bool:
        return keyset_asked(self.pagination, self.cursor)

    @property
    def counted(self) -> bool:
        return self.count == "exact" if self.count else not self.keyset


def keyset_asked(pagination: str | None, cursor) -> bool:
    """Keyset paging is asked by name, or by a cursor, which only keyset pages give."""
    return pagination == "keyset" or cursor is not None


@dataclass(frozen=True)
class KeysetPage:
    results: list[dict]
    limit: int
    next: Resume | None
    total_results: int | None

    @property
    def total_pages(self) -> int | None:
        return page_count(self.total_results, self.limit)


@dataclass(frozen=True)
class OffsetPage:
    results: list[dict]
    page: int
    limit: int
    total_results: int | None

    @property
    def total_pages(self) -> int | None:
        return page_count(self.total_results, self.limit)


def page_count(total_results: int | None, limit: int) -> int | None:
    """Pages of `limit` that `total_results` fill, the last one partly; None uncounted."""
    return None if total_results is None else -(-total_results // limit)


@dataclass(frozen=True)
class ListPlan:
    """What one page of a list reads: a filter per visibility branch (disjoint, each with the
    list's filters), the order with `_id` last, the page (`page` for offset pages, None for
    keyset pages, which resume after `resume` or start), the projection of what it shows
    (None: whole documents), and whether it is counted."""

    branches: tuple[dict, ...]
    order: dict
    limit: int
    projection: dict | None
    page: int | None
    resume: Resume | None
    counted: bool

    @classmethod
    def of(cls, visibility: Visibility, filters: dict, query: ListQuery,
           projection: dict | None) -> "ListPlan":  # fmt: skip
        return cls(
            branches=tuple(disjoint_filters(visibility, filters)),
            order=sort_order(query.sort),
            limit=query.limit,
            projection=projection,
            page=None if query.keyset else query.page or 1,
            resume=query.cursor,
            counted=query.counted,
        )

    @property
    def keyset(self) -> bool:
        return self.page is None

    @property
    def skip(self) -> int:
        return (self.page - 1) * self.limit
