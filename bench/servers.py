"""The processes a benchmark runs: the embedded database and gunicorn, on free loopback ports.

Both are context managers that stop what they started, whatever happens in between.
"""

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pymongo

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# The settings README.md (Performance) recommends, chosen from the measurements it shows.
GUNICORN = {"worker-class": "gthread", "workers": "2", "threads": "4", "keep-alive": "5"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    folder.mkdir(parents=True, exist_ok=True)
    daemon = shutil.which("secantusd-py") or str(BIN / "secantusd-py")
    port = free_port()
    uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"
    log = folder / "secantusd.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [daemon, "--host", "127.0.0.1", "--port", str(port), "--storage-path",
             str(folder / "data"), "--log-level", "WARNING"],
            stdout=output,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=500)

        def ready() -> bool:
            with contextlib.suppress(pymongo.errors.PyMongoError):
                return bool(client.admin.command("ping"))
            return False

        _wait(ready, process, "secantusd-py", log)
        client.close()
        yield uri
    finally:
        _stop(process)


@contextlib.contextmanager
def gunicorn(uri: str, db_name: str, settings: dict, probe: tuple[str, str], log: Path):
    """`gunicorn wsgi:app` on a free loopback port; yields its base URL once `probe` answers."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    flags = [item for name, value in settings.items() for item in (f"--{name}", value)]
    environment = {
        **os.environ,
        "MONGODB_URI": uri,
        "MONGODB_DB": db_name,
        "RATELIMIT_ENABLED": "false",
    }
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), "wsgi:app", "--bind", f"127.0.0.1:{port}",
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
