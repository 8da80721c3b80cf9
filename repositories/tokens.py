"""Bearer tokens and the principal each one stands for."""

from pymongo.database import Database

from repositories.stages import lookup_all


class TokenRepository:
    def __init__(self, db: Database):
        self._tokens = db.tokens

    def find(self, token_hash: str) -> dict | None:
        """The token with its user (memberships, role) or organization, in one round trip."""
        pipeline = [
            {"$match": {"tokenHash": token_hash}},
            {"$limit": 1},
            lookup_all("user", "users", "users"),
            lookup_all("organization", "organizations", "organizations"),
            {
                "$project": {
                    "kind": 1,
                    "user": 1,
                    "organization": 1,
                    "expiresAt": 1,
                    "revokedAt": 1,
                    "users._id": 1,
                    "users.role": 1,
                    "users.organizations": 1,
                    "organizations._id": 1,
                }
            },
        ]
        return next(iter(self._tokens.aggregate(pipeline)), None)
