"""`make bench`'s feed rows (docs/performance.md#live-feeds), on a gunicorn of one worker with
SLOTS feed slots: the heavy organization's feed read by 1, 10 and SLOTS clients while a
writer inserts that organization's requests at WRITES_PER_S, with the events each client got
per second and the time from each write to its event (median, p99); and the other
endpoints' throughput with every slot held by an idle feed against none, in rounds that
alternate on the same server.

The writer's requests are deleted afterwards, with every feed closed, so that the data set
stays the one `make bench` generated.
"""

import contextlib
import datetime as dt
import http.client
import json
import statistics
import threading
import time
from urllib.parse import urlsplit

import psutil
from bson import ObjectId

from bench import dataset

SLOTS = 32
CLIENTS = (1, 10, SLOTS)
WRITES_PER_S = 100
SETTLE_SECONDS = 2.0  # after the last write, for its events to arrive
SLOT_SECONDS = 10.0  # how long a new client tries again while the worker's slots are taken


def _path() -> str:
    return f"/v1/organizations/{dataset.object_id(1, 0)}/requests/feed"


class _Client(threading.Thread):
    """One feed's reader: the latency of each event whose request `written` knows."""

    def __init__(self, base: str, written: dict):
        super().__init__(daemon=True)
        address = urlsplit(base)
        deadline = time.monotonic() + SLOT_SECONDS
        while True:  # the slots of feeds closed a moment ago come back within a second or two
            self._connection = http.client.HTTPConnection(address.hostname, address.port)
            self._connection.request("GET", _path(), headers={
                "Authorization": f"Bearer {dataset.organization_token(0)}"
            })  # fmt: skip
            self._response = self._connection.getresponse()
            if self._response.status == 200:
                break
            refusal = f"feed: {self._response.status} {self._response.read()[:300]}"
            self._connection.close()
            if self._response.status != 503 or time.monotonic() > deadline:
                raise SystemExit(refusal)
            time.sleep(0.2)
        self._written = written
        self._seen: set[str] = set()
        self.latencies: list[float] = []

    def run(self) -> None:
        # Ends when `close` takes the connection away, whichever way http.client notices.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            while line := self._response.readline():
                if line.startswith(b"data: "):
                    arrived = time.time()
                    request_id = json.loads(line[6:])["id"]
                    if request_id in self._written and request_id not in self._seen:
                        self._seen.add(request_id)  # a repeat would hide a miss
                        self.latencies.append(arrived - self._written[request_id])

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._connection.sock.shutdown(2)
        self._connection.close()


@contextlib.contextmanager
def held(base: str, count: int):
    """`count` feeds open, idle, for as long as the block runs."""
    clients = [_Client(base, {}) for _ in range(count)]
    for client in clients:
        client.start()
    try:
        yield
    finally:
        for client in clients:
            client.close()


def worker_memory(base: str) -> int:
    """The resident bytes of the one worker serving `base`: the gunicorn process bound to its
    port whose parent is too."""
    bound = f"127.0.0.1:{urlsplit(base).port}"
    processes = {process.pid: process for process in psutil.process_iter(["cmdline", "ppid"])
                 if bound in (process.info["cmdline"] or [])}  # fmt: skip
    [worker] = [process for process in processes.values() if process.info["ppid"] in processes]
    return worker.memory_info().rss


def _write(db, seconds: float, written: dict) -> list[ObjectId]:
    """The heavy organization's requests, one at a time at WRITES_PER_S; each id's time of
    writing in `written`."""
    heavy, member = dataset.object_id(1, 0), dataset.object_id(2, 0)
    ids, interval = [], 1 / WRITES_PER_S
    started = time.perf_counter()
    for n in range(int(seconds * WRITES_PER_S)):
        time.sleep(max(0.0, started + n * interval - time.perf_counter()))
        stamp = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        request_id = ObjectId()
        written[str(request_id)] = time.time()  # from before the write: its time counts
        db.botrequests.insert_one({
            "_id": request_id, "bot": None, "createdBy": member, "organization": heavy,
            "inputs": {"prompt": "feed bench"}, "response": {"message": "ok"},
            "ip": "203.0.113.9", "createdAt": stamp, "updatedAt": stamp,
        })  # fmt: skip
        ids.append(request_id)
    return ids


def events(base: str, db, clients: int, seconds: float) -> dict:
    """`clients` feeds read while the writer writes for `seconds`."""
    written: dict[str, float] = {}
    readers = [_Client(base, written) for _ in range(clients)]
    for reader in readers:
        reader.start()
    time.sleep(0.5)  # every feed is past its first part, following the stream
    try:
        ids = _write(db, seconds, written)
        time.sleep(SETTLE_SECONDS)
    finally:
        for reader in readers:
            reader.close()
    db.botrequests.delete_many({"_id": {"$in": ids}})
    latencies = sorted(latency for reader in readers for latency in reader.latencies)
    delivered = len(latencies)
    return {
        "clients": clients,
        "writes": len(ids),
        "events": delivered,
        "missed": len(ids) * clients - delivered,
        "events_per_s": round(delivered / seconds, 1),
        "events_per_s_per_client": round(delivered / seconds / clients, 1),
        "latency_p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "latency_p99_ms": round(latencies[int(0.99 * (delivered - 1))] * 1000, 1)
        if latencies
        else None,
        "latency_max_ms": round(latencies[-1] * 1000, 1) if latencies else None,
    }
