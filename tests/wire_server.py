"""A throwaway MongoDB wire-protocol server (SecantusDB) for the test session."""

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pymongo


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _daemon() -> str:
    found = shutil.which("secantusd-py") or str(Path(sys.executable).with_name("secantusd-py"))
    if not Path(found).exists():
        raise RuntimeError("secantusd-py not found: install the project's dev dependencies")
    return found


class WireServer:
    """Starts `secantusd-py` on a free loopback port with its data in a temporary folder."""

    def __init__(self):
        self.port = free_port()
        self.uri = f"mongodb://127.0.0.1:{self.port}/?directConnection=true"
        self._data = tempfile.mkdtemp(prefix="secantus-test-")
        self._log = open(Path(self._data) / "server.log", "wb")  # noqa: SIM115
        self._process = None

    def start(self, timeout: float = 30.0) -> "WireServer":
        self._process = subprocess.Popen(
            [
                _daemon(),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--storage-path",
                str(Path(self._data) / "db"),
                "--log-level",
                "WARNING",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        client = pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=500)
        try:
            while True:
                try:
                    client.admin.command("ping")
                    return self
                except pymongo.errors.PyMongoError as error:
                    if self._process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"the wire-protocol server did not start: {self.log_tail()}"
                        ) from error
                    time.sleep(0.2)
        finally:
            client.close()

    def log_tail(self) -> str:
        self._log.flush()
        return (Path(self._data) / "server.log").read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        if self._process and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def close(self) -> None:
        self.stop()
        self._log.close()
        shutil.rmtree(self._data, ignore_errors=True)
