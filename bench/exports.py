"""`make bench`'s export rows: the heavy organization's requests exported as NDJSON through
gunicorn, against the floor: the same requests, in the same order, iterated from one pymongo
cursor (no HTTP, no joins, no serialization). Rows per second on each side, their ratio, and
the time to the first bytes of the export, warm (each export's first run, with the workers'
caches cold, is kept beside it): the embedded engine reads the summaries a cold cache lacks
by `_id`, which costs it far more than a range."""

import datetime as dt
import time
import urllib.request

from bench import dataset


def _http(url: str, token: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    rows, first = 0, None
    with urllib.request.urlopen(request, timeout=3600) as response:
        while chunk := response.read1(1 << 20):
            first = first or time.perf_counter() - started
            rows += chunk.count(b"\n")
    seconds = time.perf_counter() - started
    return {"rows": rows, "seconds": round(seconds, 2), "first_bytes_s": round(first or 0, 3),
            "rows_per_s": round(rows / seconds, 1)}  # fmt: skip


def _floor(db, organization, start: dt.datetime, end: dt.datetime) -> dict:
    started = time.perf_counter()
    cursor = db.botrequests.find(
        {"organization": organization, "createdAt": {"$gte": start, "$lt": end}},
        sort=[("createdAt", -1), ("_id", -1)],
        batch_size=1000,
    )
    rows = sum(1 for _ in cursor)
    seconds = time.perf_counter() - started
    return {"rows": rows, "seconds": round(seconds, 2), "rows_per_s": round(rows / seconds, 1)}


RUNS = 3


def _median(runs: list[dict]) -> dict:
    return sorted(runs, key=lambda run: run["rows_per_s"])[len(runs) // 2]


def measure(base: str, db, days: int) -> dict:
    """The last `days` of the data set, as the export's default period is the last 30."""
    heavy, token = dataset.object_id(1, 0), dataset.organization_token(0)
    end = dataset.START + dataset.SPAN
    start = end - dt.timedelta(days=days)
    query = f"createdFrom={start:%Y-%m-%d}&createdTo={end:%Y-%m-%d}"
    url = f"{base}/v1/organizations/{heavy}/requests/export?{query}"
    # The first runs warm the workers' caches (tokens, summaries), as a service that runs has
    # them: one for each of two workers, whichever takes it; the first is kept apart. Then
    # the median of three runs on each side.
    cold = _http(url, token)
    _http(url, token)
    http = _median([_http(url, token) for _ in range(RUNS)]) | {
        "cold_rows_per_s": cold["rows_per_s"]
    }
    floor = _median([_floor(db, heavy, start, end) for _ in range(RUNS)])
    assert http["rows"] == floor["rows"], (http, floor)
    return {"endpoint": f"export ({days} days)", "http": http, "floor": floor,
            "ratio_rows_per_s": round(http["rows_per_s"] / floor["rows_per_s"], 3)}  # fmt: skip
