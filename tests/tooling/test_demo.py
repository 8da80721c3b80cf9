"""commands/demo.py: the requests it generates over demo.json, and what ties the two together."""

import datetime as dt
import json
import string

from commands import demo

NOW = dt.datetime(2026, 5, 1, 12, 0)


def _bots() -> list[dict]:
    return json.loads(demo.DATA_FILE.read_text(encoding="utf-8"))["bots"]


def _generated(entries) -> list[dict]:
    return [entry.document for entry in entries if entry.collection == "botrequests"]


def test_the_same_moment_generates_the_same_requests(db):
    first = _generated(demo.entries(db, NOW))

    assert len(first) == demo.REQUEST_COUNT
    assert first == _generated(demo.entries(db, NOW))
    assert all(NOW - demo.HISTORY <= request["createdAt"] <= NOW for request in first)


def test_every_bot_has_a_reply_filled_from_its_own_inputs():
    for bot in _bots():
        names = {field["name"] for field in bot["inputs"]}
        placeholders = {
            name for _, name, _, _ in string.Formatter().parse(demo.REPLIES[bot["slug"]])
        }

        assert placeholders - {None} <= names, bot["slug"]


def test_every_text_input_has_sample_values():
    for bot in _bots():
        for field in bot["inputs"]:
            if field["type"] in ("text", "textarea"):
                assert demo.SAMPLES.get(field["name"]), f"{bot['slug']}: {field['name']}"
