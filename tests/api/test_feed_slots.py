"""A live feed's slot comes back whenever its response is closed, its events started or not
(docs/api.md#live-feed): a HEAD, or a client gone before the first write, would otherwise
keep one of a worker's few slots for good."""

import socket
from types import SimpleNamespace

from blueprints.feeds import _Feed
from tests.conftest import TEST_SETTINGS
from tests.support.factories import World, bearer


def test_a_head_or_an_unread_feed_gives_its_slot_back(wire_db, make_app):
    world = World(wire_db)
    token = world.token(user=world.user("Ada"))
    settings = {**TEST_SETTINGS, "MONGODB_DB": wire_db.name, "FEED_CONNECTIONS": 1}
    client = make_app(settings, wire_db.client).test_client()

    head = client.head("/v1/requests/feed", headers=bearer(token))
    head.close()  # as a server closes every response it has sent
    unread = client.get("/v1/requests/feed", headers=bearer(token), buffered=False)
    unread.close()  # before a single part was read
    last = client.get("/v1/requests/feed", headers=bearer(token), buffered=False)
    last.close()

    assert (head.status_code, unread.status_code, last.status_code) == (200, 200, 200)


def test_a_feed_sees_its_client_leave_without_waiting_on_the_socket():
    """Peeked at without blocking, whatever the descriptor's number: a socket still open
    with nothing to read is there, one whose peer closed it is gone."""
    ours, theirs = socket.socketpair()
    feed = SimpleNamespace(_client=ours)
    try:
        there = _Feed._client_left(feed)
        theirs.close()
        gone = _Feed._client_left(feed)
    finally:
        ours.close()

    assert (there, gone) == (False, True)
