"""`make bench-caches`: how soon the bot catalogue cache serves a list whose miss is slow,
right after the server starts and right after a rename, with connections asking it without
pause (docs/performance.md#after-a-start-and-after-a-rename).

For each count in BENCH_CLIENTS (default 2,4), a fresh gunicorn (`servers.settings_for`
that many connections, as `make bench` runs it, metrics on) serves the benchmark's data set
(BENCH_SCALE, BENCH_REQUESTS as `make bench`); that many connections ask the bot list's page
1 sorted by name from its start; at RENAME_SECONDS (6) a bot of that page is renamed, and
put back afterwards. The share of answers that the catalogue cache served (its hits on the
metrics port, against every answer, refusals included), from 3 s after the start to the
rename, and from 3 s after the rename to the end (BENCH_SECONDS, 12). Results go to
bench/results/caches.json.
"""

import contextlib
import http.client
import json
import os
import threading
import time
import urllib.parse
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from bench import dataset, servers
from bench.run import RESULTS, VAR, data_set, env_number, machine
from runtime.embedded_database import free_port

PAGE_ONE = "/v1/bots/?limit=10&page=1&sortBy=name:asc"
SETTLE = 3.0  # seconds after the start, and after the rename, that the shares leave out


def _lookups(port: int) -> dict:
    """The catalogue cache's lookups so far, by result, summed over the workers."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = {"hit": 0.0, "miss": 0.0, "off": 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "botcatalogue_cache_lookups_total":
                if sample.labels["cache"] == "catalogue":
                    found[sample.labels["result"]] += sample.value
    return found


def _ask(base: str, token: str, stop: threading.Event, answers: list) -> None:
    address = urllib.parse.urlparse(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)
    while not stop.is_set():
        asked = time.monotonic()
        connection.request("GET", PAGE_ONE, headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        response.read()
        answers.append((asked, response.status))
    connection.close()


def _window(answers: list, lookups: tuple[dict, dict], start: float, end: float) -> dict:
    """The answers asked between `start` and `end`, and the cache's lookups meanwhile."""
    before, after = lookups
    asked = [status for at, status in answers if start <= at < end]
    counted = {result: after[result] - before[result] for result in after}
    return {
        "answers": len(asked),
        "refused": sum(status != 200 for status in asked),
        "lookups": counted,
        "share_from_cache": min(1.0, counted["hit"] / max(1, len(asked))),
    }


def run(uri: str, db, clients: int, seconds: float, rename_at: float) -> dict:
    port = free_port()
    stop, answers = threading.Event(), []
    bot = db.bots.find_one({"isPublic": True}, sort=[("name", 1)])
    settings = servers.settings_for(clients)
    log = VAR / "gunicorn-caches.log"
    with servers.gunicorn(
        uri, db.name, settings, ("/healthz", ""), log, env={"METRICS_PORT": str(port)}
    ) as base:
        started = time.monotonic()
        threads = [
            threading.Thread(target=_ask, args=(base, dataset.user_token(0), stop, answers))
            for _ in range(clients)
        ]
        for thread in threads:
            thread.start()
        try:
            time.sleep(SETTLE)
            settled, at_settled = _lookups(port), time.monotonic()
            time.sleep(max(0.0, started + rename_at - time.monotonic()))
            renaming, at_renaming = _lookups(port), time.monotonic()
            db.bots.update_one({"_id": bot["_id"]}, {"$set": {"name": bot["name"] + " (renamed)"}})
            time.sleep(SETTLE)
            renamed, at_renamed = _lookups(port), time.monotonic()
            time.sleep(max(0.0, started + seconds - time.monotonic()))
            end, at_end = _lookups(port), time.monotonic()
        finally:
            stop.set()
            for thread in threads:
                thread.join()
            db.bots.update_one({"_id": bot["_id"]}, {"$set": {"name": bot["name"]}})
    return {
        "connections": clients,
        "threads": settings["threads"],
        "after_start": _window(answers, (settled, renaming), at_settled, at_renaming),
        "after_rename": _window(answers, (renamed, end), at_renamed, at_end),
        "answers": len(answers),
        "refused": sum(status != 200 for _, status in answers),
    }


def main() -> None:
    scale = dataset.Scale.of(
        env_number("BENCH_SCALE", 1),
        int(os.environ["BENCH_REQUESTS"]) if os.environ.get("BENCH_REQUESTS") else None,
    )
    counts = [int(n) for n in os.environ.get("BENCH_CLIENTS", "2,4").split(",")]
    seconds = env_number("BENCH_SECONDS", 12)
    rename_at = env_number("RENAME_SECONDS", 6)
    RESULTS.mkdir(parents=True, exist_ok=True)
    VAR.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        uri, db = data_set(stack, scale)
        rows = []
        for clients in counts:
            rows.append(run(uri, db, clients, seconds, rename_at))
            row = rows[-1]
            print(
                f"{clients} connections: from {SETTLE:.0f} s after the start "
                f"{row['after_start']['share_from_cache']:.1%} of answers from the cache, "
                f"after the rename {row['after_rename']['share_from_cache']:.1%}; "
                f"{row['refused']} of {row['answers']} answers not 200",
                flush=True,
            )
    results = {"machine": machine(), "scale": vars(scale), "gunicorn": servers.GUNICORN,
               "seconds": seconds, "rename_at": rename_at, "rows": rows}  # fmt: skip
    (RESULTS / "caches.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
