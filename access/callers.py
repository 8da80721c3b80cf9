"""Who is calling: the one object that authentication resolves and the policy reads."""

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
