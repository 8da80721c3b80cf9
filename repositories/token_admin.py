"""The operator's side of `tokens`: issue, list and revoke, as the command line does.

Only hashes are handled here; the raw token exists in the issuing command alone.
"""

import datetime as dt

from bson import ObjectId
from pymongo.database import Database

from domain.errors import NotFound
from repositories.reads import equals_ignoring_case, lookup_one


def _by_id_or(field: str, reference: str) -> dict:
    if ObjectId.is_valid(reference):
        return {"$or": [{"_id": ObjectId(reference)}, {field: equals_ignoring_case(reference)}]}
    return {field: equals_ignoring_case(reference)}


class TokenAdmin:
    def __init__(self, db: Database):
        self._db = db
        self._tokens = db.tokens

    def find_users(self, reference: str) -> list[dict]:
        """Users whose id or email (any case) is `reference`."""
        return list(self._db.users.find(_by_id_or("email", reference), {"name": 1, "email": 1}))

    def find_organizations(self, reference: str) -> list[dict]:
        """Organizations whose id or name (any case) is `reference`: names may repeat."""
        return list(self._db.organizations.find(_by_id_or("name", reference), {"name": 1}))

    def issue(
        self,
        token_hash: str,
        *,
        kind: str,
        owner: ObjectId,
        label: str | None,
        now: dt.datetime,
        expires_at: dt.datetime | None = None,
        token_id: ObjectId | None = None,
    ) -> ObjectId:
        """Store a token's hash; a given `token_id` replaces the token stored under it."""
        token_id = token_id or ObjectId()
        document = {
            "_id": token_id,
            "tokenHash": token_hash,
            "kind": kind,
            "user": owner if kind == "user" else None,
            "organization": owner if kind == "organization" else None,
            "label": label,
            "createdAt": now,
            "expiresAt": expires_at,
            "revokedAt": None,
        }
        self._tokens.replace_one({"_id": token_id}, document, upsert=True)
        return token_id

    def exists(self, token_id: ObjectId) -> bool:
        return self._tokens.count_documents({"_id": token_id}, limit=1) > 0

    def list(self) -> list[dict]:
        """Every token with its owner, oldest first; never the hash."""
        pipeline = [
            {"$sort": {"createdAt": 1, "_id": 1}},
            *lookup_one("user", "users", "userDocument"),
            *lookup_one("organization", "organizations", "organizationDocument"),
            {
                "$project": {
                    "kind": 1,
                    "user": 1,
                    "organization": 1,
                    "label": 1,
                    "createdAt": 1,
                    "expiresAt": 1,
                    "revokedAt": 1,
                    "userDocument.name": 1,
                    "userDocument.email": 1,
                    "organizationDocument.name": 1,
                }
            },
        ]
        return list(self._tokens.aggregate(pipeline))

    def revoke(self, token_id: ObjectId, now: dt.datetime) -> dt.datetime | None:
        """Revoke the token now; if it already was, leave it and return when that was."""
        result = self._tokens.update_one(
            {"_id": token_id, "revokedAt": None}, {"$set": {"revokedAt": now}}
        )
        if result.modified_count:
            return None
        token = self._tokens.find_one({"_id": token_id}, {"revokedAt": 1})
        if token is None:
            raise NotFound(f"No token with id {token_id}.")
        return token["revokedAt"]
