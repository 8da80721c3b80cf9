"""Downloads streamed batch by batch (exports, docs/api.md#exports).

The first batch is read before the response starts, within the request's deadline: a
database failure there is the usual 503. Each later batch is read when the previous one has
been handed to the server, under a deadline of its own (MONGODB_TIMEOUT_MS), so an export
takes as long as it needs while no single read may stall, and the worker holds one batch at
a time. A failure after the first bytes cannot become an error response any more: the
exception ends the body without HTTP/1.1's terminating chunk (gunicorn then closes the
connection), so the client sees an incomplete response rather than a short file that looks
complete. The request keeps its database permit (`runtime.admission`) until the body ends.
"""

import logging
from collections.abc import Callable, Iterator

import pymongo
from flask import Response, current_app, stream_with_context
from pymongo.errors import PyMongoError

from runtime import database
from web.metrics import count_database_error

log = logging.getLogger(__name__)


class DownloadInterrupted(Exception):
    """The database failed after the response started: its body is cut short."""


def streamed(
    batches: Iterator[list],
    write: Callable[[list], str],
    *,
    head: str,
    media_type: str,
    filename: str,
) -> Response:
    """A response whose body is `head`, then `write(batch)` for every batch. The first part
    is sent even when empty: the status and headers leave with it."""
    first = next(batches, [])
    seconds = current_app.config["MONGODB_TIMEOUT_MS"] / 1000

    def body() -> Iterator[bytes]:
        yield (head + write(first)).encode()
        while True:
            try:
                with pymongo.timeout(seconds):
                    batch = next(batches, None)
            except PyMongoError as error:
                count_database_error(error)
                log.error("download cut short: %s", database.describe(error))
                raise DownloadInterrupted(filename) from error
            if batch is None:
                return
            if batch:
                yield write(batch).encode()

    response = Response(stream_with_context(body()), mimetype=media_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
