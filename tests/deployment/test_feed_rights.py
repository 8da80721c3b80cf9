"""A live feed follows its caller's rights in the database's order of writes
(docs/api.md#live-feed), through gunicorn with 2 workers on the wire-protocol server: for each
way a caller loses a feed, repeated with requests written every 10 ms around the change, every
request written before the change reaches the feed, none written after it does, and the feed
ends within a second of the change."""

import datetime as dt
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bson import ObjectId

from tests.support.factories import World, bearer
from tests.support.sse import EventStream

ROUNDS = 20
WRITES = 15  # requests written before the change, and as many after, one every 10 ms
WRITE_EVERY = 0.01


@dataclass
class Round:
    before: list[ObjectId] = field(default_factory=list)
    after: list[ObjectId] = field(default_factory=list)
    received: list[str] = field(default_factory=list)
    changed_at: float = 0.0
    ended_after: float | None = None


@dataclass(frozen=True)
class Case:
    """One round's caller: its feed, a request it sees, and the write that takes the feed."""

    token: str
    path: str
    request: Callable[[], ObjectId]
    change: Callable[[], object]


def _membership_removed(world: World) -> Case:
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    return Case(
        world.token(user=ada),
        f"/v1/organizations/{acme}/requests/feed",
        lambda: world.bot_request(bot=None, created_by=None, organization=acme),
        lambda: world.db.users.update_one({"_id": ada}, {"$pull": {"organizations": acme}}),
    )


def _revoked(world: World, *, organization: bool) -> Case:
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    if organization:
        token, path = world.token(organization=acme), f"/v1/organizations/{acme}/requests/feed"
    else:
        token, path = world.token(user=ada), "/v1/requests/feed"
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    return Case(
        token,
        path,
        lambda: world.bot_request(bot=None, created_by=ada, organization=acme),
        lambda: world.db.tokens.update_one(
            {"user": ada} if not organization else {"organization": acme},
            {"$set": {"revokedAt": now}},
        ),
    )


def _expired(world: World) -> Case:
    ada = world.user("Ada")
    later = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(days=1)
    past = dt.datetime(2026, 1, 1)
    return Case(
        world.token(user=ada, expires_at=later),
        "/v1/requests/feed",
        lambda: world.bot_request(bot=None, created_by=ada),
        lambda: world.db.tokens.update_one({"user": ada}, {"$set": {"expiresAt": past}}),
    )


CASES = {
    "a membership removed": _membership_removed,
    "a user token revoked": lambda world: _revoked(world, organization=False),
    "an organization token revoked": lambda world: _revoked(world, organization=True),
    "expiresAt moved into the past": _expired,
}


def _run(port: int, case: Case) -> Round:
    result = Round()
    stream = EventStream(port, case.path, bearer(case.token))
    assert stream.status == 200, stream.body()

    def write() -> None:
        for _ in range(WRITES):
            result.before.append(case.request())
            time.sleep(WRITE_EVERY)
        result.changed_at = time.monotonic()
        case.change()
        for _ in range(WRITES):
            result.after.append(case.request())
            time.sleep(WRITE_EVERY)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while (received := stream.next_event(timeout=10)) is not None:
            result.received.append(received["data"]["id"])
        result.ended_after = time.monotonic() - result.changed_at
    finally:
        writer.join()
        stream.close()
    return result


def test_a_feed_sends_nothing_written_after_its_caller_lost_it_and_ends_within_a_second(
    gunicorn, wire_db
):
    server = gunicorn({"FEED_CONNECTIONS": "8"})
    world = World(wire_db)
    rounds: dict[str, list[Round]] = {name: [] for name in CASES}

    def repeat(name: str) -> None:
        for _ in range(ROUNDS):
            rounds[name].append(_run(server.port, CASES[name](world)))

    threads = [threading.Thread(target=repeat, args=(name,)) for name in CASES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for name, results in rounds.items():
        assert len(results) == ROUNDS, f"{name}: a round failed"
        for number, result in enumerate(results):
            told = [ObjectId(id_) for id_ in result.received]
            leaked = set(told) & set(result.after)
            assert not leaked, f"{name}, round {number}: {len(leaked)} written after it sent"
            assert told == result.before, f"{name}, round {number}: not every earlier request"
        slowest = max(result.ended_after for result in results)
        assert slowest < 1.0, f"{name}: a feed ended {slowest:.2f} s after the change"
