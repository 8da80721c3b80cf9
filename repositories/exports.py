"""An export's requests (docs/api.md#exports), read a page at a time, each by queries of its own.

Each page is read while the one before it is written, so that no database work spans the
whole export (each page has a deadline of its own, web/downloads.py) and two pages are held.
Any order is read as keyset pages: on MongoDB an index walk of `limit + 1` entries each,
wherever it starts. The embedded engine instead decodes every entry of a query's index range
before it sorts, so there a page costs the rest of the export, and the export its square. In
the default order, `createdAt`, the period is therefore read in consecutive windows of it,
half-open and in the sort's direction, each read whole by one query when it holds at most
`limit` requests (`first_documents`); a window is widened after a sparse one, to hold about
half a batch at the density it found, and narrowed when it holds more, and one too full
even at a millisecond is read as keyset pages. On MongoDB a window is one index range. The
windows read `createdAt` whatever `fields` selects (schemas/exports.py), to tell a request
stored with several.
"""

import datetime as dt
from collections.abc import Iterator
from dataclasses import replace

from access.policy import Visibility
from repositories.bot_requests import BotRequestListQuery, BotRequestRepository
from repositories.bson_equality import equality_key

FIRST_WINDOW = dt.timedelta(minutes=1)
NARROWEST = dt.timedelta(milliseconds=1)
SPREAD = 16  # at most how many times wider a window is than a sparse one before it


def batches(
    repository: BotRequestRepository, visibility: Visibility, query: BotRequestListQuery
) -> Iterator[list[dict]]:
    """The requests of a keyset `query` over its period, at most `query.limit` at a time and
    without their summaries (`repository.summarized`, as each is written, while the next
    one is read): one batch per query's worth of work, so an empty window is an empty
    batch."""
    field, direction = query.sort[0]
    if field != "createdAt":
        yield from _walk(repository, visibility, query)
        return
    once = _Once()
    width, start, end = FIRST_WINDOW, query.created_from, query.created_to
    while start < end:
        if direction == 1:
            window = replace(query, created_from=start, created_to=min(end, start + width))
        else:
            window = replace(query, created_from=max(start, end - width), created_to=end)
        found = _whole(repository, visibility, window)
        if found is None and width > NARROWEST:
            width /= 2
            continue
        if found is None:
            yield from (once(batch) for batch in _walk(repository, visibility, window))
        else:
            yield once(found)
        if direction == 1:
            start = window.created_to
        else:
            end = window.created_from
        if found is not None and len(found) < query.limit // 2:
            width *= min(SPREAD, max(2, query.limit / 2 / max(len(found), 1)))


class _Once:
    """Drops the requests already exported whose `createdAt` is an array: its elements may
    fall in several windows, and MongoDB's sort puts it where its first window does (at its
    largest element, newest first; its smallest, oldest first). Only those ids are kept, by
    MongoDB's equality (another writer's may be a document)."""

    def __init__(self):
        self._seen = set()

    def __call__(self, batch: list[dict]) -> list[dict]:
        kept = []
        for request in batch:
            if isinstance(request.get("createdAt"), list):
                key = equality_key(request["_id"])
                if key in self._seen:
                    continue
                self._seen.add(key)
            kept.append(request)
        return kept


def _whole(repository, visibility: Visibility, window: BotRequestListQuery) -> list[dict] | None:
    """Every request of the window, or None when there are more than `limit`."""
    results = repository.first(visibility, replace(window, limit=window.limit + 1))
    return results if len(results) <= window.limit else None


def _walk(repository, visibility: Visibility, query: BotRequestListQuery) -> Iterator[list[dict]]:
    while True:
        page = repository.find_page(visibility, query, summarized=False)
        yield page.results
        if page.next is None:
            return
        query = replace(query, cursor=page.next)
