"""A resumed live feed replays what happened while its client was away, as it happened
(docs/api.md#live-feed), through gunicorn on the wire-protocol server: each change is
judged by the request before and after it, so a worker that never served the feed, or one
that replaced the worker that did, sends the same events."""

import datetime as dt
import os
import signal
import time

import pytest

from tests.support.sse import open_feed

UPDATED = dt.datetime(2026, 2, 1)


def _replace_workers(server) -> None:
    """Every worker told to stop; back once gunicorn has started as many new ones."""
    old = server.worker_pids()
    for pid in old:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pids = server.worker_pids()
        if len(pids) == len(old) and not pids & old:
            return
        time.sleep(0.1)
    raise AssertionError("gunicorn did not replace its workers")


@pytest.mark.parametrize("worker", ["fresh", "replaced"])
def test_a_resumed_feed_replays_each_change_as_it_happened(gunicorn, scene, worker):
    world, db, ada = scene["world"], scene["db"], scene["ada"]
    server = gunicorn()
    stream = open_feed(server, scene)
    announced = world.bot_request(bot=None, created_by=ada)
    foreign = world.bot_request(bot=None, created_by=None, organization=scene["other"])
    seen = stream.next_event()
    stream.close()
    if worker == "replaced":
        _replace_workers(server)
    else:
        server = gunicorn()  # workers that never served the feed

    # While the client is away:
    brief = world.bot_request(bot=None, created_by=ada)  # inserted, then deleted
    db.botrequests.delete_one({"_id": brief})
    edited = world.bot_request(bot=None, created_by=ada)  # inserted, updated, deleted
    db.botrequests.update_one({"_id": edited}, {"$set": {"updatedAt": UPDATED}})
    db.botrequests.delete_one({"_id": edited})
    out_of_sight = {"$set": {"createdBy": None, "organization": scene["other"]}}
    db.botrequests.update_one({"_id": announced}, out_of_sight)  # seen before, not after
    db.botrequests.update_one({"_id": foreign}, {"$set": {"updatedAt": UPDATED}})  # never seen
    db.botrequests.update_one({"_id": foreign}, {"$set": {"createdBy": ada}})  # seen after only
    last = world.bot_request(bot=None, created_by=ada)

    resumed = open_feed(server, scene, **{"Last-Event-ID": seen["id"]})
    try:
        replayed = [resumed.next_event()]
        while replayed[-1]["data"]["id"] != str(last):
            replayed.append(resumed.next_event())
    finally:
        resumed.close()

    assert seen["data"]["id"] == str(announced)
    assert [(event["event"], event["data"]["id"]) for event in replayed] == [
        ("created", str(brief)),
        ("deleted", str(brief)),
        ("created", str(edited)),
        ("updated", str(edited)),
        ("deleted", str(edited)),
        ("deleted", str(announced)),
        ("updated", str(foreign)),
        ("created", str(last)),
    ]
    created, updated = replayed[2]["data"], replayed[3]["data"]
    assert created["updatedAt"] == created["createdAt"]
    assert updated["updatedAt"] == "2026-02-01T00:00:00.000Z"
    assert updated["createdBy"] == {"name": "Ada"}
    assert len({event["id"] for event in replayed}) == len(replayed)
