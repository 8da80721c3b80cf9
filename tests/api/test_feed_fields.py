"""A feed's events are the list's items after `fields` (docs/api.md#live-feed)."""

import json
import time

from tests.conftest import TEST_SETTINGS
from tests.support.factories import World, bearer


def test_a_feeds_events_hold_only_the_selected_fields(wire_db, make_app):
    world = World(wire_db)
    ada = world.user("Ada")
    token = world.token(user=ada)
    client = make_app({**TEST_SETTINGS, "MONGODB_DB": wire_db.name}, wire_db.client).test_client()
    feed = client.get("/v1/requests/feed?fields=bot", headers=bearer(token), buffered=False)
    try:
        assert next(feed.response) == b"retry: 1000\n\n"
        request_id = world.bot_request(bot=world.bot("writer"), created_by=ada)
        deadline = time.monotonic() + 10  # a keep-alive comes every 15 s at the latest
        for part in feed.response:
            if part.startswith(b"event: created"):
                break
            assert time.monotonic() < deadline, "no event within 10 s"
    finally:
        feed.close()
    data = json.loads(part.decode().split("\ndata: ")[1])

    assert set(data) == {"id", "bot"}
    assert data["id"] == str(request_id) and data["bot"]["slug"] == "writer"
