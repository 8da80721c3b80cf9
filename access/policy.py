"""Who sees what (docs/api.md, Who sees what), written once.

Every endpoint asks this module for a `Visibility`: the set of documents the caller may see,
as a disjunction of MongoDB filters. Endpoints never write access checks themselves, and a
caller without the right gets a `Forbidden` from here, before any data is read.

Visibility is a tuple of branches rather than one `$or` filter so that a repository can
choose how to run it (repositories/pages.py).
"""

import functools
from dataclasses import dataclass

from bson import ObjectId

from access.callers import Caller
from domain.errors import Forbidden


@dataclass(frozen=True)
class Visibility:
    branches: tuple[dict, ...]

    @classmethod
    def of(cls, *branches: dict) -> "Visibility":
        return cls(tuple(branches))

    @property
    def is_empty(self) -> bool:
        return not self.branches

    def as_filter(self) -> dict:
        if len(self.branches) == 1:
            return dict(self.branches[0])
        return {"$or": [dict(branch) for branch in self.branches]}

    @functools.cached_property
    def key(self) -> str:
        """Itself as a cache's key (repositories/catalogue.py), written once: `repr` writes
        each value with its type, where Python's equality would take `True` for 1."""
        return repr(self)


EVERYTHING = Visibility.of({})
NOTHING = Visibility(())


def _in_organizations(organization_ids: frozenset[ObjectId]) -> dict:
    return {"organization": {"$in": sorted(organization_ids)}}


def _public_or_organizations(caller: Caller) -> Visibility:
    if not caller.organization_ids:
        return Visibility.of({"isPublic": True})
    return Visibility.of({"isPublic": True}, _in_organizations(caller.organization_ids))


# The catalogue's two are asked on every bot request, of a caller the token cache keeps: the
# same answer, with its `key` written, serves each request of that caller.
_FOR_EACH_CALLER = 4096


@functools.lru_cache(maxsize=_FOR_EACH_CALLER)
def bots(caller: Caller, custom: bool) -> Visibility:
    """4.5: the bot list; `custom` narrows it to the caller's organizations' bots."""
    if custom:
        if not caller.organization_ids:
            return NOTHING
        return Visibility.of(_in_organizations(caller.organization_ids))
    if caller.is_admin:
        return EVERYTHING
    if caller.is_user:
        return _public_or_organizations(caller)
    return Visibility.of({"isPublic": True})


@dataclass(frozen=True)
class BotAccess:
    """4.7: the bots a caller may get one of, and whether it sees their details."""

    visibility: Visibility
    detailed: bool = False

    @functools.cached_property
    def key(self) -> str:
        """As `Visibility.key`."""
        return repr(self)


@functools.lru_cache(maxsize=_FOR_EACH_CALLER)
def bot_access(caller: Caller) -> BotAccess:
    """4.7: a bot the caller could list with any parameters, `custom=true` included; only
    an admin sees its details."""
    if caller.is_admin:
        return BotAccess(EVERYTHING, detailed=True)
    return BotAccess(_public_or_organizations(caller))


def bot_requests(caller: Caller) -> Visibility:
    """4.1 and 4.3: the user's own requests and those of the user's organizations."""
    if not caller.is_user:
        raise Forbidden("Organization tokens cannot list or read a user's bot requests.")
    mine = {"createdBy": caller.id}
    if not caller.organization_ids:
        return Visibility.of(mine)
    return Visibility.of(mine, _in_organizations(caller.organization_ids))


def own_usage(caller: Caller) -> Visibility:
    """7.3: a user's usage is the requests it made, wherever; an organization has its own."""
    if not caller.is_user:
        raise Forbidden("Organization tokens have no usage of their own: use the organization's.")
    return Visibility.of({"createdBy": caller.id})


def _require_organization(caller: Caller, organization_id: ObjectId) -> None:
    if organization_id not in caller.organization_ids:
        if caller.is_user:
            raise Forbidden("You are not a member of this organization.")
        raise Forbidden("This token belongs to another organization.")


def organization(caller: Caller, organization_id: ObjectId) -> Visibility:
    """4.2, 4.6 and 4.8: members and the organization's own token see all it holds."""
    _require_organization(caller, organization_id)
    return Visibility.of({"organization": organization_id})


def organization_bot_request(caller: Caller, organization_id: ObjectId) -> Visibility:
    """4.4: besides members, a user sees the requests it made itself for the organization.

    Such a user gets a 404 for the organization's other requests, not a 403: the request
    exists for it only if it could see it.
    """
    of_organization = {"organization": organization_id}
    if caller.is_user and organization_id not in caller.organization_ids:
        return Visibility.of({**of_organization, "createdBy": caller.id})
    _require_organization(caller, organization_id)
    return Visibility.of(of_organization)
