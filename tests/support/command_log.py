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
