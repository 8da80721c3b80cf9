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

Flask-Limiter announces one limit as `X-RateLimit-*`. Generic clients and gateways read the
IETF fields instead (docs/api.md#rate-limits), which say every policy that counted a request,
so `_announce` adds `RateLimit-Policy` and `RateLimit` from the same counts.
"""

import logging
import math
import time
from dataclasses import dataclass
from http import HTTPStatus

import http_sf
from flask import Flask, Response, current_app, g
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address
from limits import RateLimitItem, parse, parse_many
from limits.errors import StorageError
from werkzeug.exceptions import TooManyRequests

from runtime.bearer_tokens import hash_token
from web.authentication import auth, authentication_failed
from web.cross_origin import is_preflight
from web.metrics import RATE_LIMITED

log = logging.getLogger(__name__)

EXPORT_SCOPE = "export"
FEED_SCOPE = "feed"
AUTH_FAILURES = "auth-failures"
# Each policy `RateLimit-Policy` names: the setting of its limit, and what it counts
# (docs/api.md#rate-limits, written from here by `make docs`).
POLICIES = {
    "default": ("RATELIMIT_DEFAULT", "every request of a token, or of an address without one"),
    "export": ("RATELIMIT_EXPORT", "a token's exports, besides `default`"),
    "feed": (
        "RATELIMIT_FEED",
        "a token's live feeds opened (each reconnect too), besides `default`",
    ),
    AUTH_FAILURES: ("RATELIMIT_AUTH_FAILURES", "an address's failed authentications"),
}
# The policies of a shared limit, named by its scope (`init_app`); any other limit
# Flask-Limiter counts is the token's `default`.
_SCOPED = (EXPORT_SCOPE, FEED_SCOPE)


def rate_limit_key() -> str:
    credentials = auth.get_auth()
    if credentials is not None and credentials.token:
        return "token:" + hash_token(credentials.token)
    return "ip:" + get_remote_address()


@dataclass(frozen=True)
class _Count:
    """One policy's count after this request, as the IETF fields tell it."""

    policy: str
    limit: RateLimitItem
    remaining: int
    reset_at: float
    refused: bool

    def seconds_left(self, now: float) -> int:
        return max(0, math.ceil(self.reset_at - now))


def _count_failed_authentication(app: Flask, **extra) -> None:
    """Past the address's budget the failure is refused with 429, through `errors`' body."""
    limiter, budget = app.extensions["auth_failure_budget"]
    keys = (AUTH_FAILURES, get_remote_address())
    # The strategy in use: the shared storage's, or the in-memory fallback's while it is down.
    strategy = limiter.limiter
    try:
        allowed = strategy.hit(budget, *keys)
        reset_at, remaining = strategy.get_window_stats(budget, *keys)
    except StorageError:
        log.warning("rate-limit storage failed: this failed authentication was not counted")
        return
    g.auth_failure_count = _Count(AUTH_FAILURES, budget, remaining, reset_at, not allowed)
    if allowed:
        return
    RATE_LIMITED.labels(limit="RATELIMIT_AUTH_FAILURES").inc()
    raise TooManyRequests(retry_after=max(1, math.ceil(reset_at - time.time())))


def _counts(limiter: Limiter, several: set[str]) -> list[_Count]:
    """The counts of this request: `export` and `feed` for the exports' and feeds' own
    budgets (their scopes, given in `init_app`), `default` for the token's, and the failure
    budget where authentication failed. A setting of several limits (`several`) names each
    by its window too."""
    counts = []
    for counted in limiter.current_limits:
        scope = counted.request_args[-1]
        policy = scope if scope in _SCOPED else "default"
        if policy in several:
            policy = f"{policy}-{counted.limit.get_expiry()}s"
        reset_at, remaining = counted.window
        counts.append(_Count(policy, counted.limit, remaining, reset_at, counted.breached))
    if "auth_failure_count" in g:
        counts.append(g.auth_failure_count)
    return counts


def _counted(response: Response) -> bool:
    """Flask-Limiter's `deduct_when` for the token's budget: a 304 is not counted, so that
    revalidating costs a client nothing (docs/api.md#conditional-requests)."""
    return response.status_code != HTTPStatus.NOT_MODIFIED


def _announce(response: Response) -> Response:
    """`RateLimit-Policy`, one item per policy that counted this request (its quota and
    window in seconds), and `RateLimit`, the one nearest to refusing: the refusing one on a
    429, else the one with the fewest requests left (its remaining count and the seconds
    until its window resets). Registered before Flask-Limiter's own hook, so that it runs
    after it (Flask runs these hooks in reverse), once the request was counted or not."""
    counting = current_app._get_current_object().extensions.get("rate_limit_counts")
    if counting is None:
        return response
    limiter, several = counting
    try:
        counts = _counts(limiter, several)
    except StorageError:
        return response  # Flask-Limiter has said so; its fallback answers the next request.
    if not counts:
        return response
    now = time.time()
    nearest = min(counts, key=lambda count: (not count.refused, count.remaining))
    response.headers["RateLimit-Policy"] = http_sf.ser(
        [
            (count.policy, {"q": count.limit.amount, "w": count.limit.get_expiry()})
            for count in counts
        ]
    )
    response.headers["RateLimit"] = http_sf.ser(
        [(nearest.policy, {"r": nearest.remaining, "t": nearest.seconds_left(now)})]
    )
    return response


def _count_refusal(breached: RequestLimit) -> None:
    """Flask-Limiter's `on_breach`: the 429 itself is left to Flask-Limiter."""
    RATE_LIMITED.labels(limit="RATELIMIT_DEFAULT").inc()


def _counting_refusals(setting: str):
    """The `on_breach` of a budget of its own, counted under its setting's name."""

    def count(breached: RequestLimit) -> None:
        RATE_LIMITED.labels(limit=setting).inc()

    return count


def init_app(app: Flask) -> Limiter:
    """Call after registering the blueprints: those built `rate_limited=False` are exempt."""
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    app.config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)
    app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", {"wrap_exceptions": True})
    # A 200 is counted after its answer (`_counted`): the store failing then is logged, and
    # the answer stands.
    app.config.setdefault("RATELIMIT_SWALLOW_ERRORS", True)
    # One budget per token for every endpoint together: Flask-Limiter's default limits would
    # give each endpoint a budget of its own, its application limits are shared by all.
    app.config["RATELIMIT_APPLICATION"] = app.config.pop("RATELIMIT_DEFAULT")
    app.after_request(_announce)
    limiter = Limiter(
        rate_limit_key,
        app=app,
        on_breach=_count_refusal,
        application_limits_deduct_when=_counted,
    )
    limiter.request_filter(is_preflight)
    for blueprint in app.blueprints.values():
        if getattr(blueprint, "rate_limited", True) is False:
            limiter.exempt(blueprint)
    # Budgets of their own per token, besides the default one: for both export endpoints,
    # and for opening live feeds.
    for setting, scope, blueprint in (
        ("RATELIMIT_EXPORT", EXPORT_SCOPE, "exports"),
        ("RATELIMIT_FEED", FEED_SCOPE, "feeds"),
    ):
        limiter.shared_limit(
            app.config[setting],
            scope=scope,
            override_defaults=False,
            on_breach=_counting_refusals(setting),
        )(app.blueprints[blueprint])
    if limiter.enabled:
        budget = parse(app.config["RATELIMIT_AUTH_FAILURES"])
        app.extensions["auth_failure_budget"] = (limiter, budget)
        authentication_failed.connect(_count_failed_authentication, app)
        # Flask-Limiter reads RATELIMIT_DEFAULT as RATELIMIT_APPLICATION (moved above).
        settings = {
            name: "RATELIMIT_APPLICATION" if setting == "RATELIMIT_DEFAULT" else setting
            for name, (setting, _) in POLICIES.items()
            if name != AUTH_FAILURES
        }
        several = {name for name, key in settings.items() if len(parse_many(app.config[key])) > 1}
        app.extensions["rate_limit_counts"] = (limiter, several)
    return limiter
