"""A Server-Sent Events client for tests: what an `EventSource` reads, line by line, from a
real connection (tests/deployment/test_feeds.py)."""

import http.client
import json
import time

from tests.support.factories import bearer


class EventStream:
    def __init__(self, port: int, path: str, headers: dict, timeout: float = 10.0):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.connection.request("GET", path, headers=headers)
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.headers = dict(self.response.getheaders())
        self.comments: list[str] = []

    def body(self):
        return json.loads(self.response.read())

    def next_event(self, timeout: float = 10.0) -> dict | None:
        """The next event, as {"event", "id", "data"} (data parsed), or None when the server
        ended the stream; fails the test after `timeout` without one."""
        deadline = time.monotonic() + timeout
        fields: dict = {}
        while True:
            self.connection.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                line = self.response.readline()
            except TimeoutError:
                raise AssertionError(f"no event within {timeout} s") from None
            if not line:
                return None
            text = line.decode().rstrip("\n")
            if text.startswith(":"):
                self.comments.append(text)
            elif text == "":
                if "data" in fields:
                    fields["data"] = json.loads(fields["data"])
                    return fields
                fields = {}
            else:
                name, _, value = text.partition(": ")
                fields[name] = value

    def close(self) -> None:
        self.connection.close()


def open_feed(server, scene, path="/v1/requests/feed", **headers) -> EventStream:
    """A feed of `scene`'s token, opened (a 200) on `server`."""
    stream = EventStream(server.port, path, {**bearer(scene["token"]), **headers})
    assert stream.status == 200, stream.body()
    return stream
