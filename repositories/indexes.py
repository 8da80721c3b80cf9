"""Every index the queries need; `flask db init` creates them, idempotently."""

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.database import Database

INDEXES: dict[str, list[IndexModel]] = {
    "tokens": [IndexModel([("tokenHash", ASCENDING)], unique=True)],
    "users": [IndexModel([("email", ASCENDING)], unique=True, sparse=True)],
    "bots": [
        IndexModel([("slug", ASCENDING)], unique=True),
        IndexModel([("isPublic", ASCENDING), ("name", ASCENDING), ("_id", ASCENDING)]),
        IndexModel([("organization", ASCENDING), ("name", ASCENDING), ("_id", ASCENDING)]),
        IndexModel([("name", ASCENDING), ("_id", ASCENDING)]),
        IndexModel([("tags", ASCENDING)]),
        IndexModel([("service", ASCENDING)]),
    ],
    "botrequests": [
        IndexModel([("createdBy", ASCENDING), ("createdAt", DESCENDING), ("_id", DESCENDING)]),
        IndexModel([("organization", ASCENDING), ("createdAt", DESCENDING), ("_id", DESCENDING)]),
        IndexModel([("bot", ASCENDING)]),
    ],
    "services": [IndexModel([("slug", ASCENDING)])],
}


def ensure_indexes(db: Database) -> dict[str, list[str]]:
    """Create what is missing; existing indexes of the same keys are left as they are."""
    return {name: db[name].create_indexes(models) for name, models in INDEXES.items()}
