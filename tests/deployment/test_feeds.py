"""Live feeds through gunicorn with 2 workers on the wire-protocol server (docs/api.md#live-feed):
events as requests change, visibility per event, resuming, capacity and the caller's rights."""

import datetime as dt
import os
import signal
import time
import uuid

import jwt
import psutil
import pymongo
import pytest
from bson import ObjectId

from schemas import feed_ids
from tests.support import jwt_claims
from tests.support.browser import Page, chromium
from tests.support.factories import World, bearer
from tests.support.gunicorn_server import GunicornServer
from tests.support.json_log import parse_lines
from tests.support.sse import EventStream, open_feed


def test_a_feed_tells_creations_updates_and_deletions_it_may_see(gunicorn, scene):
    server = gunicorn()
    world, db = scene["world"], scene["db"]
    stream = open_feed(server, scene)
    try:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        foreign = world.bot_request(bot=None, created_by=None, organization=scene["other"])
        mine = world.bot_request(bot=scene["bot"], created_by=scene["ada"], organization=None)
        created = stream.next_event()
        db.botrequests.update_one({"_id": mine}, {"$set": {"updatedAt": dt.datetime(2026, 2, 1)}})
        updated = stream.next_event()
        db.botrequests.delete_one({"_id": mine})
        deleted = stream.next_event()
    finally:
        stream.close()

    assert (created["event"], created["data"]["id"]) == ("created", str(mine))
    assert created["data"]["bot"]["slug"] == "writer"
    assert (updated["event"], updated["data"]["updatedAt"]) == (
        "updated",
        "2026-02-01T00:00:00.000Z",
    )
    assert deleted == {"event": "deleted", "id": deleted["id"], "data": {"id": str(mine)}}
    assert str(foreign) not in repr([created, updated, deleted])


def test_a_request_taken_out_of_sight_is_deleted_for_theopen_feed(gunicorn, scene):
    server = gunicorn()
    world, db = scene["world"], scene["db"]
    stream = open_feed(server, scene, f"/v1/organizations/{scene['acme']}/requests/feed")
    try:
        moved = world.bot_request(bot=None, created_by=None, organization=scene["acme"])
        assert stream.next_event()["event"] == "created"
        db.botrequests.update_one({"_id": moved}, {"$set": {"organization": scene["other"]}})
        gone = stream.next_event()
    finally:
        stream.close()

    assert (gone["event"], gone["data"]) == ("deleted", {"id": str(moved)})


def test_a_feed_resumes_after_its_last_event_without_a_gap_or_a_repeat(gunicorn, scene):
    server = gunicorn()
    world = scene["world"]
    stream = open_feed(server, scene)
    first = world.bot_request(bot=None, created_by=scene["ada"])
    seen = stream.next_event()
    stream.close()
    missed = [world.bot_request(bot=None, created_by=scene["ada"]) for _ in range(3)]

    resumed = open_feed(server, scene, **{"Last-Event-ID": seen["id"]})
    try:
        replayed = [resumed.next_event() for _ in missed]
        later = world.bot_request(bot=None, created_by=scene["ada"])
        live = resumed.next_event()
    finally:
        resumed.close()

    assert seen["data"]["id"] == str(first)
    assert [event["data"]["id"] for event in replayed] == [str(id_) for id_ in missed]
    assert live["data"]["id"] == str(later)


def test_a_revoked_token_ends_itsopen_feed(gunicorn, scene):
    server = gunicorn()
    stream = open_feed(server, scene)
    try:
        scene["db"].tokens.update_many({}, {"$set": {"revokedAt": dt.datetime(2026, 1, 1)}})
        assert stream.next_event(timeout=5) is None
    finally:
        stream.close()


