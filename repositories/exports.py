"""An export's requests (docs/api.md#exports), read a batch at a time, each by queries of its own.

Each batch is read while the one before it is written, so that no database work spans the
whole export (each batch has a deadline of its own, web/downloads.py) and two batches are
held. A batch holds about `limit` requests: of several visibility branches, each reads its
keys and the batch is fetched by id (repositories/pipelines.py), one query more.

Any order is read as keyset pages: on MongoDB an index walk each, wherever it starts. The
embedded engine decodes every entry of a query's index range before it sorts, so there a
page costs the rest of the export, and the export its square. In the default order,
`createdAt`, the period is therefore read in consecutive windows of it, half-open and in the
sort's direction, each read whole when it holds at most a batch, else cut at the date
past its first batch; each window is sized to hold about a batch at the density the one
before it found (at most SPREAD times wider), halved when even a cut cannot tell (one date
throughout, or arrays), and one too full even at a millisecond is read as keyset pages.
On MongoDB a window is one index range; what the windows cost it is the few that find the
density at the start, and those over gaps (docs/decisions/2026-11-28-lists-as-pipelines.md).
The windows read `createdAt` whatever `fields` selects (schemas/exports.py), to tell a
request stored with several; an export of every field reads them whole (`whole`): the
engine's projection doubles its read (63 ms against 121 ms for 958 requests), where
MongoDB's only keeps another writer's extra fields off the wire.
"""

import datetime as dt
from collections.abc import Iterator
from dataclasses import replace

from access.policy import Visibility
from repositories.bot_requests import BotRequestListQuery, BotRequestRepository
from repositories.bson_equality import equality_key

FIRST_WINDOW = dt.timedelta(minutes=1)
NARROWEST = dt.timedelta(milliseconds=1)
SPREAD = 256  # at most how many times wider a window is than a sparse one before it


def batches(
    repository: BotRequestRepository, visibility: Visibility, query: BotRequestListQuery
) -> Iterator[list[dict]]:
    """The requests of a keyset `query` over its period, without their summaries
    (`repository.summarized`, as each is written, while the next one is read): about
    `query.limit` at a time, one batch per read, so an empty window is an empty batch."""
    aim = query.limit
    field, direction = query.sort[0]
    if field != "createdAt":
        yield from _walk(repository, visibility, query)
        return
    once = _Once()
    width, start, end = FIRST_WINDOW, query.created_from, query.created_to
    while start < end:
        width = min(width, end - start)
        if direction == 1:
            window = replace(query, created_from=start, created_to=min(end, start + width))
        else:
            window = replace(query, created_from=max(start, end - width), created_to=end)
        read = repository.first(visibility, replace(window, limit=aim + 1))
        found, window = _kept(read, window, aim, direction)
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
        if found is not None:
            width = window.created_to - window.created_from
            density = aim / max(len(found), 1)  # how much wider a window of `aim` would be
            width *= min(SPREAD, max(2, density)) if len(found) < aim else density


def _kept(read: list[dict], window: BotRequestListQuery, aim: int, direction: int):
    """(requests, window): the whole window's, when it holds at most `aim`; else those before
    the date of the one after the `aim`-th, with the window cut at that date, so that the
    read is not wasted; (None, window) where its dates cannot tell (an array among them, or
    one date throughout)."""
    if len(read) <= aim:
        return read, window
    dates = [request.get("createdAt") for request in read[: aim + 1]]
    if not all(isinstance(date, dt.datetime) for date in dates) or dates[0] == dates[aim]:
        return None, window
    pairs = zip(read[:aim], dates[:aim], strict=True)
    kept = [request for request, date in pairs if date != dates[aim]]
    if direction == 1:
        return kept, replace(window, created_to=dates[aim])
    return kept, replace(window, created_from=dates[aim] + NARROWEST)


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


def _walk(repository, visibility: Visibility, query: BotRequestListQuery) -> Iterator[list[dict]]:
    while True:
        page = repository.find_page(visibility, query, summarized=False)
        yield page.results
        if page.next is None:
            return
        query = replace(query, cursor=page.next)
