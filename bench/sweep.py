"""`python -m bench.sweep`: gunicorn settings compared under the same load.

Each setting serves the default data set (run `make bench` first) and takes wrk's load,
BENCH_SECONDS (3) each, at 4 and 16 connections, on: `/healthz` (the app and gunicorn
alone, no database), a bot by slug (one quick query), and the same bot by slug while two
other connections keep asking for a user's requests (a slow list): the case where a
worker held by a slow request makes quick ones wait. Results go to
bench/results/gunicorn.json; docs/performance.md explains the choice.
"""

import contextlib
import json
import threading

import pymongo

from bench import dataset, servers
from bench.run import RESULTS, VAR, Endpoint, endpoints, env_number, load, machine, prepare

SETTINGS = [
    {"worker-class": "sync", "workers": "2"},
    {"worker-class": "sync", "workers": "4"},
    {"worker-class": "gthread", "workers": "1", "threads": "8", "keep-alive": "5"},
    {"worker-class": "gthread", "workers": "2", "threads": "4", "keep-alive": "5"},
    {"worker-class": "gthread", "workers": "4", "threads": "2", "keep-alive": "5"},
    {"worker-class": "gthread", "workers": "2", "threads": "4", "keep-alive": "0"},
]


def _measure(base, endpoint, seconds, connections, background=None) -> dict:
    """wrk on `endpoint`, with `background` under load from two other connections meanwhile."""
    if background is None:
        return load(base, endpoint, seconds, connections)
    worker = threading.Thread(target=load, args=(base, background, seconds + 1, 2))
    worker.start()
    try:
        return load(base, endpoint, seconds, connections)
    finally:
        worker.join()


def main() -> None:
    seconds = int(env_number("BENCH_SECONDS", 3))
    rows = []
    with contextlib.ExitStack() as stack:
        uri = stack.enter_context(servers.embedded_database(VAR))
        client = pymongo.MongoClient(uri, datetime_conversion="DATETIME_AUTO")
        stack.callback(client.close)
        scale = dataset.Scale.of(env_number("BENCH_SCALE", 1))
        db = client[f"bench_{scale.requests}"]
        prepare(db, scale)
        by_name = {endpoint.name: endpoint for endpoint in endpoints(db)}
        slug, slow = by_name["bot by slug"], by_name["user's requests"]
        cases = [
            ("healthz", Endpoint("healthz", "/healthz", slug.token, floor=None), None),
            ("bot by slug", slug, None),
            ("bot by slug beside a slow list", slug, slow),
        ]
        for settings in SETTINGS:
            probe = (slug.path, slug.token)
            with servers.gunicorn(uri, db.name, settings, probe, VAR / "gunicorn.log") as base:
                for case, endpoint, background in cases:
                    for clients in (4, 16):
                        result = _measure(base, endpoint, seconds, clients, background)
                        rows.append({"settings": settings, "case": case,
                                     "connections": clients, **result})  # fmt: skip
                        print(
                            f"{settings} {case:31s} c={clients:<3} "
                            f"{result['requests_per_s']:7.1f}/s p50 {result['p50_ms']:7.1f} "
                            f"p99 {result['p99_ms']:7.1f} ms errors {result['errors']}",
                            flush=True,
                        )
    path = RESULTS / "gunicorn.json"
    path.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
