"""A real `gunicorn wsgi:app` (with `gunicorn.conf.py`) on a free loopback port, for tests of
what only a deployment shows: several workers, forwarded headers, gunicorn's own errors.

`connections_per_worker` opens keep-alive connections until every worker holds one, found by
asking the operating system which worker process owns the server side of each connection.
That is how a test reaches "every worker" without the service revealing anything about itself.
"""

import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from tests.support import ROOT
from tests.support.wire_server import free_port

GUNICORN = Path(sys.executable).with_name("gunicorn")


class GunicornServer:
    def __init__(
        self, env: dict[str, str], workers: int = 2, threads: int = 2, app: str = "wsgi:app"
    ):
        self.port = free_port()
        self.app = app
        self.workers = workers
        # A developer's tracing settings stay out: a test that traces sets its own.
        untraced = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
        self.env = {
            **untraced,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "GUNICORN_WORKERS": str(workers),
            "GUNICORN_THREADS": str(threads),
            **env,
        }
        self._log_path = Path(tempfile.mkstemp(prefix="gunicorn-test-", suffix=".log")[1])
        self._process: subprocess.Popen | None = None

    def start(self, timeout: float = 30.0) -> "GunicornServer":
        with open(self._log_path, "wb") as log:
            self._process = subprocess.Popen(
                [str(GUNICORN), self.app, "--keep-alive", "60"],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while len(self.worker_pids()) < self.workers or not self._answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"gunicorn did not start:\n{self.log()[-3000:]}")
            time.sleep(0.1)
        return self

    def _answers(self) -> bool:
        try:
            return self.request("GET", "/healthz")[0] == 200
        except OSError:
            return False

    @property
    def master_pid(self) -> int:
        return self._process.pid

    def worker_pids(self) -> set[int]:
        return {child.pid for child in psutil.Process(self._process.pid).children()}

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def request(self, method: str, path: str, headers: dict | None = None, connection=None):
        """(status, headers, JSON body or None) for one request, on `connection` if given."""
        own = connection is None
        connection = connection or self.connection()
        try:
            connection.request(method, path, headers=headers or {})
            response = connection.getresponse()
            body = response.read()
            parsed = (
                json.loads(body)
                if body and "json" in response.getheader("Content-Type", "")
                else None
            )
            return response.status, dict(response.getheaders()), parsed
        finally:
            if own:
                connection.close()

    def _owner(self, connection: http.client.HTTPConnection) -> int | None:
        client_port = connection.sock.getsockname()[1]
        for pid in self.worker_pids():
            for server_side in psutil.Process(pid).net_connections(kind="tcp"):
                if server_side.raddr and server_side.raddr.port == client_port:
                    return pid
        return None

    def connections_per_worker(self, attempts: int = 200) -> dict[int, http.client.HTTPConnection]:
        """One open keep-alive connection held by each worker process."""
        found: dict[int, http.client.HTTPConnection] = {}
        spare = []
        for _ in range(attempts):
            connection = self.connection()
            self.request("GET", "/healthz", connection=connection)
            owner = self._owner(connection)
            if owner is not None and owner not in found:
                found[owner] = connection
            else:
                spare.append(connection)
            if len(found) == self.workers:
                break
        for connection in spare:
            connection.close()
        if len(found) < self.workers:
            raise RuntimeError(f"reached {len(found)} of {self.workers} workers")
        return found

    def log(self) -> str:
        return self._log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self._process and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def close(self) -> None:
        self.stop()
        self._log_path.unlink(missing_ok=True)

    def __enter__(self) -> "GunicornServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()


def servers_over(uri: str, db_name: str):
    """For a fixture: yields a function that starts gunicorn over `db_name` with extra
    environment (and GunicornServer's options), then stops every one it started."""
    servers = []

    def start(env: dict | None = None, **options) -> GunicornServer:
        settings = {"MONGODB_URI": uri, "MONGODB_DB": db_name, **(env or {})}
        servers.append(GunicornServer(settings, **options).start())
        return servers[-1]

    yield start
    for server in servers:
        server.close()
