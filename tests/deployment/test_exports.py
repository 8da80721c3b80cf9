"""Exports streamed through a real gunicorn, on a wire server of their own (docs/api.md#exports;
tests/deployment/conftest.py).

An export of REQUESTS requests starts within a second, and its worker's resident memory does
not grow with it; a database failure after the first bytes cuts the response short (the client
sees an incomplete read), one before them is the usual 503; a batch that stalls meets its own
deadline, while the export as a whole outlasts it.
"""

import contextlib
import datetime as dt
import http.client
import json
import os
import time
import uuid

import psutil
import pytest
from bson import ObjectId

from repositories.indexes import ensure_indexes
from tests.support.factories import World, bearer
from tests.support.gunicorn_server import GunicornServer

# The embedded engine fetches a request by id in about 1 ms, so a larger export would take
# this test minutes; `make bench` measures 100,000 (docs/performance.md).
REQUESTS = int(os.environ.get("EXPORT_TEST_REQUESTS", "20000"))
DEADLINE_MS = 3000


@pytest.fixture(scope="module")
def stored(fault_admin):
    """An organization with REQUESTS requests of the last 30 days, written in bulk, then
    indexed (building an index once is quicker than keeping it at every insert)."""
    db = fault_admin[f"exports_{uuid.uuid4().hex[:12]}"]
    world = World(db)
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    bot = world.bot("writer", organization=acme)
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    for start in range(0, REQUESTS, 5_000):
        db.botrequests.insert_many(
            {
                "_id": ObjectId(),
                "bot": bot,
                "createdBy": ada,
                "organization": acme,
                "inputs": {"prompt": f"Write line {number}"},
                "response": {"message": "A line of text, as a bot would answer it." * 3},
                "ip": "203.0.113.7",
                "createdAt": now - dt.timedelta(seconds=number),
                "updatedAt": now,
            }
            for number in range(start, start + 5_000)
        )
    ensure_indexes(db)
    token = bearer(world.token(organization=acme))
    # Not dropped: the module's server and its folder go at the end (conftest.py), and a
    # drop would cost the engine seconds.
    yield {"db": db, "acme": acme, "token": token, "now": now}


@pytest.fixture(scope="module")
def gunicorn(fault_server, stored):
    settings = {
        "MONGODB_URI": fault_server.uri,
        "MONGODB_DB": stored["db"].name,
        "MONGODB_TIMEOUT_MS": str(DEADLINE_MS),
        "RATELIMIT_ENABLED": "false",
    }
    with GunicornServer(settings, workers=1, threads=2) as gunicorn:
        yield gunicorn


@contextlib.contextmanager
def _export(gunicorn, stored, query: str = ""):
    connection = gunicorn.connection()
    path = f"/v1/organizations/{stored['acme']}/requests/export{query}"
    try:
        connection.request("GET", path, headers=stored["token"])
        yield connection.getresponse()
    finally:
        connection.close()


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def test_an_export_streams_in_constant_memory(gunicorn, stored):
    """The whole export arrives, its first bytes within 1 s, while the worker's memory stops
    growing once its first batches are through: what it holds does not grow with the export.
    (An export of 1 GB would otherwise hold 1 GB.)"""
    [worker] = gunicorn.worker_pids()
    started = time.monotonic()
    with _export(gunicorn, stored) as response:
        first = response.read1(65536)
        first_bytes = time.monotonic() - started
        assert response.status == 200 and response.getheader("Transfer-Encoding") == "chunked"
        size, lines, tail, samples = len(first), first.count(b"\n"), first, []
        while chunk := response.read1(1 << 20):
            size += len(chunk)
            lines += chunk.count(b"\n")
            tail = (tail + chunk)[-4096:]
            samples.append((lines, _rss(worker)))
    assert lines == REQUESTS and tail.endswith(b"\n")
    json.loads(tail.splitlines()[-1])
    settled = max(rss for read, rss in samples if read <= REQUESTS // 4)
    later = max(rss for read, rss in samples if read > REQUESTS // 4)
    print(
        f"first bytes {first_bytes:.2f} s; {size / 2**20:.0f} MiB; worker at a quarter "
        f"{settled / 2**20:.0f} MiB, after {later / 2**20:.0f} MiB"
    )
    assert first_bytes < 1.0
    assert later - settled < 4 * 2**20 < size / 2


def test_a_failure_after_the_first_bytes_cuts_the_response_short(gunicorn, stored, fail_point):
    """The first batch is sent; the database then fails the next ones: the chunked body ends
    without its last chunk, so the client's HTTP library raises instead of saving a short file."""
    with _export(gunicorn, stored) as response:
        assert response.status == 200
        response.read1(1024)
        fail_point.arm(["find", "aggregate", "getMore"], "alwaysOn", errorCode=91)
        with pytest.raises(http.client.IncompleteRead):
            response.read()
    assert "download cut short" in gunicorn.log()


def test_a_failure_before_the_first_bytes_is_a_503(gunicorn, stored, fail_point):
    fail_point.arm(["find", "aggregate", "getMore"], "alwaysOn", errorCode=91)
    with _export(gunicorn, stored) as response:
        assert response.status == 503 and response.getheader("Retry-After") == "1"
        assert json.loads(response.read())["code"] == 503


def test_each_batch_has_the_deadline_not_the_export(gunicorn, stored, fail_point):
    """Eight queries slowed by a quarter of the deadline each: the export outlasts the
    deadline and completes. A batch blocked for longer is cut at its own deadline.

    A quarter: the first batch may wait on three of them in turn within its deadline, the
    caller's lookup, the batch's requests, and their summaries (read side by side) when the
    caches do not hold them."""
    reads = ["find", "aggregate"]
    fail_point.arm(reads, {"times": 8}, blockConnection=True, blockTimeMS=DEADLINE_MS // 4)
    recent = f"?createdFrom={(stored['now'] - dt.timedelta(seconds=3000)).isoformat()}Z"
    started = time.monotonic()
    with _export(gunicorn, stored, recent) as response:
        assert response.status == 200
        # The requests of the last 3,000 s, the one exactly 3,000 s old included.
        assert response.read().count(b"\n") == 3001
    assert time.monotonic() - started > DEADLINE_MS / 1000
    with _export(gunicorn, stored, recent) as response:
        response.read1(1024)
        fail_point.arm(reads, "alwaysOn", blockConnection=True, blockTimeMS=60_000)
        cut = time.monotonic()
        with pytest.raises(http.client.IncompleteRead):
            response.read()
    assert time.monotonic() - cut < DEADLINE_MS / 1000 + 3