def test_a_token_that_expires_ends_its_feed_at_its_expiry_with_no_write_to_tell_it(gunicorn, scene):
    """Nothing changes in the database: the feed ends at the token's `expiresAt`, and a JWT's
    at its `exp`."""
    # Both feeds may reach one worker: each has room for both.
    server = gunicorn({"JWT_SECRET": jwt_claims.SECRET, "FEED_CONNECTIONS": "2"})
    soon = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0) + dt.timedelta(seconds=3)
    tokens = (
        scene["world"].token(user=scene["ada"], expires_at=soon),
        jwt.encode(jwt_claims.claims(scene["ada"], exp=soon.replace(tzinfo=dt.UTC)),
                   jwt_claims.SECRET),
    )  # fmt: skip
    streams = [EventStream(server.port, "/v1/requests/feed", bearer(token)) for token in tokens]
    try:
        refused = [stream.body() for stream in streams if stream.status != 200]
        assert [stream.status for stream in streams] == [200, 200], refused
        ended = []
        for stream in streams:
            assert stream.next_event(timeout=8) is None
            ended.append(dt.datetime.now(dt.UTC).replace(tzinfo=None) - soon)
    finally:
        for stream in streams:
            stream.close()

    assert all(dt.timedelta(0) <= late < dt.timedelta(seconds=1) for late in ended), ended


def test_a_foreign_or_forged_event_id_is_a_400_before_the_stream(gunicorn, scene):
    # A closed feed keeps its slot for up to a second, until it finds its client gone.
    server = gunicorn({"FEED_CONNECTIONS": "4"})
    stream = open_feed(server, scene)
    scene["world"].bot_request(bot=None, created_by=scene["ada"])
    event_id = stream.next_event()["id"]
    stream.close()
    other = f"/v1/organizations/{scene['acme']}/requests/feed"

    # An id of this feed and caller, whose token the database never made.
    forged = feed_ids.encode(
        {"_data": "82" + "00" * 20}, f"feeds.follow_bot_requests|{{}}|user:{scene['ada']}"
    )
    cases = ((other, event_id), ("/v1/requests/feed", "not-an-id"), ("/v1/requests/feed", forged))
    for path, value in cases:
        refused = EventStream(server.port, path, {**bearer(scene["token"]), "Last-Event-ID": value})
        assert refused.status == 400
        assert "lastEventId" in refused.body()["details"]
        refused.close()


def test_past_its_feed_slots_a_worker_answers_503(gunicorn, scene):
    server = gunicorn({"FEED_CONNECTIONS": "1"}, workers=1)
    held = open_feed(server, scene)
    try:
        refused = EventStream(server.port, "/v1/requests/feed", bearer(scene["token"]))
        body = refused.body()
        refused.close()
        assert refused.status == 503 and refused.headers["Retry-After"] == "1"
        assert body["type"].endswith("service-unavailable")
        assert server.request("GET", "/v1/bots/", bearer(scene["token"]))[0] == 200
    finally:
        held.close()


def test_a_client_that_leaves_frees_its_slot_within_a_second_or_so(gunicorn, scene):
    """Without a write to find it gone: no request changes, and the keep-alive is 15 s off."""
    server = gunicorn({"FEED_CONNECTIONS": "1"}, workers=1)
    open_feed(server, scene).close()
    left = time.monotonic()
    while True:
        again = EventStream(server.port, "/v1/requests/feed", bearer(scene["token"]))
        again.close()
        if again.status == 200 or time.monotonic() - left > 5:
            break
        time.sleep(0.2)

    assert again.status == 200
    assert time.monotonic() - left < 3.5


def test_an_unknown_organization_is_a_404_and_bad_parameters_a_400(gunicorn, scene):
    server = gunicorn()
    token = bearer(scene["token"])
    assert server.request("GET", "/v1/organizations/nothing/requests/feed", token)[0] == 404
    assert server.request("GET", "/v1/requests/feed?fields=nope", token)[0] == 400
    assert server.request("GET", "/v1/requests/feed?bogus=1", token)[0] == 400
    assert server.request("GET", f"/v1/organizations/{ObjectId()}/requests/feed", token)[0] == 403


def test_a_worker_stopped_ends_its_feeds_at_once_and_they_resume_elsewhere(gunicorn, scene):
    """gunicorn replaces a worker told to stop; its feed's client reconnects with the last
    id it got and misses nothing written meanwhile."""
    server = gunicorn()
    world = scene["world"]
    stream = open_feed(server, scene)
    world.bot_request(bot=None, created_by=scene["ada"])
    seen = stream.next_event()
    [worker] = [pid for pid in server.worker_pids() if _serves(pid, stream)]
    os.kill(worker, signal.SIGTERM)
    started = time.monotonic()
    assert stream.next_event(timeout=5) is None
    ended_after = time.monotonic() - started
    stream.close()
    missed = world.bot_request(bot=None, created_by=scene["ada"])

    resumed = open_feed(server, scene, **{"Last-Event-ID": seen["id"]})
    try:
        replayed = resumed.next_event()
    finally:
        resumed.close()

    assert ended_after < 3, "a stopping worker ends its feeds, not waits out the graceful timeout"
    assert replayed["data"]["id"] == str(missed)


