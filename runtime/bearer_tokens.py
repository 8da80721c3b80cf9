"""The opaque bearer token's format: a prefix, 256 random bits, and the SHA-256 that is stored.

Below every other module, without a dependency of its own: authentication, the command line
that issues tokens and the log configuration that masks them all read it here.
"""

import hashlib
import secrets

TOKEN_PREFIX = "bcs_"
# Where a token travels in a URL, for a client that can send no header (a browser's
# `EventSource`): RFC 6750's name, taken by the live feeds only (web/authentication.py).
QUERY_TOKEN = "access_token"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """256 random bits behind a prefix that people and secret scanners recognise."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)
