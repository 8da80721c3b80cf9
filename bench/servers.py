"""The processes a benchmark runs: the embedded database and gunicorn, on free loopback ports.

Both are context managers that stop what they started, whatever happens in between.
"""

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from runtime.embedded_database import EmbeddedDatabase, free_port

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# gunicorn.conf.py's settings, chosen from the measurements docs/performance.md shows, written
# out so that the results record them; the worker class is production's gthread worker.
GUNICORN = {
    "worker-class": "web.gunicorn_worker.JSONErrorWorker",
    "workers": "2",
    "threads": "4",
    "keep-alive": "5",
}


def settings_for(connections: int) -> dict:
    """GUNICORN, with a thread more than `connections` where it has fewer. A worker's database
    permits are one fewer than its threads, and a load's connections may all land on one
    worker: with fewer permits than connections, the embedded engine's slower lists would be
    refused now and then (docs/performance.md, Admission control), measuring admission
    control rather than the service."""
    return {**GUNICORN, "threads": str(max(int(GUNICORN["threads"]), connections + 1))}


def wrk(
    url: str, connections: int, duration: str, timeout: str = "30s", latency: bool = False
) -> list[str]:
    """The command line of `wrk` on `url` with bench/report.lua, which ends with one JSON line
    of results and sends BENCH_TOKEN (or follows SOAK_PLAN) from its environment."""
    return ["wrk", "-t1", f"-c{connections}", f"-d{duration}", "--timeout", timeout,
            *(["--latency"] if latency else []),
            "-s", str(ROOT / "bench" / "report.lua"), url]  # fmt: skip


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait(ready, process: subprocess.Popen, what: str, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start; {log} ends:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)


@contextlib.contextmanager
def embedded_database(folder: Path):
    """`secantusd-py` with its data in `folder`, kept between runs; yields its URI."""
    database = EmbeddedDatabase(folder / "data", folder / "secantusd.log")
    try:
        yield database.start().uri
    finally:
        database.stop()


@contextlib.contextmanager
def gunicorn(
    uri: str,
    db_name: str,
    settings: dict,
    probe: tuple[str, str],
    log: Path,
    env: dict | None = None,
    app: str = "wsgi:app",
):
    """gunicorn serving `app` on a free loopback port, with `env` besides the benchmark's own
    environment; yields its base URL once `probe` answers."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    flags = [item for name, value in settings.items() for item in (f"--{name}", value)]
    environment = {
        **os.environ,
        "MONGODB_URI": uri,
        "MONGODB_DB": db_name,
        "RATELIMIT_ENABLED": "false",
        # The floor has no deadline, and the embedded engine's deep page takes seconds: the
        # default 5 s would turn it into 503s under load. Set it to measure the deadline.
        "MONGODB_TIMEOUT_MS": os.environ.get("MONGODB_TIMEOUT_MS", "60000"),
        # The app derives its database permits from it (DATABASE_PERMITS, one fewer).
        "GUNICORN_THREADS": settings["threads"],
        **(env or {}),
    }
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), app, "--bind", f"127.0.0.1:{port}",
             "--no-control-socket", "--log-level", "warning", *flags],
            cwd=ROOT,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    path, token = probe

    def ready() -> bool:
        request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}"})
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status == 200
        return False

    try:
        _wait(ready, process, "gunicorn", log)
        yield base
    finally:
        _stop(process)
