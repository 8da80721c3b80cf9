"""Who is calling: the one object that authentication resolves and the policy reads, and how
a stored token or user document resolves to it."""

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum

from bson import ObjectId


class CallerKind(StrEnum):
    USER = "user"
    ORGANIZATION = "organization"


@dataclass(frozen=True)
class Caller:
    kind: CallerKind
    id: ObjectId
    organization_ids: frozenset[ObjectId]
    is_admin: bool = False

    @property
    def is_user(self) -> bool:
        return self.kind is CallerKind.USER

    @classmethod
    def user(cls, user_id: ObjectId, organization_ids, is_admin: bool = False) -> "Caller":
        return cls(CallerKind.USER, user_id, frozenset(organization_ids), is_admin)

    @classmethod
    def organization(cls, organization_id: ObjectId) -> "Caller":
        return cls(CallerKind.ORGANIZATION, organization_id, frozenset({organization_id}))


def user_caller(user: dict) -> Caller:
    memberships = user.get("organizations") or ()
    return Caller.user(user["_id"], memberships, is_admin=user.get("role") == "admin")


def caller_for(token_document: dict | None, now: dt.datetime) -> Caller | None:
    """The caller a stored token stands for, or None when it is revoked, expired or orphaned."""
    if token_document is None:
        return None
    expires_at = expiry(token_document)
    if expires_at is not None and expires_at <= now:
        return None
    return unexpired_caller(token_document)


def expiry(token_document: dict) -> dt.datetime | None:
    """When a stored token expires by itself (naive UTC), if it does: a stored value of
    another type is no expiry (docs/api.md#values-another-writer-left-out-or-stored-oddly)."""
    expires_at = token_document.get("expiresAt")
    return expires_at if isinstance(expires_at, dt.datetime) else None


def unexpired_caller(token_document: dict) -> Caller | None:
    """The caller a stored token stands for until it expires, or None when it is revoked or
    orphaned."""
    if token_document.get("revokedAt") is not None:
        return None
    kind = token_document.get("kind")
    if kind == "user" and (users := token_document.get("userDocuments")):
        return user_caller(users[0])
    if kind == "organization" and (organizations := token_document.get("organizationDocuments")):
        return Caller.organization(organizations[0]["_id"])
    return None
