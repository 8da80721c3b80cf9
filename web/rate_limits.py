"""Per-token rate limits (Flask-Limiter): one bucket per bearer token, one per IP without.

The bucket key is the token's SHA-256, never the token itself: keys live in the limiter's
storage (a shared Redis, say), which is no place for credentials. Settings are Flask-Limiter's
own `RATELIMIT_*` names, read from the environment by `runtime/config.py`.

A client inventing a new token for every request would get a fresh bucket each time, so
failed authentications are counted per client address too, where authentication fails: past
`RATELIMIT_AUTH_FAILURES` of them, a request from that address whose authentication fails gets
429 instead of 401 until the window ends. A valid token is neither counted nor refused there,
so one client's guesses cannot lock out the other tenants behind the same proxy or NAT. The
address is what `TRUSTED_PROXIES` makes of the forwarded headers (`app.py`).

When the storage is down (Redis unreachable), Flask-Limiter's in-memory fallback keeps the same
limits in each process, logs one warning (a JSON line, like every record: runtime/logs.py),
and asks the storage again on a request after a pause that doubles from 1 s to 32 s (then
starts over); the failure budget follows the same switch.
"""

import logging
import math
import time

from flask import Flask
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address
from limits import parse
from limits.errors import StorageError
from werkzeug.exceptions import TooManyRequests

from runtime.bearer_tokens import hash_token
from web.authentication import auth, authentication_failed
from web.metrics import RATE_LIMITED

log = logging.getLogger(__name__)


def rate_limit_key() -> str:
    credentials = auth.get_auth()
    if credentials is not None and credentials.token:
        return "token:" + hash_token(credentials.token)
    return "ip:" + get_remote_address()


def _count_failed_authentication(app: Flask, **extra) -> None:
    """Past the address's budget the failure is refused with 429, through `errors`' body."""
    limiter, budget = app.extensions["auth_failure_budget"]
    keys = ("auth-failures", get_remote_address())
    # The strategy in use: the shared storage's, or the in-memory fallback's while it is down.
    strategy = limiter.limiter
    try:
        if strategy.hit(budget, *keys):
            return
        reset_at = strategy.get_window_stats(budget, *keys).reset_time
    except StorageError:
        log.warning("rate-limit storage failed: this failed authentication was not counted")
        return
    RATE_LIMITED.labels(limit="RATELIMIT_AUTH_FAILURES").inc()
    raise TooManyRequests(retry_after=max(1, math.ceil(reset_at - time.time())))


def _count_refusal(breached: RequestLimit) -> None:
    """Flask-Limiter's `on_breach`: the 429 itself is left to Flask-Limiter."""
    RATE_LIMITED.labels(limit="RATELIMIT_DEFAULT").inc()


def _count_export_refusal(breached: RequestLimit) -> None:
    RATE_LIMITED.labels(limit="RATELIMIT_EXPORT").inc()


def init_app(app: Flask) -> Limiter:
    """Call after registering the blueprints: those built `rate_limited=False` are exempt."""
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    app.config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)
    app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", {"wrap_exceptions": True})
    limiter = Limiter(rate_limit_key, app=app, on_breach=_count_refusal)
    for blueprint in app.blueprints.values():
        if getattr(blueprint, "rate_limited", True) is False:
            limiter.exempt(blueprint)
    # One budget per token for both export endpoints, besides the default one.
    limiter.shared_limit(
        app.config["RATELIMIT_EXPORT"],
        scope="export",
        override_defaults=False,
        on_breach=_count_export_refusal,
    )(app.blueprints["exports"])
    if limiter.enabled:
        budget = parse(app.config["RATELIMIT_AUTH_FAILURES"])
        app.extensions["auth_failure_budget"] = (limiter, budget)
        authentication_failed.connect(_count_failed_authentication, app)
    return limiter
