"""Bearer tokens and the principal each one stands for."""

from pymongo.database import Database

from repositories.stages import lookup_one


class TokenRepository:
    def __init__(self, db: Database):
        self._tokens = db.tokens

    def find(self, token_hash: str) -> dict | None:
        """The token with its user (memberships, role) or organization, in one round trip."""
        pipeline = [
            {"$match": {"tokenHash": token_hash}},
            {"$limit": 1},
            *lookup_one("user", "users", "userDocument"),
            *lookup_one("organization", "organizations", "organizationDocument"),
            {
                "$project": {
                    "kind": 1,
                    "user": 1,
                    "organization": 1,
                    "expiresAt": 1,
                    "revokedAt": 1,
                    "userDocument._id": 1,
                    "userDocument.role": 1,
                    "userDocument.organizations": 1,
                    "organizationDocument._id": 1,
                }
            },
        ]
        return next(iter(self._tokens.aggregate(pipeline)), None)