def _serves(pid: int, stream: EventStream) -> bool:
    client_port = stream.connection.sock.getsockname()[1]
    return any(
        connection.raddr and connection.raddr.port == client_port
        for connection in psutil.Process(pid).net_connections(kind="tcp")
    )


def test_on_a_standalone_server_a_feed_is_a_503_saying_why(standalone):
    name = f"standalone_{uuid.uuid4().hex[:8]}"
    with pymongo.MongoClient(standalone.uri) as client:
        world = World(client[name])
        token = world.token(user=world.user("Ada"))
        with GunicornServer({"MONGODB_URI": standalone.uri, "MONGODB_DB": name}) as server:
            at_start = server.log()
            asked = time.monotonic()
            status, headers, body = server.request("GET", "/v1/requests/feed", bearer(token))
            answered_after = time.monotonic() - asked
            listed = server.request("GET", "/v1/requests/", bearer(token))[0]

    assert (status, headers["Retry-After"]) == (503, "1")
    assert "standalone" in body["detail"]
    assert answered_after < 2, "told at once, not after the seconds a stream gets to open"
    assert listed == 200
    # Said by gunicorn's master, before any request: at start, not at a worker's first feed.
    [warning] = [
        line for line in parse_lines(at_start) if "runs no change streams" in line["message"]
    ]
    assert warning["level"] == "WARNING" and "live feed answers 503" in warning["message"]


def test_a_removed_membership_ends_the_organizationsopen_feed(gunicorn, scene):
    server = gunicorn()
    stream = open_feed(server, scene, f"/v1/organizations/{scene['acme']}/requests/feed")
    try:
        scene["db"].users.update_one({"_id": scene["ada"]}, {"$set": {"organizations": []}})
        ended = stream.next_event(timeout=5)
        refused = server.request(
            "GET", f"/v1/organizations/{scene['acme']}/requests/feed", bearer(scene["token"])
        )[0]
    finally:
        stream.close()

    assert ended is None
    assert refused == 403


_LISTENING = """
window.received = [];
window.opened = 0;
const source = new EventSource("%s/v1/requests/feed?access_token=%s");
source.onopen = () => { window.opened += 1; };
source.addEventListener("created", (event) => {
  window.received.push({id: event.lastEventId, request: JSON.parse(event.data).id});
});
"""


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="no chromium binary on this machine")
def test_a_browsers_event_source_receives_events_and_resumes_by_itself(gunicorn, scene):
    """Chromium's own EventSource, with the token in the query (a browser sends no header
    with it): when gunicorn loses the worker that served it, the browser reconnects with
    `Last-Event-ID` by itself, and misses nothing written meanwhile."""
    server = gunicorn()
    world = scene["world"]
    origin = f"http://127.0.0.1:{server.port}"
    with Page(f"{origin}/healthz") as page:
        page.evaluate(_LISTENING % (origin, scene["token"]))
        page.wait_for("window.opened === 1")
        before = world.bot_request(bot=None, created_by=scene["ada"])
        page.wait_for("window.received.length === 1")
        for worker in server.worker_pids():
            os.kill(worker, signal.SIGKILL)  # no goodbye: the browser sees the stream break
        missed = [world.bot_request(bot=None, created_by=scene["ada"]) for _ in range(2)]
        page.wait_for("window.opened === 2", timeout=30)
        after = world.bot_request(bot=None, created_by=scene["ada"])
        page.wait_for("window.received.length >= 4")
        received = page.evaluate("window.received")

    assert [item["request"] for item in received] == [str(id_) for id_ in [before, *missed, after]]
    assert len({item["id"] for item in received}) == 4


def test_without_the_requests_pre_images_a_feed_is_a_503_naming_db_init(gunicorn, scene):
    scene["db"].command("collMod", "botrequests", changeStreamPreAndPostImages={"enabled": False})
    server = gunicorn()

    status, headers, body = server.request("GET", "/v1/requests/feed", bearer(scene["token"]))

    assert (status, headers["Retry-After"]) == (503, "1")
    assert "pre-images" in body["detail"] and "flask db init" in body["detail"]
