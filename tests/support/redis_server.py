"""A throwaway Debian `redis-server` on a free loopback port, for a shared rate-limit store.

It can be stopped and started again on the same port, as an outage and a recovery look to
the service. Nothing is persisted: a restarted server starts empty, as after a failover.
"""

import shutil
import socket
import subprocess
import tempfile
import time

from tests.support.wire_server import free_port

BINARY = "redis-server"


def available() -> bool:
    return shutil.which(BINARY) is not None


class RedisServer:
    def __init__(self):
        self.port = free_port()
        self.uri = f"redis://127.0.0.1:{self.port}/0"
        self._data = tempfile.mkdtemp(prefix="redis-test-")
        self._process: subprocess.Popen | None = None

    def start(self, timeout: float = 10.0) -> "RedisServer":
        self._process = subprocess.Popen(
            [
                shutil.which(BINARY),
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                self._data,
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while not self._answers_ping():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)
        return self

    def _answers_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

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
        shutil.rmtree(self._data, ignore_errors=True)
