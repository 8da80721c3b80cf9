"""Per-token rate limits (Flask-Limiter): one bucket per bearer token, one per IP without.

The bucket key is the token's SHA-256, never the token itself: keys live in the limiter's
storage (a shared Redis, say), which is no place for credentials. Settings are Flask-Limiter's
own `RATELIMIT_*` names, read from the environment by `config.py`.
"""

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from authentication import auth, hash_token


def rate_limit_key() -> str:
    credentials = auth.get_auth()
    if credentials is not None and credentials.token:
        return "token:" + hash_token(credentials.token)
    return "ip:" + get_remote_address()


def init_app(app: Flask) -> Limiter:
    """Call after registering the blueprints: those built `rate_limited=False` are exempt."""
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    limiter = Limiter(rate_limit_key, app=app)
    for blueprint in app.blueprints.values():
        if getattr(blueprint, "rate_limited", True) is False:
            limiter.exempt(blueprint)
    return limiter
