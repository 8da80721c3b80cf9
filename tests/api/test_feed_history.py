"""A feed resumed after its history is gone (docs/api.md#live-feed): a 410 with the error
body, before the stream starts, telling the client to read the list and start again."""

import time

import pymongo.database
from pymongo.errors import OperationFailure

from tests.conftest import TEST_SETTINGS
from tests.support.checks import problem_checked
from tests.support.factories import World, bearer


def test_a_feed_resumed_past_the_held_history_is_a_410(wire_db, make_app, monkeypatch):
    """The history is made to be gone as MongoDB says so (ChangeStreamHistoryLost, once the
    oplog has rolled past the id); the id itself is one the feed really sent."""
    world = World(wire_db)
    ada = world.user("Ada")
    token = world.token(user=ada)
    app = make_app({**TEST_SETTINGS, "MONGODB_DB": wire_db.name}, wire_db.client)
    client = app.test_client()
    feed = client.get("/v1/requests/feed", headers=bearer(token), buffered=False)
    try:
        assert next(feed.response) == b"retry: 1000\n\n"
        world.bot_request(bot=None, created_by=ada)
        deadline = time.monotonic() + 10  # a keep-alive comes every 15 s at the latest
        for part in feed.response:
            if part.startswith(b"event: created"):
                event = part
                break
            assert time.monotonic() < deadline, "no event within 10 s"
    finally:
        feed.close()
    event_id = event.decode().split("\nid: ")[1].split("\n")[0]

    def history_lost(*args, **kwargs):
        raise OperationFailure("resume point no longer in the oplog", 286)

    # The resumed feed reads its history on a stream over the database (blueprints/feeds.py).
    monkeypatch.setattr(pymongo.database.Database, "watch", history_lost)
    resumed = client.get("/v1/requests/feed", headers={**bearer(token), "Last-Event-ID": event_id})

    assert resumed.status_code == 410
    body = problem_checked(resumed.get_json(), resumed.headers["X-Request-ID"])
    assert body["code"] == 410 and "read the list" in body["message"]
    assert resumed.get_json()["type"].endswith("gone")
