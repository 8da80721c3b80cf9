"""Eve, the anchor `make bench` measures the bot rows against: the same bots, behind the same
tokens, served by Eve (pyeve/eve) over the same database, as a team would first build it.

A token is looked up as the service does it without its cache: the token with its user or
organization, in one aggregation, on every request. What the caller may see is added to
Eve's lookup in a `pre_GET` hook, as one `$or` (Eve has no per-query branches); a bot by slug
is Eve's `additional_lookup`. Eve answers in its own shape (`_items`, `_meta`), counts every
list (`OPTIMIZE_PAGINATION_FOR_SPEED` off, its default) and has no join, so a filter by
service name is given the service's id, which the service resolves itself.

`gunicorn "bench.eve:create_app()"`, with `MONGODB_URI` and `MONGODB_DB` as the service takes
them. Eve is imported there only: the benchmark and its tests, which read `paths`, never load it.
"""

import os
from urllib.parse import quote

from flask import Flask, g

from access.callers import caller_for
from domain import timestamps
from repositories.tokens import TokenRepository
from runtime.bearer_tokens import hash_token

_BOT = {
    "slug": {"type": "string"},
    "name": {"type": "string"},
    "description": {"type": "string"},
    "creditCost": {"type": "number"},
    "modelKey": {"type": "string"},
    "applyToApi": {"type": "boolean"},
    "inputs": {"type": "list"},
    "isPublic": {"type": "boolean"},
    "organization": {"type": "objectid"},
    "service": {"type": "objectid"},
    "tags": {"type": "list"},
}
SETTINGS = {
    "DOMAIN": {
        "bots": {
            "schema": _BOT,
            "additional_lookup": {"url": r'regex("[\w.-]+")', "field": "slug"},
            "datasource": {"projection": dict.fromkeys(_BOT, 1)},
        }
    },
    "RESOURCE_METHODS": ["GET"],
    "ITEM_METHODS": ["GET"],
    "LAST_UPDATED": "updatedAt",
    "DATE_CREATED": "createdAt",
    "RENDERERS": ["eve.render.JSONRenderer"],
    "PAGINATION_DEFAULT": 10,
    "MONGO_QUERY_BLACKLIST": ["$where"],  # a name filter is a `$regex`, as the service's is
}


def _visible(request, lookup: dict) -> None:
    """Public bots and the caller's organizations' bots; every bot for an admin."""
    caller = g.caller
    if caller.is_admin:
        return
    branches = [{"isPublic": True}]
    if caller.is_user and caller.organization_ids:
        branches.append({"organization": {"$in": sorted(caller.organization_ids)}})
    lookup["$or"] = branches


def paths(tag, service_id, public_bot: str) -> dict[str, str]:
    """Eve's URL for each bot row of `make bench` (bench/run.py), sorted by name, 10 a page."""

    def where(clause: str) -> str:
        return f"/bots?sort=name&where={quote(clause)}"

    return {
        "bots list": "/bots?sort=name",
        "bots by name": where('{"name": {"$regex": "ember", "$options": "i"}}'),
        "bots by tags": where(f'{{"tags": "{tag}"}}'),
        "bots by service": where(f'{{"service": "{service_id}"}}'),
        "bot by slug": f"/bots/{public_bot}",
    }


def create_app() -> Flask:
    from eve import Eve
    from eve.auth import TokenAuth

    class Tokens(TokenAuth):
        def check_auth(self, token, allowed_roles, resource, method):
            tokens = TokenRepository(app.data.driver.db)
            g.caller = caller_for(tokens.find(hash_token(token)), timestamps.now())
            return g.caller is not None

    settings = {
        **SETTINGS,
        "MONGO_URI": os.environ.get("MONGODB_URI"),
        "MONGO_DBNAME": os.environ.get("MONGODB_DB"),
    }
    app = Eve(settings=settings, auth=Tokens)
    app.on_pre_GET_bots += _visible
    return app
