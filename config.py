"""Settings read from the environment, once, by the application factory."""

from collections.abc import Mapping

EMBEDDED_MONGODB_URI = "mongodb://127.0.0.1:27018/?directConnection=true"


def _flag(environ: Mapping[str, str], name: str, default: bool) -> bool:
    value = environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in {"true", "1", "yes", "on"}:
        return True
    if value in {"false", "0", "no", "off"}:
        return False
    raise ValueError(f"{name} must be true or false, not {value!r}.")


def settings_from_env(environ: Mapping[str, str]) -> dict:
    """Typed settings with their defaults; README's configuration table lists each one."""
    return {
        "MONGODB_URI": environ.get("MONGODB_URI") or EMBEDDED_MONGODB_URI,
        "MONGODB_DB": environ.get("MONGODB_DB") or "botcatalogue",
        "MONGODB_TIMEOUT_MS": int(environ.get("MONGODB_TIMEOUT_MS", "5000")),
        "MONGODB_READ_PREFERENCE": environ.get("MONGODB_READ_PREFERENCE", "primaryPreferred"),
        "READYZ_TIMEOUT_MS": int(environ.get("READYZ_TIMEOUT_MS", "1000")),
        "RATELIMIT_ENABLED": _flag(environ, "RATELIMIT_ENABLED", default=True),
        "RATELIMIT_DEFAULT": environ.get("RATELIMIT_DEFAULT") or "600 per minute",
        "RATELIMIT_STORAGE_URI": environ.get("RATELIMIT_STORAGE_URI") or "memory://",
        "RATELIMIT_AUTH_FAILURES": environ.get("RATELIMIT_AUTH_FAILURES") or "60 per minute",
        "TRUSTED_PROXIES": int(environ.get("TRUSTED_PROXIES", "0")),
        "JWT_SECRET": environ.get("JWT_SECRET") or None,
        "JWT_PUBLIC_KEY": environ.get("JWT_PUBLIC_KEY") or None,
        # How long a looked-up token is trusted without asking the database again (0: never),
        # which is also how long a revoked token may still be accepted; and how many are kept.
        "TOKEN_CACHE_SECONDS": float(environ.get("TOKEN_CACHE_SECONDS", "30")),
        "TOKEN_CACHE_SIZE": int(environ.get("TOKEN_CACHE_SIZE", "10000")),
    }
