"""The commands a MongoClient sends, as pymongo's command monitoring reports them: what the
round-trip, index and cache tests count and read."""

import threading

from pymongo import monitoring


class CommandLog(monitoring.CommandListener):
    def __init__(self):
        self.commands: list[dict] = []
        self._lock = threading.Lock()

    def started(self, event):
        with self._lock:
            self.commands.append(event.command)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass

    def take(self) -> list[dict]:
        with self._lock:
            taken, self.commands = self.commands, []
        return taken

    def warm(self, client, url: str, headers: dict):
        """(commands, response) of a second GET of `url`: what a warm request sends."""
        assert client.get(url, headers=headers).status_code == 200, url
        self.take()
        response = client.get(url, headers=headers)
        assert response.status_code == 200, url
        return self.take(), response
