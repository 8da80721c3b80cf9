"""A download's body after its first part (web/downloads.py): a later batch the database
cannot serve, or whose read finds no permit, cuts the body short with one log line."""

import logging

import pytest
from flask import Flask

from runtime.admission import DatabaseBusy
from web.downloads import DownloadInterrupted, streamed


def test_a_later_batch_refused_a_permit_cuts_the_download_short(caplog):
    app = Flask(__name__)
    app.config["MONGODB_TIMEOUT_MS"] = 1000

    def write(batch: list) -> str:
        if batch == ["second"]:
            raise DatabaseBusy(3)
        return f"{batch}\n"

    with app.test_request_context():
        response = streamed(iter([["first"], ["second"]]), write, head="", media_type="text/plain",
                            filename="requests.ndjson")  # fmt: skip
        parts = iter(response.response)
        first = next(parts)
        with caplog.at_level(logging.ERROR), pytest.raises(DownloadInterrupted):
            next(parts)

    assert first == b"['first']\n"
    assert any(record.getMessage().startswith("download cut short") for record in caplog.records)
