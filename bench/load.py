"""`make bench-load`: how long `flask db load` takes on a real export, then `flask db init`.

The export is the benchmark's data set (bench/dataset.py) at BENCH_DOCUMENTS documents in
all (default 50,000, most of them bot requests), written as MongoDB Extended JSON the way
`mongoexport` would. Each command runs as an operator runs it, a `flask` process against the
embedded database (or `MONGODB_URI`), into a fresh database: the first load inserts every
document, the second replaces each one, then `db init` builds the indexes. Results go to
bench/results/load.json.
"""

import contextlib
import json
import os
import subprocess
import sys
import time
import uuid

import mongomock
import pymongo
from bson import json_util

from bench import dataset, servers
from bench.run import RESULTS, VAR, env_number, machine
from schemas.loaded_documents import COLLECTIONS

FLASK = servers.BIN / "flask"


def scale_of(documents: int) -> dataset.Scale:
    """Organizations, users and bots as a small writer holds them; requests fill the rest."""
    scale = dataset.Scale(organizations=50, users=1_000, bots=1_000, requests=0)
    tokens = scale.users + scale.organizations
    services, tags = max(1, scale.bots // 125), max(1, scale.bots // 100)
    others = scale.organizations + scale.users + tokens + services + tags + scale.bots
    return dataset.Scale(scale.organizations, scale.users, scale.bots, documents - others)


def export(documents: int, path) -> int:
    db = mongomock.MongoClient()["export"]
    dataset.generate(db, scale_of(documents))
    data = {name: list(db[name].find()) for name in COLLECTIONS}
    path.write_text(json_util.dumps(data))
    return sum(len(found) for found in data.values())


def run(uri: str, db_name: str, *args: str) -> tuple[float, str]:
    environment = {**os.environ, "MONGODB_URI": uri, "MONGODB_DB": db_name}
    started = time.perf_counter()
    result = subprocess.run(
        [str(FLASK), "--app", "app", "db", *args],
        cwd=servers.ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if result.returncode:
        sys.exit(f"flask db {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return seconds, result.stdout + result.stderr


def main() -> None:
    wanted = int(env_number("BENCH_DOCUMENTS", 50_000))
    RESULTS.mkdir(parents=True, exist_ok=True)
    VAR.mkdir(parents=True, exist_ok=True)
    path = VAR / f"export-{wanted}.json"
    count = export(wanted, path)
    print(f"{path}: {count} documents, {path.stat().st_size / 2**20:.1f} MiB", flush=True)
    steps = {}
    with contextlib.ExitStack() as stack:
        uri = os.environ.get("MONGODB_URI") or stack.enter_context(servers.embedded_database(VAR))
        db_name = f"bench_load_{uuid.uuid4().hex[:8]}"
        client = pymongo.MongoClient(uri)
        stack.callback(client.close)
        stack.callback(client.drop_database, db_name)
        for step, args in [
            ("load, all new", ("load", str(path))),
            ("load again, all replaced", ("load", str(path))),
            ("init", ("init",)),
        ]:
            seconds, output = run(uri, db_name, *args)
            steps[step] = round(seconds, 1)
            print(f"$ flask db {' '.join(args)}    # {seconds:.1f} s\n{output}", flush=True)
    engine = "MONGODB_URI" if os.environ.get("MONGODB_URI") else "SecantusDB (secantusd-py)"
    report = {"machine": machine(), "engine": engine, "documents": count, "seconds": steps}
    (RESULTS / "load.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {RESULTS / 'load.json'}")


if __name__ == "__main__":
    main()
