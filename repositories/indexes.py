"""Every index the queries need; `flask db init` creates them, idempotently.

Each list query is one `$match` per visibility branch (repositories/paging.py), then a sort
on one attribute with `_id` breaking ties. An index serves such a query when it holds, in
order: the branch's equality fields, the sort attribute, `_id`, and then the fields the
filter still tests (the earlier branch it excludes, the `bot` ids of a name filter). MongoDB
then counts and selects the page from index keys alone, without reading a document, and
walks only `skip + limit` keys for the page. Each index serves both sort directions.

Bots are a catalogue (thousands of documents): their name, tags and service filters are
checked on the documents of the visible set. Bot requests grow without bound: every field a
request list filters on is in its index.
"""

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.database import Database

BOT_SORTS = ("name", "slug", "creditCost", "createdAt", "updatedAt")
REQUEST_SORTS = ("createdAt", "updatedAt")


def _bot_indexes() -> list[IndexModel]:
    indexes = [
        IndexModel([("slug", ASCENDING)], unique=True),
        IndexModel([("tags", ASCENDING)]),
        IndexModel([("service", ASCENDING)]),
    ]
    for attribute in BOT_SORTS:
        by = [(attribute, ASCENDING), ("_id", ASCENDING)]
        indexes += [
            # Public bots: every caller's first branch.
            IndexModel([("isPublic", ASCENDING), *by]),
            # An organization's bots; `isPublic` excludes the public branch before it.
            IndexModel([("organization", ASCENDING), *by, ("isPublic", ASCENDING)]),
            # Every bot: an admin's catalogue.
            IndexModel(by),
        ]
    return indexes


def _request_indexes() -> list[IndexModel]:
    """Each branch's equality fields, then the sort key and `_id`, then what is still tested.

    A `bot` (a slug, resolved to one bot first) or `createdBy` filter is an equality placed
    before the sort key, so its count and page walk only the keys it selects, however few
    of the branch's requests it keeps. A name filter's `bot: {$in}` uses the same indexes:
    MongoDB merges up to 200 equalities in sort order, and beyond that tests `bot` where it
    trails the branch's own index. `createdFrom` and `createdTo` bound the sort key itself
    when sorting by `createdAt`, and trail the `updatedAt` indexes, so that the count stays
    on index keys. When two filters meet (a member's requests of one bot), the first is the
    bound and the other trails.
    """
    indexes = []
    for attribute in REQUEST_SORTS:
        by = [(attribute, DESCENDING), ("_id", DESCENDING)]
        dated = [] if attribute == "createdAt" else [("createdAt", ASCENDING)]
        user, organization = ("createdBy", ASCENDING), ("organization", ASCENDING)
        bot = ("bot", ASCENDING)
        indexes += [
            # A user's own requests.
            IndexModel([user, *by, bot, *dated]),
            # An organization's requests; `createdBy` excludes the user's own branch.
            IndexModel([organization, *by, user, bot, *dated]),
            # Either of them, of one bot.
            IndexModel([user, bot, *by, *dated]),
            IndexModel([organization, bot, *by, user, *dated]),
            # One member's requests in an organization.
            IndexModel([organization, user, *by, bot, *dated]),
        ]
    return indexes


INDEXES: dict[str, list[IndexModel]] = {
    "tokens": [IndexModel([("tokenHash", ASCENDING)], unique=True)],
    "users": [IndexModel([("email", ASCENDING)], unique=True, sparse=True)],
    "bots": _bot_indexes(),
    "botrequests": _request_indexes(),
    "services": [IndexModel([("slug", ASCENDING)])],
}


def ensure_indexes(db: Database) -> dict[str, list[str]]:
    """Create what is missing; existing indexes of the same keys are left as they are."""
    return {name: db[name].create_indexes(models) for name, models in INDEXES.items()}
