"""A throwaway MongoDB wire-protocol server (SecantusDB) for the test session.

`free_port` is offered here too, for the tests that start their own servers beside it.
"""

import shutil
import tempfile
from pathlib import Path

from runtime.embedded_database import EmbeddedDatabase, free_port

__all__ = ["WireServer", "free_port"]


class WireServer(EmbeddedDatabase):
    """On a free loopback port, with its data in a temporary folder that close() removes.

    Test commands are on: `configureFailPoint` makes the server fail chosen commands.
    """

    options = ("--enable-test-commands",)

    def __init__(self):
        self._folder = Path(tempfile.mkdtemp(prefix="secantus-test-"))
        super().__init__(self._folder / "db", self._folder / "server.log")

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self._folder, ignore_errors=True)


class StandaloneServer(WireServer):
    """A server that is no replica set, so no change stream can be opened on it."""

    options = (*WireServer.options, "--standalone")
