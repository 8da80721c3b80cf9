"""The docs are enough to write a client: `tests/support/new_user_client.py` was written by a
session that read only docs/api.md, docs/openapi.json and the README, as a new user would
(docs/api.md). Through gunicorn with 2 workers, it walks a list with keyset cursors, exports a
CSV and follows the live feed across a reconnect, while requests keep being written."""

import datetime as dt
import os
import subprocess
import sys
import threading

from tests.support import ROOT

CLIENT = ROOT / "tests" / "support" / "new_user_client.py"


def test_a_client_written_from_the_docs_alone_pages_exports_and_resumes_its_feed(gunicorn, scene):
    world, now = scene["world"], dt.datetime.now(dt.UTC).replace(tzinfo=None)

    def write(minutes_ago: int = 0):
        world.bot_request(
            bot=scene["bot"], created_by=scene["ada"], organization=scene["acme"],
            createdAt=now - dt.timedelta(minutes=minutes_ago),
        )  # fmt: skip

    for minutes_ago in range(1, 24):
        write(minutes_ago)
    # Feed slots to spare: a reconnect may reach the worker whose slot the first feed is
    # still giving back.
    server = gunicorn({"FEED_CONNECTIONS": "4"})
    stop = threading.Event()

    def keep_writing():
        while not stop.wait(0.3):
            write()

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        env = {**os.environ, "BASE_URL": f"http://127.0.0.1:{server.port}", "TOKEN": scene["token"]}
        result = subprocess.run(
            [sys.executable, CLIENT], env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        stop.set()
        writer.join()

    said = result.stdout
    assert result.returncode == 0, said + result.stderr
    assert "OK: no id repeated" in said and "OK: complete and parsed" in said
    before, reconnected, after = said.partition("  reconnecting after event id ")
    assert reconnected, said
    assert "event: created" in before and "event: created" in after, said
