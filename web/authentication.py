"""Bearer tokens: a token's SHA-256 is looked up in `tokens`; the raw token is never stored.

When JWT support is configured (`jwt_tokens`), a signed access token naming a user is
accepted too. Either way the resolved `Caller` is what `auth.current_user()` returns.

Every request reads what its token stands for from the database, in one round trip (the
stored token with its user or organization, or a JWT's user), unless the worker's token cache
holds it: that cache is kept exact by a change stream (`runtime.changes`), so a revocation, a
role change or a removed membership still reaches every worker within a second, whoever wrote
it. It is keyed by the token's hash and keeps no unknown token, so a newly issued token works
at once and guessing fills no memory; expiry is checked on every use either way (a stored
token's `expiresAt`, a JWT's `exp`).

A browser's `EventSource` cannot send a header, so the live feeds also take the token as the
`access_token` query parameter, as RFC 6750 allows where no header can be sent
(docs/api.md#live-feed). Only those endpoints do (`Blueprint.token_in_query`): elsewhere it
authenticates nothing (a 401, or with a header an unknown parameter, a 400). No query value is
logged or traced (web/request_log.py, runtime/tracing.py), and a Bearer header with it is a
400 rather than a guess which one counts.
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from blinker import Namespace
from bson import ObjectId
from flask import Flask, current_app, g, request
from flask_httpauth import HTTPTokenAuth
from pymongo.database import Database
from werkzeug.datastructures import Authorization

from access.callers import Caller, expiry, unexpired_caller, user_caller
from access.jwt_tokens import JwtVerifier, Subject, looks_like_jwt
from domain import timestamps
from domain.errors import InvalidParameter
from runtime.bearer_tokens import QUERY_TOKEN, hash_token
from runtime.database import admitted_primary_db
from web.errors import json_error, status_message

MAX_TOKEN_LENGTH = 4096  # room for a signed JWT; opaque tokens are far shorter


class _BearerAuth(HTTPTokenAuth):
    def get_auth(self) -> Authorization | None:
        """The `Authorization` header's token, or where the endpoint takes it, the query's."""
        from_header = super().get_auth()
        served = request._get_current_object()  # once: each read through the proxy costs more
        if QUERY_TOKEN not in served.args:
            return from_header
        view = current_app.view_functions.get(served.endpoint)
        if not getattr(view, "token_in_query", False):
            return from_header
        if from_header is not None:  # a Bearer header; another scheme is a proxy's, say
            raise InvalidParameter(
                QUERY_TOKEN, "Send the token in the Authorization header or here, not both."
            )
        return Authorization("bearer", token=request.args[QUERY_TOKEN])

    # The library's own two, reading `g` and the app once rather than through their proxies,
    # each read of which costs more than the rest of either
    # (docs/decisions/2026-11-29-what-a-request-costs.md).
    def current_user(self) -> "Caller | None":
        return getattr(g._get_current_object(), "flask_httpauth_user", None)

    def ensure_sync(self, f):
        return current_app._get_current_object().ensure_sync(f)


auth = _BearerAuth(scheme="Bearer")

# Sent by the app where a request's authentication fails, before its 401 is written; a receiver
# may answer otherwise by raising an HTTPException (the failure budget of `rate_limits` does).
authentication_failed = Namespace().signal("authentication-failed")


@dataclass(frozen=True)
class Lookups:
    """Where a token's caller is read from, given by the app factory (the repositories of
    tokens and users), so that the web layer reads no collection itself: the stored token
    with what it names, by the token's hash; a JWT's user, by id."""

    token: Callable[[Database, str], dict | None]
    user: Callable[[Database, ObjectId], dict | None]


def init_app(app: Flask, lookups: Lookups) -> None:
    app.extensions["caller_lookups"] = lookups
    app.extensions["jwt"] = JwtVerifier.from_settings(
        app.config.get("JWT_SECRET"),
        app.config.get("JWT_PUBLIC_KEY"),
        app.config.get("JWT_AUDIENCE"),
        app.config.get("JWT_ISSUER"),
    )


def _well_formed(token: str) -> bool:
    return 0 < len(token) <= MAX_TOKEN_LENGTH and token.isascii() and token.isprintable()


def _jwt_subject(token: str, extensions: dict) -> Subject | None:
    verifier = extensions.get("jwt")
    if verifier is None or not looks_like_jwt(token):
        return None
    return verifier.subject(token)


def _jwt_caller(token: str, extensions: dict) -> Caller | None:
    subject = _jwt_subject(token, extensions)
    if subject is None:
        return None
    user = extensions["token_cache"].get(
        ("jwt", hash_token(token)),
        lambda: extensions["caller_lookups"].user(admitted_primary_db(), subject.user_id),
        lambda user: [("users", user["_id"])],
    )
    return None if user is None else user_caller(user)


def _opaque_caller(token: str, extensions: dict) -> Caller | None:
    token_hash = hash_token(token)
    lookups = extensions["caller_lookups"]
    standing = extensions["token_cache"].get(
        ("token", token_hash),
        lambda: _token_standing(lookups.token(admitted_primary_db(), token_hash)),
        lambda standing: standing.sources,
    )
    return None if standing is None else standing.caller_now()


def _token_standing(document: dict | None) -> "Standing | None":
    """A stored token as the token cache keeps it: its caller built once, not per request.
    Its sources are the token and what it names, found or not: a user created later under
    that id changes what the token stands for too."""
    if document is None:
        return None
    sources = {
        ("tokens", document["_id"]),
        ("users", document.get("user")),
        ("organizations", document.get("organization")),
    }
    return Standing(unexpired_caller(document), frozenset(sources), expiry(document))


@auth.verify_token
def _verify_token(token: str) -> Caller | None:
    if not _well_formed(token):
        return None
    extensions = current_app._get_current_object().extensions  # not through the proxy
    return _jwt_caller(token, extensions) or _opaque_caller(token, extensions)


@auth.error_handler
def _unauthorized(status: int):
    if status == 401:
        authentication_failed.send(current_app._get_current_object())
    return json_error(status, status_message(status))


def current_caller() -> Caller:
    return auth.current_user()


@dataclass(frozen=True)
class Standing:
    """What the request's token stands for, read from the database at one moment: its caller
    (None once revoked, expired or orphaned), the documents that caller is read from, as
    (collection, id), and when the token expires by itself (naive UTC), if it does."""

    caller: Caller | None
    sources: frozenset[tuple[str, object]] = frozenset()
    expires_at: dt.datetime | None = None

    def caller_now(self) -> Caller | None:
        """The caller, unless the token has expired since it was read."""
        if self.caller is None or self.expires_at is None:
            return self.caller
        return self.caller if timestamps.now() < self.expires_at else None


def standing_now() -> Standing:
    """The request's token read again from the database, never from the token cache: a live
    feed reads it when a change of one of its sources reaches the feed, in the order of the
    feed's own change stream (blueprints/feeds.py), which the cache's stream does not share."""
    credentials = auth.get_auth()
    token = credentials.token if credentials else None
    if not token or not _well_formed(token):
        return Standing(None)
    lookups = current_app.extensions["caller_lookups"]
    subject = _jwt_subject(token, current_app.extensions)
    if subject is not None:
        user = lookups.user(admitted_primary_db(), subject.user_id)
        caller = None if user is None else user_caller(user)
        return Standing(caller, frozenset({("users", subject.user_id)}), subject.expires_at)
    standing = _token_standing(lookups.token(admitted_primary_db(), hash_token(token)))
    if standing is None:
        return Standing(None)
    return Standing(standing.caller_now(), standing.sources, standing.expires_at)
