"""A streamed download (web/downloads.py) reads each batch while the one before is written,
leaves no reading thread behind when its client goes, and is cut short with one log line when
a later batch finds no database permit."""

import logging
import threading

import pytest
from flask import Flask

from runtime.admission import DatabaseBusy
from web.downloads import DownloadInterrupted, streamed

BATCHES = 5


def _download(batches, write):
    app = Flask(__name__)
    app.config["MONGODB_TIMEOUT_MS"] = 5000
    with app.test_request_context():
        return streamed(batches, write, head="", media_type="text/plain", filename="f")


def _readers() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("download")]


def test_the_next_batch_is_read_while_one_is_written():
    asked = [threading.Event() for _ in range(BATCHES + 1)]

    def batches():
        for n in range(BATCHES):
            asked[n].set()
            yield [n]

    def write(batch):
        (n,) = batch
        # The first batch is written within the request, before any reading ahead.
        if n > 0:
            assert asked[n + 1 if n + 1 < BATCHES else n].wait(5), f"batch {n + 1} not asked"
        return f"{n}\n"

    response = _download(batches(), write)
    assert b"".join(response.response) == b"".join(b"%d\n" % n for n in range(BATCHES))
    response.close()


def test_a_client_that_leaves_leaves_no_reader_behind():
    release = threading.Event()

    def batches():
        yield [0]
        yield [1]
        release.wait(5)  # a slow read under way when the client leaves
        yield [2]

    response = _download(batches(), lambda batch: f"{batch[0]}\n")
    chunks = iter(response.response)
    assert next(chunks) == b"0\n"
    assert next(chunks) == b"1\n"
    assert _readers()
    threading.Timer(0.2, release.set).start()
    response.close()
    assert not _readers()


def test_a_later_batch_refused_a_permit_cuts_the_download_short(caplog):
    def write(batch):
        if batch == [1]:
            raise DatabaseBusy(3)
        return f"{batch[0]}\n"

    response = _download(iter([[0], [1]]), write)
    chunks = iter(response.response)
    first = next(chunks)
    with caplog.at_level(logging.ERROR), pytest.raises(DownloadInterrupted):
        next(chunks)
    response.close()

    assert first == b"0\n"
    assert any(record.getMessage().startswith("download cut short") for record in caplog.records)
