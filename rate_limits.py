"""Per-token rate limits (Flask-Limiter): one bucket per bearer token, one per IP without.

The bucket key is the token's SHA-256, never the token itself: keys live in the limiter's
storage (a shared Redis, say), which is no place for credentials. Settings are Flask-Limiter's
own `RATELIMIT_*` names, read from the environment by `config.py`.

A client inventing a new token for every request would get a fresh bucket each time, so
failed authentications are counted per IP as well: past `RATELIMIT_AUTH_FAILURES` of them,
that address gets 429s until its window ends, whatever token it sends.
"""

from flask import Flask, Response, current_app
from flask_limiter import ApplicationLimit, Limiter
from flask_limiter.util import get_remote_address

from authentication import auth, hash_token


def rate_limit_key() -> str:
    credentials = auth.get_auth()
    if credentials is not None and credentials.token:
        return "token:" + hash_token(credentials.token)
    return "ip:" + get_remote_address()


def _address_key() -> str:
    return "auth-failures:" + get_remote_address()


def _failed_authentication(response: Response) -> bool:
    return response.status_code == 401


def init_app(app: Flask) -> Limiter:
    """Call after registering the blueprints: those built `rate_limited=False` are exempt."""
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    failures = ApplicationLimit(
        lambda: current_app.config["RATELIMIT_AUTH_FAILURES"],
        key_function=_address_key,
        deduct_when=_failed_authentication,
    )
    limiter = Limiter(rate_limit_key, app=app, application_limits=[failures])
    for blueprint in app.blueprints.values():
        if getattr(blueprint, "rate_limited", True) is False:
            limiter.exempt(blueprint)
    return limiter
