"""Optional JSON Web Tokens (PyJWT): signed access tokens from another issuer, for our users.

Off unless a key is configured. Only the user id (`sub`) is taken from a token; the user's
role and memberships are read from `users` like for an opaque token, so a JWT never carries
stale rights. The algorithm follows from the key, never from the token's header.

Identity providers put the API they issued a token for in `aud`: with `JWT_AUDIENCE` set,
a token must name it; unset, a token carrying any `aud` is refused (PyJWT's rule), since it
was meant for some other API. `JWT_ISSUER` likewise pins `iss`.
"""

import datetime as dt
from dataclasses import dataclass

import jwt
from bson import ObjectId
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePublicKey
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from runtime.config import ConfigError

MIN_SECRET_BYTES = 32


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2


def _public_key(pem: str):
    try:
        key = load_pem_public_key(pem.encode())
    except (ValueError, UnsupportedAlgorithm):
        raise ConfigError("JWT_PUBLIC_KEY", "is not a PEM public key.") from None
    if isinstance(key, RSAPublicKey):
        return key, "RS256"
    if isinstance(key, EllipticCurvePublicKey):
        return key, "ES256"
    raise ConfigError("JWT_PUBLIC_KEY", "must be an RSA or EC (P-256) public key.")


@dataclass(frozen=True)
class Subject:
    """Whom a verified access token names, and when it expires (its `exp`, naive UTC)."""

    user_id: ObjectId
    expires_at: dt.datetime


class JwtVerifier:
    def __init__(self, key, algorithm: str, audience: str | None = None, issuer: str | None = None):
        self._key = key
        self._algorithms = [algorithm]
        self._audience = audience
        self._issuer = issuer
        self._required = ["exp", "sub"]
        if audience:
            self._required.append("aud")
        if issuer:
            self._required.append("iss")

    @classmethod
    def from_settings(
        cls,
        secret: str | None,
        public_key: str | None,
        audience: str | None = None,
        issuer: str | None = None,
    ) -> "JwtVerifier | None":
        """HS256 with `secret`, or RS256/ES256 with a PEM `public_key`; None when neither is set."""
        if secret and public_key:
            raise ConfigError("JWT_SECRET", "set JWT_SECRET or JWT_PUBLIC_KEY, not both.")
        if secret:
            if len(secret.encode()) < MIN_SECRET_BYTES:
                raise ConfigError("JWT_SECRET", f"must be at least {MIN_SECRET_BYTES} bytes long.")
            return cls(secret, "HS256", audience, issuer)
        if public_key:
            return cls(*_public_key(public_key), audience, issuer)
        for name, value in (("JWT_AUDIENCE", audience), ("JWT_ISSUER", issuer)):
            if value:
                raise ConfigError(name, "needs JWT_SECRET or JWT_PUBLIC_KEY to verify tokens with.")
        return None

    def subject(self, token: str) -> Subject | None:
        """The user an unexpired access token was issued for, or None."""
        try:
            claims = jwt.decode(
                token,
                self._key,
                algorithms=self._algorithms,
                audience=self._audience,
                issuer=self._issuer,
                options={"require": self._required},
            )
        except jwt.PyJWTError:
            return None
        if claims.get("type", "access") != "access":
            return None
        subject = claims["sub"]
        if not ObjectId.is_valid(subject):
            return None
        expires_at = dt.datetime.fromtimestamp(claims["exp"], dt.UTC).replace(tzinfo=None)
        return Subject(ObjectId(subject), expires_at)
