"""A reproducible data set at a chosen scale, shaped like the writing system's.

Same seed, same scale, same documents: ids, names, timestamps and memberships are all drawn
from one seeded generator, so two runs (or two machines) measure the same data.
Raw bench tokens are derived from the entity's index (`bench-user-0`, `bench-org-0`).

Callers the benchmark uses: user 0 is a typical user (two ordinary organizations);
organization 1 is a typical organization; organization 0 is a heavy one that holds a quarter
of all requests, for deep pages.
"""

import datetime as dt
import random
import struct
from dataclasses import dataclass

from bson import ObjectId
from pymongo.database import Database

from runtime.bearer_tokens import hash_token

DEFAULT_SCALE = {"organizations": 200, "users": 2_000, "bots": 5_000, "requests": 200_000}
START = dt.datetime(2025, 1, 1)
SPAN = dt.timedelta(days=365)
BATCH = 5_000
WORDS = (
    "alpha brisk cobalt delta ember fable garnet harbor iris jade kepler lumen meadow nova "
    "orbit prism quartz raven sierra tango umber vivid willow xenon yonder zephyr"
).split()


@dataclass(frozen=True)
class Scale:
    organizations: int
    users: int
    bots: int
    requests: int

    @classmethod
    def of(cls, factor: float = 1.0, requests: int | None = None) -> "Scale":
        counts = {key: max(1, round(value * factor)) for key, value in DEFAULT_SCALE.items()}
        if requests is not None:
            counts["requests"] = requests
        return cls(**counts)


def object_id(kind: int, number: int) -> ObjectId:
    """A stable id: the kind in the timestamp bytes, the number in the rest."""
    return ObjectId(struct.pack(">IQ", 0x60000000 + kind, number))


def user_token(number: int) -> str:
    return f"bench-user-{number}"


def organization_token(number: int) -> str:
    return f"bench-org-{number}"


def _name(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).title()


def _batches(documents, size=BATCH):
    batch = []
    for document in documents:
        batch.append(document)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def generate(db: Database, scale: Scale, seed: int = 7) -> None:
    """Drop and refill every collection the service reads."""
    rng = random.Random(seed)
    for name in ("organizations", "users", "tokens", "services", "tags", "bots", "botrequests"):
        db.drop_collection(name)

    organizations = [object_id(1, n) for n in range(scale.organizations)]
    db.organizations.insert_many(
        [{"_id": oid, "name": f"{_name(rng, 2)} {n}"} for n, oid in enumerate(organizations)]
    )

    users, memberships = [], []
    for n in range(scale.users):
        count = rng.choice((0, 1, 1, 1, 2, 2, 3))
        orgs = rng.sample(organizations, min(count, len(organizations)))
        if n == 0:
            orgs = organizations[1:3]
        memberships.append(orgs)
        users.append(
            {
                "_id": object_id(2, n),
                "name": _name(rng, 2),
                "email": f"user{n}@bench.example",
                "role": "admin" if n % 100 == 99 else "user",
                "organizations": orgs,
            }
        )
    db.users.insert_many(users)

    created = START
    tokens = [
        {
            "_id": object_id(7, n),
            "tokenHash": hash_token(user_token(n)),
            "kind": "user",
            "user": user["_id"],
            "organization": None,
            "label": "bench",
            "createdAt": created,
            "expiresAt": None,
            "revokedAt": None,
        }
        for n, user in enumerate(users)
    ] + [
        {
            "_id": object_id(8, n),
            "tokenHash": hash_token(organization_token(n)),
            "kind": "organization",
            "user": None,
            "organization": oid,
            "label": "bench",
            "createdAt": created,
            "expiresAt": None,
            "revokedAt": None,
        }
        for n, oid in enumerate(organizations)
    ]
    db.tokens.insert_many(tokens)

    services = [
        {"_id": object_id(3, n), "name": f"Service {n}", "slug": f"service-{n}", "directory": "d"}
        for n in range(max(1, scale.bots // 125))
    ]
    db.services.insert_many(services)
    tags = [{"_id": object_id(4, n), "name": f"tag {n}"} for n in range(max(1, scale.bots // 100))]
    db.tags.insert_many(tags)

    bots = []
    for n in range(scale.bots):
        kind = rng.random()
        organization = None if kind < 0.6 else rng.choice(organizations)
        stamp = START + SPAN * rng.random()
        bots.append(
            {
                "_id": object_id(5, n),
                "slug": f"bot-{n}",
                "name": f"{_name(rng, 2)} {n}",
                "description": _name(rng, 8),
                "creditCost": rng.choice((1, 2, 3, 5, 8, 13)),
                "modelKey": rng.choice(("gpt-4o-mini", "claude-haiku", "llama-3")),
                "applyToApi": rng.random() < 0.5,
                "inputs": [{"name": "prompt", "type": "text", "required": True}],
                "isPublic": organization is None or kind > 0.9,
                "organization": organization,
                "service": rng.choice(services)["_id"] if rng.random() < 0.8 else None,
                "tags": [tag["_id"] for tag in rng.sample(tags, min(len(tags), rng.randint(0, 3)))],
                "createdAt": stamp,
                "updatedAt": stamp,
            }
        )
    for batch in _batches(bots):
        db.bots.insert_many(batch, ordered=False)

    step = SPAN / max(1, scale.requests)
    heavy = organizations[0]
    heavy_members = [n for n, orgs in enumerate(memberships) if heavy in orgs] or [1 % scale.users]

    def requests():
        for n in range(scale.requests):
            if rng.random() < 0.25:
                user, organization = rng.choice(heavy_members), heavy
            else:
                user = rng.randrange(scale.users)
                orgs = memberships[user]
                organization = rng.choice(orgs) if orgs and rng.random() < 0.8 else None
            if n == 0:  # one of the benchmark user's own, to fetch at any size (bench/run.py)
                user, organization = 0, None
            stamp = START + step * n
            yield {
                "_id": object_id(6, n),
                "bot": bots[rng.randrange(scale.bots)]["_id"],
                "createdBy": users[user]["_id"],
                "organization": organization,
                "inputs": {"prompt": _name(rng, 6), "temperature": 0.7},
                "response": {"message": _name(rng, 12), "tokens": rng.randint(10, 900)},
                "ip": f"203.0.113.{rng.randint(1, 254)}",
                "createdAt": stamp,
                "updatedAt": stamp + dt.timedelta(seconds=rng.randint(1, 30)),
            }

    for batch in _batches(requests()):
        db.botrequests.insert_many(batch, ordered=False)
