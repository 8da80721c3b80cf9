"""`make bench-instructions`: the instructions a cached bot by slug costs the app, and what the
same answer costs bare Flask (bench/bare.py), counted by valgrind's callgrind.

A count is the same from run to run, where a rate on these shared cores moves by a fifth, so
it judges a change to the per-request path that a rate cannot tell from noise
(docs/decisions/2026-11-29-what-a-request-costs.md). Each app answers the benchmark's bot by
slug (the data set of `make bench`, BENCH_SCALE) through its WSGI callable, in this process
under callgrind: warmed, then COUNTED requests between a zeroing and a dump of the counters,
of the calling thread only. gunicorn's own work is not in it. Needs `valgrind`; results go to
bench/results/instructions.json.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import dataset
from bench.run import BARE_ROWS, RESULTS, VAR, data_set, endpoints, env_number

COUNTED = 200
WARM = 100


def _count(side: str, uri: str, db_name: str, path: str, token: str) -> None:
    """Under callgrind: `side`'s app answers `path` WARM times, then COUNTED times between
    a zeroing and a dump of the counters."""
    if side == "bare":
        from bench.bare import create_app

        app = create_app()
    else:
        from app import create_app

        settings = {"MONGODB_URI": uri, "MONGODB_DB": db_name}
        app = create_app({**settings, "RATELIMIT_ENABLED": False, "TRACING": False})
    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "bench",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Bearer {token}", "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }  # fmt: skip

    def answer() -> str:
        statuses = []

        def start(status, headers, error=None):
            statuses.append(status)

        body = app({**environ, "wsgi.input": io.BytesIO()}, start)
        b"".join(body)
        body.close()
        return statuses[0]

    changes = app.extensions.get("changes")
    deadline = time.monotonic() + 60
    while changes is not None and not changes.live and time.monotonic() < deadline:
        answer()
        time.sleep(0.05)
    for _ in range(WARM):
        assert answer().startswith("200"), answer()
    subprocess.run(["callgrind_control", "--zero", str(os.getpid())], check=True)
    for _ in range(COUNTED):
        answer()
    subprocess.run(["callgrind_control", "--dump", str(os.getpid())], check=True)
    if changes is not None:
        changes.stop()
        app.extensions["request_feeds"].stream.stop()


def _instructions(side: str, uri: str, db_name: str, path: str, token: str, env: dict) -> float:
    """Per request, from the dump of this process's calling thread (its file ends `.1-01`)."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes",
             f"--callgrind-out-file={folder}/cg.%p",
             sys.executable, "-m", "bench.instructions", side, uri, db_name, path, token],
            check=True, capture_output=True, env={**os.environ, **env},
        )  # fmt: skip
        [dump] = Path(folder).glob("cg.*.1-01")
        lines = dump.read_text().splitlines()
        summary = next(line for line in lines if line.startswith("summary:"))
        return int(summary.split()[1]) / COUNTED


def main() -> None:
    scale = dataset.Scale.of(env_number("BENCH_SCALE", 1))
    with contextlib.ExitStack() as stack:
        uri, db = data_set(stack, scale)
        [row] = [endpoint for endpoint in endpoints(db) if endpoint.name in BARE_ROWS]
        path, token = row.path, row.token
        body = VAR / "bare-body.json"
        body.write_bytes(b'{"bench": "a body as long as a bot"}'.ljust(420))
        bare_env = {"BARE_BODY": str(body), "BARE_TOKEN": token}
        figures = {
            "app": _instructions("app", uri, db.name, path, token, {}),
            "bare": _instructions("bare", uri, db.name, path, token, bare_env),
        }
    figures["ratio"] = figures["app"] / figures["bare"]
    print(
        f"a cached bot by slug: {figures['app']:,.0f} instructions in the app, "
        f"{figures['bare']:,.0f} in bare Flask ({figures['ratio']:.2f} times)",
        flush=True,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "instructions.json").write_text(json.dumps({"path": path, **figures}, indent=2))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        _count(*sys.argv[1:])
    else:
        main()
