"""One small world with every kind of caller, for the access tables of docs/api.md (Who sees what).

Two organizations, Acme and Other. The users:
- member: a member of Acme;
- creator: a member of nothing, who ran a bot for Acme once;
- nonmember: a member of Other only;
- admin: an admin, a member of nothing.
Organization tokens exist for Acme and for Other. Bots and requests are named after who owns
them, so a table of expected names reads as the rule it pins.
"""

import datetime as dt
from dataclasses import dataclass, field

from bson import ObjectId

from tests.support.factories import World, bearer

USERS = ("member", "creator", "nonmember", "admin")
ORGANIZATION_TOKENS = ("acme_token", "other_token")
CALLERS = USERS + ORGANIZATION_TOKENS

# One path per endpoint of the specification, for tables over endpoints (see `Cast.path`).
ENDPOINTS = {
    "4.1": "/v1/requests/",
    "4.2": "/v1/organizations/{acme}/requests/",
    "4.3": "/v1/requests/{member_acme}/",
    "4.4": "/v1/organizations/{acme}/requests/{member_acme}/",
    "4.5": "/v1/bots/",
    "4.6": "/v1/organizations/{acme}/bots/",
    "4.7": "/v1/bots/public/",
    "4.8": "/v1/organizations/{acme}/bots/acme-public/",
}

# Bots in the default order (name ascending): each slug is its name in lower case.
BOTS = ("acme-private", "acme-public", "orphan-private", "other-private", "public")
# Requests in creation order, so the default order (createdAt descending) is the reverse.
REQUESTS = (
    "member_personal",
    "member_acme",
    "creator_acme",
    "creator_personal",
    "stranger_other",
    "admin_personal",
)


@dataclass
class Cast:
    world: World
    organizations: dict[str, ObjectId] = field(default_factory=dict)
    users: dict[str, ObjectId] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    bots: dict[str, ObjectId] = field(default_factory=dict)
    requests: dict[str, ObjectId] = field(default_factory=dict)

    def headers(self, caller: str) -> dict:
        return bearer(self.tokens[caller])

    def path(self, template: str) -> str:
        """`template` with {acme}, {other} and request names replaced by their ids."""
        return template.format(**self.organizations, **self.requests)

    def request_names(self, ids) -> list[str]:
        by_id = {str(value): name for name, value in self.requests.items()}
        return [by_id[request_id] for request_id in ids]


def build_cast(world: World) -> Cast:
    cast = Cast(world)
    acme = cast.organizations["acme"] = world.organization("Acme")
    other = cast.organizations["other"] = world.organization("Other")
    memberships = {"member": [acme], "creator": [], "nonmember": [other], "admin": []}
    for name in USERS:
        role = "admin" if name == "admin" else "user"
        cast.users[name] = world.user(name.title(), organizations=memberships[name], role=role)
        cast.tokens[name] = world.token(user=cast.users[name])
    cast.users["stranger"] = world.user("Stranger")
    cast.tokens["acme_token"] = world.token(organization=acme)
    cast.tokens["other_token"] = world.token(organization=other)

    owners = {
        "public": (None, True),
        "acme-public": (acme, True),
        "acme-private": (acme, False),
        "other-private": (other, False),
        "orphan-private": (None, False),
    }
    for slug, (organization, is_public) in owners.items():
        cast.bots[slug] = world.bot(slug, organization=organization, is_public=is_public)

    runs = {
        "member_personal": ("member", None),
        "member_acme": ("member", acme),
        "creator_acme": ("creator", acme),
        "creator_personal": ("creator", None),
        "stranger_other": ("stranger", other),
        "admin_personal": ("admin", None),
    }
    for name in REQUESTS:
        user, organization = runs[name]
        cast.requests[name] = world.bot_request(
            bot=cast.bots["public"], created_by=cast.users[user], organization=organization
        )
    return cast


def bad_credentials(world: World, user: ObjectId) -> dict[str, dict]:
    """Authorization headers that must all be a 401, keyed by what is wrong with them."""
    past = dt.datetime(2020, 1, 1)
    valid = world.token(user=user)
    orphan = world.user("Deleted")
    orphan_token = world.token(user=orphan)
    world.db.users.delete_one({"_id": orphan})
    gone = world.organization("Gone")
    gone_token = world.token(organization=gone)
    world.db.organizations.delete_one({"_id": gone})
    return {
        "no header": {},
        "unknown token": bearer("bcs_" + "x" * 43),
        "expired token": bearer(world.token(user=user, expires_at=past)),
        "revoked token": bearer(world.token(user=user, revoked_at=past)),
        "deleted user": bearer(orphan_token),
        "deleted organization": bearer(gone_token),
        "wrong scheme": {"Authorization": f"Basic {valid}"},
        "token scheme": {"Authorization": f"Token {valid}"},
        "no scheme": {"Authorization": valid},
        "empty header": {"Authorization": ""},
        "scheme only": {"Authorization": "Bearer"},
        "scheme and space": {"Authorization": "Bearer "},
        "two tokens": {"Authorization": f"Bearer {valid} {valid}"},
        "huge": {"Authorization": "Bearer " + "a" * 100_000},
        "non-ascii": {"Authorization": f"Bearer {valid}é"},
        "non-latin": {"Authorization": "Bearer 日本語"},
        "parameters": {"Authorization": "Bearer token=abc, realm=x"},
        "control character": {"Authorization": f"Bearer {valid}\x7f"},
    }
