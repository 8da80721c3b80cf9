"""Downloads streamed batch by batch (exports, docs/api.md#exports).

The first batch is read before the response starts, within the request's deadline: a
database failure there is the usual 503. Each later batch is read, on a thread of the
download's own, while the one before it is written, under a deadline of its own
(MONGODB_TIMEOUT_MS): the database's work and the worker's overlap, an export takes as long
as it needs while no single read may stall, and the worker holds two batches at a time. A
failure after the first bytes cannot become an error response any more: the
exception ends the body without HTTP/1.1's terminating chunk (gunicorn then closes the
connection), so the client sees an incomplete response rather than a short file that looks
complete. The request keeps its database permit (`runtime.admission`) until the body ends.
"""

import contextvars
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pymongo
from flask import Response, current_app, stream_with_context
from pymongo.errors import PyMongoError

from runtime import database
from runtime.admission import DatabaseBusy
from web.metrics import ADMISSION_REFUSED, count_database_error

log = logging.getLogger(__name__)


class _ReadAhead:
    """The batches, each read on a thread of the download's own while the one before is
    written, under a deadline of its own."""

    def __init__(self, batches: Iterator[list], seconds: float):
        self._batches, self._seconds = batches, seconds
        self._context = contextvars.copy_context()  # the request's, for the reads
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="download")
        self._pending = self._reader.submit(self._context.run, self._read)

    def _read(self) -> list | None:
        with pymongo.timeout(self._seconds):
            return next(self._batches, None)

    def next(self) -> list | None:
        batch = self._pending.result()
        if batch is not None:
            self._pending = self._reader.submit(self._context.run, self._read)
        return batch

    def close(self) -> None:
        """Waits for the read under way, if any: the reader is the batches' only user."""
        self._reader.shutdown(cancel_futures=True)


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
    """A response whose body is `head`, then `write(batch)` for every batch: the first
    within the request, later ones under a deadline of their own (a write may read, as an
    export's summaries do). The first part is sent even when empty: the status and headers
    leave with it."""
    seconds = current_app.config["MONGODB_TIMEOUT_MS"] / 1000
    opening = head + write(next(batches, []))

    def body() -> Iterator[bytes]:
        following = _ReadAhead(batches, seconds)  # begun here, past the request's deadline
        try:
            yield opening.encode()
            while (batch := following.next()) is not None:
                if batch:
                    with pymongo.timeout(seconds):
                        text = write(batch)
                    yield text.encode()
        except PyMongoError as error:
            count_database_error(error)
            log.error("download cut short: %s", database.describe(error))
            raise DownloadInterrupted(filename) from error
        except DatabaseBusy as error:  # a later batch's read found no permit (admission)
            ADMISSION_REFUSED.inc()
            log.error("download cut short: %s", error)
            raise DownloadInterrupted(filename) from error
        finally:
            following.close()

    response = Response(stream_with_context(body()), mimetype=media_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
