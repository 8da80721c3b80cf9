"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`),
for tests that must watch a page while something else happens: a live feed's `EventSource`
while the test writes, and while gunicorn replaces a worker. `--dump-dom` cannot: it reads a
page once, when the page is done, and a page that holds a stream open is never done.

The protocol's messages are JSON, each ended by a NUL byte; Chromium reads them from file
descriptor 3 and writes to 4. No websocket or driver package is needed.
"""

import contextlib
import itertools
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

PROFILE_REMOVAL_SECONDS = 10


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One page of a headless Chromium, opened at `url`, to run JavaScript in."""

    def __init__(self, url: str):
        self._profile = tempfile.TemporaryDirectory()
        commands_in, self._commands = os.pipe()
        self._answers, answers_out = os.pipe()
        # bash puts the pipe's ends at 3 and 4 and becomes Chromium: no code runs in the
        # forked child, which a process with threads (pymongo's, pytest's) must not do.
        self._process = subprocess.Popen(
            [
                "bash", "-c", f'exec "$0" "$@" 3<&{commands_in} 4>&{answers_out}',
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile.name}",
                url,
            ],
            pass_fds=(commands_in, answers_out),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(commands_in)
        os.close(answers_out)  # Chromium's alone: its exit ends the reader below
        self._ids = itertools.count(1)
        self._replies: dict[int, queue.Queue] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._session = None
        try:
            self._session = self._page_session(url)
            # The target exists before its first navigation: a script run then would be lost.
            self.wait_for(f"location.href.startsWith({json.dumps(url)}) && "
                          "document.readyState === 'complete'")  # fmt: skip
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        buffer = b""
        with open(self._answers, "rb", buffering=0) as answers:
            while chunk := answers.read(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for message in messages:
                    reply = json.loads(message)
                    if "id" in reply and reply["id"] in self._replies:
                        self._replies[reply["id"]].put(reply)

    def _send(self, method: str, timeout: float = 30.0, **params) -> dict:
        message_id = next(self._ids)
        self._replies[message_id] = replies = queue.Queue()
        message = {"id": message_id, "method": method, "params": params}
        if self._session is not None:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        reply = replies.get(timeout=timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def _page_session(self, url: str) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            targets = self._send("Target.getTargets")["targetInfos"]
            pages = [t for t in targets if t["type"] == "page" and t["url"].startswith(url)]
            if pages:
                attached = self._send("Target.attachToTarget", targetId=pages[0]["targetId"],
                                      flatten=True)  # fmt: skip
                return attached["sessionId"]
            time.sleep(0.1)
        raise RuntimeError(f"Chromium opened no page at {url}")

    def evaluate(self, expression: str):
        """The value of `expression` in the page (a promise's, once it settles)."""
        result = self._send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15.0):
        """The first truthy value of `expression`, read every 50 ms."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"never true in the page: {expression}")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._commands)
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(5)  # the answers' pipe ends with Chromium
        self._remove_profile()

    def _remove_profile(self) -> None:
        """Chromium's helper processes may still write to the profile for a moment after
        Chromium itself has exited (seen with two pages open at once)."""
        deadline = time.monotonic() + PROFILE_REMOVAL_SECONDS
        while True:
            try:
                self._profile.cleanup()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def __enter__(self) -> "Page":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
