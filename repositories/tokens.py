"""Bearer tokens and the principal each one stands for."""

from pymongo.database import Database

from repositories.reads import lookup_all


class TokenRepository:
    def __init__(self, db: Database):
        self._tokens = db.tokens

    def find(self, token_hash: str) -> dict | None:
        """The token with its user (memberships, role) or organization, in one round trip.

        As the arrays `$lookup` gives: an `$unwind` would cost a stage on the embedded
        engine, where MongoDB folds it into the lookup."""
        pipeline = [
            {"$match": {"tokenHash": token_hash}},
            {"$limit": 1},
            lookup_all("user", "users", "userDocuments"),
            lookup_all("organization", "organizations", "organizationDocuments"),
            {
                "$project": {
                    "kind": 1,
                    "user": 1,
                    "organization": 1,
                    "expiresAt": 1,
                    "revokedAt": 1,
                    "userDocuments._id": 1,
                    "userDocuments.role": 1,
                    "userDocuments.organizations": 1,
                    "organizationDocuments._id": 1,
                }
            },
        ]
        return next(iter(self._tokens.aggregate(pipeline)), None)
