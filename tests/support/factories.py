"""Builds stored data the way the writing system would, for tests to read through the API."""

import datetime as dt
import itertools
import secrets

from bson import ObjectId
from pymongo.database import Database

from runtime.bearer_tokens import hash_token

BASE_TIME = dt.datetime(2026, 1, 2, 3, 4, 5, 678000)


class World:
    def __init__(self, db: Database):
        self.db = db
        self._clock = itertools.count()

    def _tick(self) -> dt.datetime:
        return BASE_TIME + dt.timedelta(minutes=next(self._clock))

    def organization(self, name: str = "Acme") -> ObjectId:
        return self.db.organizations.insert_one({"name": name}).inserted_id

    def user(self, name: str = "Ada", organizations=(), role: str = "user") -> ObjectId:
        document = {
            "name": name,
            "email": f"{name.lower().replace(' ', '.')}.{secrets.token_hex(3)}@example.com",
            "role": role,
            "organizations": list(organizations),
        }
        return self.db.users.insert_one(document).inserted_id

    def token(self, *, user=None, organization=None, expires_at=None, revoked_at=None) -> str:
        raw = "bcs_" + secrets.token_urlsafe(32)
        self.db.tokens.insert_one(
            {
                "tokenHash": hash_token(raw),
                "kind": "user" if user is not None else "organization",
                "user": user,
                "organization": organization,
                "label": "test",
                "createdAt": self._tick(),
                "expiresAt": expires_at,
                "revokedAt": revoked_at,
            }
        )
        return raw

    def service(
        self, name: str = "Writing", slug: str = "writing", directory: str = "text"
    ) -> ObjectId:
        return self.db.services.insert_one(
            {"name": name, "slug": slug, "directory": directory}
        ).inserted_id

    def tag(self, name: str = "tag") -> ObjectId:
        return self.db.tags.insert_one({"name": name}).inserted_id

    def bot(
        self,
        slug: str,
        *,
        name: str | None = None,
        organization: ObjectId | None = None,
        is_public: bool = True,
        credit_cost=1,
        service: ObjectId | None = None,
        tags=(),
        **extra,
    ) -> ObjectId:
        created = self._tick()
        document = {
            "slug": slug,
            "name": name if name is not None else slug.replace("-", " ").title(),
            "description": f"The {slug} bot.",
            "creditCost": credit_cost,
            "modelKey": "gpt-4o-mini",
            "applyToApi": True,
            "inputs": [{"name": "prompt", "type": "text", "required": True}],
            "isPublic": is_public,
            "organization": organization,
            "service": service,
            "tags": list(tags),
            "createdAt": created,
            "updatedAt": created,
            **extra,
        }
        return self.db.bots.insert_one(document).inserted_id

    def bot_request(
        self,
        *,
        bot: ObjectId | None,
        created_by: ObjectId | None,
        organization: ObjectId | None = None,
        **extra,
    ) -> ObjectId:
        created = self._tick()
        document = {
            "bot": bot,
            "createdBy": created_by,
            "organization": organization,
            "inputs": {"prompt": "Hello"},
            "response": {"message": "Hi there"},
            "ip": "203.0.113.7",
            "createdAt": created,
            "updatedAt": created,
            **extra,
        }
        return self.db.botrequests.insert_one(document).inserted_id


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}
