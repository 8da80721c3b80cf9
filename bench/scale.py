"""`make bench-scale`: page-1 and deep-page latency as the number of bot requests grows.

For each size in BENCH_SIZES (default 20000,200000; 2000000 by hand: generating it takes
long), the data set holds that many requests beside the default organizations, users and
bots, in its own database (reused when already there). Each endpoint is called through the
app in process (no HTTP server, no concurrency), once to warm up (its time is kept: a list
oldest first reads its history once) and BENCH_REPEAT (5) times measured. Results go to
bench/results/scale.json.
"""

import contextlib
import json
import logging
import os
import statistics
import time

import pymongo

from app import create_app
from bench import dataset, servers
from bench.run import RESULTS, VAR, endpoints, env_number, machine, prepare
from runtime import logs

CURVE = ("bots list", "user's requests", "user's requests (count=none)",
         "organization's requests", "deep page (5000)")  # fmt: skip
OLDEST_FIRST = "oldest first (heavy)"


def calls(db) -> list[tuple[str, str, str]]:
    """(name, path, token) of the curve's rows: make bench's, and the heavy organization's
    page 1 oldest first."""
    rows = [(e.name, e.path, e.token) for e in endpoints(db) if e.name in CURVE]
    heavy = dataset.object_id(1, 0)
    path = f"/v1/organizations/{heavy}/requests/?sortBy=createdAt:asc&count=none"
    return [*rows, (OLDEST_FIRST, path, dataset.organization_token(0))]


def measure(client, db_name: str, repeat: int) -> dict:
    # No deadline, as for the floor of make bench: the deep page at 2,000,000 takes a minute.
    config = {"MONGODB_DB": db_name, "RATELIMIT_ENABLED": False, "MONGODB_TIMEOUT_MS": 600_000}
    app = create_app(config, mongo_client=client)
    api = app.test_client()
    found = {}
    for name, path, token in calls(client[db_name]):
        headers = {"Authorization": f"Bearer {token}"}
        started = time.perf_counter()
        response = api.get(path, headers=headers)
        first = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, (path, response.status_code)
        timings = []
        for _ in range(repeat):
            started = time.perf_counter()
            api.get(path, headers=headers)
            timings.append((time.perf_counter() - started) * 1000)
        found[name] = {
            "first_ms": first,
            "median_ms": statistics.median(timings),
            "max_ms": max(timings),
            "total_results": response.get_json().get("totalResults"),
        }
    return found


def main() -> None:
    logs.configure()
    logging.getLogger().setLevel(logging.WARNING)  # no log line per request in the measurements
    sizes = [int(size) for size in os.environ.get("BENCH_SIZES", "20000,200000").split(",")]
    repeat = int(env_number("BENCH_REPEAT", 5))
    factor = env_number("BENCH_SCALE", 1)
    RESULTS.mkdir(parents=True, exist_ok=True)
    curve = []
    with contextlib.ExitStack() as stack:
        uri = os.environ.get("MONGODB_URI") or stack.enter_context(servers.embedded_database(VAR))
        client = pymongo.MongoClient(uri, datetime_conversion="DATETIME_AUTO")
        stack.callback(client.close)
        for size in sizes:
            scale = dataset.Scale.of(factor, requests=size)
            db = client[f"bench_{size}"]
            preparation = prepare(db, scale)
            found = measure(client, db.name, repeat)
            curve.append({"requests": size, "preparation_s": round(preparation, 1), **found})
            cells = "  ".join(f"{name} {row['median_ms']:.0f} ms" for name, row in found.items())
            print(f"{size:>9} requests: {cells}", flush=True)
    engine = "MONGODB_URI" if os.environ.get("MONGODB_URI") else "SecantusDB (secantusd-py)"
    report = {"machine": machine(), "engine": engine, "repeat": repeat}
    path = RESULTS / "scale.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    kept = [row for row in previous.get("curve", []) if row["requests"] not in sizes]
    report["curve"] = sorted(kept + curve, key=lambda row: row["requests"])
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
