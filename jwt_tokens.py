"""Optional JSON Web Tokens (PyJWT): signed access tokens from another issuer, for our users.

Off unless a key is configured. Only the user id (`sub`) is taken from a token; the user's
role and memberships are read from `users` like for an opaque token, so a JWT never carries
stale rights. The algorithm follows from the key, never from the token's header.
"""

import jwt
from bson import ObjectId
from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePublicKey
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

MIN_SECRET_BYTES = 32


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2


class JwtVerifier:
    def __init__(self, key, algorithm: str):
        self._key = key
        self._algorithms = [algorithm]

    @classmethod
    def from_settings(cls, secret: str | None, public_key: str | None) -> "JwtVerifier | None":
        """HS256 with `secret`, or RS256/ES256 with a PEM `public_key`; None when neither is set."""
        if secret and public_key:
            raise ValueError("Set JWT_SECRET or JWT_PUBLIC_KEY, not both.")
        if secret:
            if len(secret.encode()) < MIN_SECRET_BYTES:
                raise ValueError(f"JWT_SECRET must be at least {MIN_SECRET_BYTES} bytes long.")
            return cls(secret, "HS256")
        if public_key:
            key = load_pem_public_key(public_key.encode())
            if isinstance(key, RSAPublicKey):
                return cls(key, "RS256")
            if isinstance(key, EllipticCurvePublicKey):
                return cls(key, "ES256")
            raise ValueError("JWT_PUBLIC_KEY must be an RSA or EC (P-256) public key.")
        return None

    def user_id(self, token: str) -> ObjectId | None:
        """The user an unexpired access token was issued for, or None."""
        try:
            claims = jwt.decode(
                token, self._key, algorithms=self._algorithms, options={"require": ["exp", "sub"]}
            )
        except jwt.PyJWTError:
            return None
        if claims.get("type", "access") != "access":
            return None
        subject = claims["sub"]
        return ObjectId(subject) if ObjectId.is_valid(subject) else None
