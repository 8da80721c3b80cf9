"""The embedded MongoDB-wire-protocol server (SecantusDB's `secantusd-py`), as `make run`,
the tests and the benchmark start it: on a loopback port, ready once it answers a ping.

One place, so that all three find the daemon, wait for it and stop it the same way, and
fail with the same sentence when it does not come up. Not for production: nothing the
service runs at request time imports it.
"""

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pymongo

DAEMON = "secantusd-py"
START_TIMEOUT = 60.0


class StartError(RuntimeError):
    """The daemon is missing, exited, or did not answer in time; the message says which."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _daemon() -> str:
    """On PATH, or beside this Python: `.venv/bin` is not on PATH when called by full path."""
    found = shutil.which(DAEMON) or str(Path(sys.executable).with_name(DAEMON))
    if not Path(found).exists():
        raise StartError(f"{DAEMON} is missing: `make install` installs it (SecantusDB).")
    return found


class EmbeddedDatabase:
    """One daemon with its data in `data` and its output appended to `log`.

    It can be stopped and started again on the same port and data, as an outage would.
    """

    # More `secantusd-py` flags, for a subclass.
    options: tuple[str, ...] = ()

    def __init__(self, data: Path, log: Path, port: int | None = None):
        self.data = data
        self.log = log
        self.port = port or free_port()
        self.uri = f"mongodb://127.0.0.1:{self.port}/?directConnection=true"
        self.process: subprocess.Popen | None = None

    def answers(self) -> bool:
        client = pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=500)
        try:
            client.admin.command("ping")
            return True
        except pymongo.errors.PyMongoError:
            return False
        finally:
            client.close()

    def launch(self, *, own_session: bool = False) -> None:
        """Start the process without waiting for it; `own_session` keeps a terminal's Ctrl-C
        from reaching it, for a caller that stops it itself after what uses it."""
        daemon = _daemon()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as output:
            self.process = subprocess.Popen(
                [daemon, "--host", "127.0.0.1", "--port", str(self.port)]
                + ["--storage-path", str(self.data), "--log-level", "WARNING", *self.options],
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=own_session,
            )

    def wait(self, timeout: float = START_TIMEOUT) -> None:
        """Until it answers; a StartError with the end of its log if it exits or is late."""
        deadline = time.monotonic() + timeout
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise StartError(
                    f"The embedded database did not start; {self.log} ends:\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def start(self, timeout: float = START_TIMEOUT) -> "EmbeddedDatabase":
        self.launch()
        self.wait(timeout)
        return self

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""

    def stop(self, timeout: float = 15.0) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
