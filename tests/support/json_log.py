"""Reading the service's JSON log lines, from a server's output or from this process."""

import contextlib
import io
import json
import logging

import pytest

from runtime import logs
from web.request_ids import RequestIdFilter


def parse_lines(text: str) -> list[dict]:
    """Each line as JSON; a line that is not fails the test, quoted."""
    lines = []
    for line in text.splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"not a JSON line: {line!r}")
    return lines


@contextlib.contextmanager
def capture():
    """The configured handler's formatter and filter, on a stream of the test's own beside
    pytest's handlers; yields a function that returns the lines so far."""
    formatter = logs.CONFIG["formatters"]["json"]
    options = {key: value for key, value in formatter.items() if key != "()"}
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter["()"](**options))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lambda: parse_lines(stream.getvalue())
    finally:
        root.removeHandler(handler)
