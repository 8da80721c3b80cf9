"""`python -m bench.sweep`: gunicorn settings compared under the same load.

Each setting serves the default data set (run `make bench` first) and takes wrk's load on
two quick endpoints (a bot by slug, one request), BENCH_SECONDS (3) each, at
BENCH_CONNECTIONS (4) and at 16 connections. The list endpoints are bound by the embedded
database's own single process whatever gunicorn does, so they would not tell settings apart.
Results go to bench/results/gunicorn.json; bench/README.md explains the choice.
"""

import contextlib
import json

import pymongo

from bench import dataset, servers
from bench.run import RESULTS, VAR, endpoints, env_number, load, machine, prepare

SETTINGS = [
    {"worker-class": "sync", "workers": "2"},
    {"worker-class": "sync", "workers": "4"},
    {"worker-class": "gthread", "workers": "1", "threads": "8", "keep-alive": "5"},
    {"worker-class": "gthread", "workers": "2", "threads": "4", "keep-alive": "5"},
    {"worker-class": "gthread", "workers": "4", "threads": "2", "keep-alive": "5"},
    {"worker-class": "gthread", "workers": "2", "threads": "4", "keep-alive": "0"},
]
MEASURED = ("bot by slug", "one request")


def main() -> None:
    seconds = int(env_number("BENCH_SECONDS", 3))
    connections = int(env_number("BENCH_CONNECTIONS", 4))
    rows = []
    with contextlib.ExitStack() as stack:
        uri = stack.enter_context(servers.embedded_database(VAR))
        client = pymongo.MongoClient(uri, datetime_conversion="DATETIME_AUTO")
        stack.callback(client.close)
        scale = dataset.Scale.of(env_number("BENCH_SCALE", 1))
        db = client[f"bench_{scale.requests}"]
        prepare(db, scale)
        kinds = [endpoint for endpoint in endpoints(db) if endpoint.name in MEASURED]
        for settings in SETTINGS:
            probe = (kinds[0].path, kinds[0].token)
            with servers.gunicorn(uri, db.name, settings, probe, VAR / "gunicorn.log") as base:
                for endpoint in kinds:
                    for clients in (connections, 16):
                        result = load(base, endpoint, seconds, clients)
                        rows.append({"settings": settings, "endpoint": endpoint.name,
                                     "connections": clients, **result})  # fmt: skip
                        print(
                            f"{settings} {endpoint.name:16s} c={clients:<3} "
                            f"{result['requests_per_s']:7.1f}/s p50 {result['p50_ms']:7.1f} "
                            f"p99 {result['p99_ms']:7.1f} ms errors {result['errors']}",
                            flush=True,
                        )
    path = RESULTS / "gunicorn.json"
    path.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
