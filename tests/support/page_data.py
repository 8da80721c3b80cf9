"""Lists to page through, shared by the offset and keyset tests of tests/integration: bots
and requests of a few organizations and users, visibilities with overlapping branches, sorts,
and a value of every BSON type as another writer may store in a sort field."""

import datetime as dt
import random

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

from access.policy import Visibility

ORGS = [ObjectId() for _ in range(3)]
USERS = [ObjectId() for _ in range(3)]
BASE = dt.datetime(2026, 1, 1)
COSTS = [1, 2, 2.5, None, "3", -1]
SPECIAL_NUMBERS = [float("nan"), Decimal128("2"), Decimal128("NaN"), Decimal128("-Infinity")]


def random_bots(rng: random.Random, costs: list) -> list[dict]:
    bots = []
    for n in range(60):
        bot = {
            "_id": ObjectId(),
            "name": rng.choice(["alpha", "Beta", "beta", "gamma", "émile", ""]),
            "slug": f"bot-{n}",
            "isPublic": rng.random() < 0.5,
            "organization": rng.choice([None, *ORGS]),
            "creditCost": rng.choice(costs),
            "createdAt": BASE + dt.timedelta(hours=rng.randrange(20)),
        }
        if rng.random() < 0.1:
            del bot["creditCost"]
        bots.append(bot)
    return bots


def random_requests(rng: random.Random) -> list[dict]:
    return [
        {
            "_id": ObjectId(),
            "createdBy": rng.choice(USERS),
            "organization": rng.choice([None, *ORGS]),
            "createdAt": BASE + dt.timedelta(minutes=rng.randrange(30)),
            "updatedAt": BASE + dt.timedelta(minutes=rng.randrange(30)),
        }
        for _ in range(80)
    ]


BOT_CASES = [
    (Visibility.of({"isPublic": True}, {"organization": {"$in": ORGS[:2]}}), {}),
    (Visibility.of({"isPublic": True}, {"organization": {"$in": ORGS[:1]}}), {"name": "beta"}),
    (Visibility.of({"organization": {"$in": ORGS}}), {}),
    (Visibility.of({}), {}),
    (Visibility.of({"isPublic": True}), {"slug": {"$in": ["bot-1", "bot-2", "bot-3"]}}),
]
BOT_SORTS = [
    [("name", 1)],
    [("name", -1)],
    [("creditCost", -1), ("name", 1)],
    [("creditCost", 1)],
    [("createdAt", -1), ("slug", 1)],
]


REQUEST_CASES = [
    Visibility.of({"createdBy": USERS[0]}, {"organization": {"$in": ORGS[:2]}}),
    Visibility.of({"createdBy": USERS[1]}, {"organization": {"$in": ORGS}}),
    Visibility.of({"organization": ORGS[0], "createdBy": USERS[2]}),
    Visibility.of({"organization": ORGS[1]}),
]


# A value of every BSON type, as another writer may store in a sort field.
ODD_VALUES = [
    MinKey(),
    None,
    [],
    [None],
    [3, 1],
    ["b", 7],
    float("nan"),
    Decimal128("NaN"),
    Decimal128("sNaN"),
    Decimal128("-Infinity"),
    -1,
    Int64(2),
    2.5,
    Decimal128("2.50"),
    "",
    "B",
    "a",
    "émile",
    {"b": 1},
    {"a": 2},
    {"a": 1, "b": 0},
    Binary(b"\x02"),
    Binary(b"\x01\x01"),
    Binary(b"\x01", 5),
    ObjectId(),
    False,
    True,
    dt.datetime(1969, 12, 31),
    BASE,
    Timestamp(2, 0),
    Timestamp(1, 2),
    Timestamp(1, 1),
    Regex("a", "i"),
    Code("x"),
    Code("a"),
    Code("b", {"n": 1}),
    MaxKey(),
]


def odd_bots(seed: int, field: str, slugs: int) -> list[dict]:
    """Bots with a value of every BSON type in `field`, and without it, twice each, public or
    of an organization at random; `slugs` distinct slugs, repeated to make ties."""
    rng = random.Random(seed)
    return [
        {
            "slug": f"odd-{n % slugs}",
            "isPublic": rng.random() < 0.5,
            "organization": rng.choice(ORGS),
        }
        | ({} if value == "missing" else {field: value})
        for n, value in enumerate((ODD_VALUES + ["missing"]) * 2)
    ]
