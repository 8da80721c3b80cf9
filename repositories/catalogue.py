"""The bot repository's answers (4.5 to 4.8) through the worker's catalogue cache
(docs/deployment.md#the-exact-caches), which a change stream keeps exact (`runtime.changes`).

An answer is keyed by everything it was read with: the operation, the caller's `Visibility`
(or `BotAccess`) and the query. The visibility is the set of bots the caller may see, as the
access policy writes it, so callers share an entry exactly when they see the same bots: an
organization token and a user of no organization share the public catalogue, members of the
same organizations share theirs, and an admin's detailed bot is never another caller's.
The database is asked for only on a miss, so a warm answer holds no database permit.
"""

from collections.abc import Callable

from pymongo.database import Database

from repositories.bots import BotRepository
from runtime.exact_cache import ExactCache


class Catalogue:
    def __init__(self, cache: ExactCache, database: Callable[[], Database]):
        self._cache = cache
        self._database = database

    def find_page(self, visibility, query):
        return self._answer("find_page", visibility, query)

    def get(self, access, slug, reads):
        return self._answer("get", access, slug, reads)

    def get_with_organization(self, visibility, slug, reads):
        return self._answer("get_with_organization", visibility, slug, reads)

    def _answer(self, operation: str, access, *arguments):
        """Keyed by the access's own key (`policy.Visibility.key`) and the rest's `repr`,
        which writes every value of a query (ObjectIds, dates, BSON types) with its type,
        so two different reads never share a key."""
        return self._cache.get(
            (operation, access.key, repr(arguments)),
            lambda: getattr(BotRepository(self._database()), operation)(access, *arguments),
        )
