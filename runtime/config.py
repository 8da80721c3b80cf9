"""Settings read from the environment, once, by the application factory, and checked there.

A value that cannot be used stops the process at start with one line naming the variable,
rather than turning every request into a 500 later. `ConfigError` is a click exception so the
`flask` command prints that line and exits 1 by itself; `gunicorn.conf.py` does the same.
"""

import ipaddress
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

import click
from limits import parse_many
from limits.storage import SCHEMES

EMBEDDED_MONGODB_URI = "mongodb://127.0.0.1:27018/?directConnection=true"
READ_PREFERENCES = ("primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest")
# Flask-Limiter under Flask is synchronous: the `async+` storages of `limits` do not apply.
RATE_LIMIT_STORAGES = sorted(scheme for scheme in SCHEMES if not scheme.startswith("async+"))
_FLAGS = {"true": True, "1": True, "yes": True, "on": True}
_FLAGS |= {"false": False, "0": False, "no": False, "off": False}
_DATABASE_NAME = re.compile(r'[^/\\. "$*<>:|?\x00]{1,63}')


class ConfigError(click.ClickException):
    def __init__(self, name: str, problem: str):
        super().__init__(f"{name}: {problem}")


def _text(environ: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """An empty variable counts as unset, as shells and `.env` files often leave them."""
    return environ.get(name) or default


def integer(environ: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    value = _text(environ, name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(name, f"must be a whole number, not {value!r}.") from None
    if number < minimum:
        raise ConfigError(name, f"must be at least {minimum}, not {number}.")
    return number


def optional_port(environ: Mapping[str, str], name: str) -> int | None:
    """A TCP port to listen on; unset turns off what it is for."""
    if _text(environ, name) is None:
        return None
    port = integer(environ, name, 0, minimum=1)
    if port > 65535:
        raise ConfigError(name, f"must be a TCP port from 1 to 65535, not {port}.")
    return port


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    value = _text(environ, name)
    if value is None:
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(name, f"must be a number of seconds, not {value!r}.") from None
    if not 0 <= seconds < float("inf"):
        raise ConfigError(name, f"must be 0 or more seconds, not {value!r}.")
    return seconds


def _flag(environ: Mapping[str, str], name: str, default: bool) -> bool:
    value = _text(environ, name)
    if value is None:
        return default
    if value.lower() not in _FLAGS:
        raise ConfigError(name, f"must be true or false, not {value!r}.")
    return _FLAGS[value.lower()]


def _choice(environ: Mapping[str, str], name: str, default: str, choices) -> str:
    value = _text(environ, name, default)
    if value not in choices:
        raise ConfigError(name, f"must be one of {', '.join(choices)}, not {value!r}.")
    return value


def _database_name(environ: Mapping[str, str], name: str, default: str) -> str:
    value = _text(environ, name, default)
    if not _DATABASE_NAME.fullmatch(value):
        raise ConfigError(name, f"{value!r} is not a MongoDB database name.")
    return value


def _rate_limits(environ: Mapping[str, str], name: str, default: str, most: int = 0) -> str:
    """Flask-Limiter parses its limits at the first request; parse them now, with `limits`."""
    value = _text(environ, name, default)
    try:
        count = len(parse_many(value))
    except ValueError:
        raise ConfigError(
            name, f"{value!r} is not a rate limit such as '600 per minute' or '10/second'."
        ) from None
    if most and count > most:
        raise ConfigError(name, f"takes one rate limit, not {count}.")
    return value


def _storage_uri(environ: Mapping[str, str], name: str, default: str) -> str:
    value = _text(environ, name, default)
    scheme, separator, _ = value.partition("://")
    if not separator or scheme not in RATE_LIMIT_STORAGES:
        raise ConfigError(
            name, "must be a storage URI such as memory:// or redis://host:6379/0, "
            f"whose scheme is one of {', '.join(RATE_LIMIT_STORAGES)}."
        )  # fmt: skip
    return value


def _database_permits(environ: Mapping[str, str], name: str) -> int:
    """One fewer than gunicorn's threads by default, and never as many: a worker keeps one
    thread that no stalled database holds, for /healthz and for refusing work at once
    (`runtime.admission`). 0 turns that off."""
    threads = integer(environ, "GUNICORN_THREADS", 4, minimum=1)
    permits = integer(environ, name, threads - 1)
    if permits >= threads:
        raise ConfigError(
            name, f"must be less than GUNICORN_THREADS ({threads}), or 0 for no limit, "
            f"not {permits}."
        )  # fmt: skip
    return permits


def _origins(environ: Mapping[str, str], name: str) -> tuple[str, ...]:
    """The web origins whose pages may read the API (web/cross_origin.py): `*`, or origins
    such as https://dash.example.com, comma-separated. A value that no browser would send as
    an `Origin` (a path, credentials, a default port, …) would never match: it stops the
    start instead."""
    value = _text(environ, name)
    if value is None:
        return ()
    origins = tuple(dict.fromkeys(item.strip().rstrip("/").lower() for item in value.split(",")))
    if origins == ("*",):
        return origins
    for origin in origins:
        if not _is_origin(origin):
            raise ConfigError(
                name, f"takes * or origins such as https://dash.example.com, not {origin!r}."
            )
    return origins


_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*")


def _is_origin(text: str) -> bool:
    """As a browser serializes an origin: http or https, a host in lowercase ASCII (a
    name's labels, punycode for an international one; IPv6 compressed, in brackets), a port
    only where it is not the scheme's default, and nothing after."""
    try:
        url = urlsplit(text)
        port = url.port
    except ValueError:
        return False
    host = url.hostname
    if url.scheme not in _DEFAULT_PORTS or not host or port == _DEFAULT_PORTS[url.scheme]:
        return False
    if ":" in host:
        try:
            host = f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            return False
    elif not _HOST.fullmatch(host):
        return False
    return text == f"{url.scheme}://{host}" + ("" if port is None else f":{port}")


def _listen_address(environ: Mapping[str, str], name: str, default: str) -> str:
    """An address to listen on: an IP address or a host name, without a port."""
    value = _text(environ, name, default)
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOST.fullmatch(value.lower()):
            raise ConfigError(
                name, f"must be an IP address or a host name, such as 0.0.0.0, not {value!r}."
            ) from None
    return value


def feed_connections(environ: Mapping[str, str]) -> int:
    """The live feeds a worker serves at once: half its threads, at least one. gunicorn
    gives it that many threads more (gunicorn.conf.py), so feeds never take theirs."""
    threads = integer(environ, "GUNICORN_THREADS", 4, minimum=1)
    return integer(environ, "FEED_CONNECTIONS", max(1, threads // 2), minimum=1)


def _tracing(environ: Mapping[str, str]) -> bool:
    """On where an OTLP endpoint is set, as OpenTelemetry's own variables say, unless its
    SDK is disabled or its traces exporter is `none`; the rest of OTEL_* is the SDK's to read
    (runtime/tracing.py). What the SDK would only complain about at each batch, an endpoint
    that is no URL or a protocol we do not send, stops the start instead. A traces-only
    variable wins over the general one, as in the SDK."""
    endpoints = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": _text(environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        "OTEL_EXPORTER_OTLP_ENDPOINT": _text(environ, "OTEL_EXPORTER_OTLP_ENDPOINT"),
    }
    protocols = {
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": _text(environ, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
        "OTEL_EXPORTER_OTLP_PROTOCOL": _text(environ, "OTEL_EXPORTER_OTLP_PROTOCOL"),
    }
    disabled = (_text(environ, "OTEL_SDK_DISABLED") or "").strip().lower() == "true"
    exporter = (_text(environ, "OTEL_TRACES_EXPORTER") or "otlp").strip().lower()
    named = [(name, value) for name, value in endpoints.items() if value]
    if disabled or exporter == "none" or not named:
        return False
    name, endpoint = named[0]
    url = urlsplit(endpoint)
    if url.scheme not in ("http", "https") or not url.hostname:
        # Not quoted: an endpoint may hold credentials.
        raise ConfigError(name, "must be an http:// or https:// URL with a host.")
    if exporter != "otlp":
        raise ConfigError("OTEL_TRACES_EXPORTER", f"must be otlp or none, not {exporter!r}.")
    for name, protocol in protocols.items():
        if protocol and protocol != "http/protobuf":
            raise ConfigError(name, f"must be http/protobuf (OTLP over HTTP), not {protocol!r}.")
        if protocol:
            break
    return True


def settings_from_env(environ: Mapping[str, str]) -> dict:
    """Typed settings with their defaults; docs/configuration.md lists each one (a test holds the
    two to each other).

    `MONGODB_URI` and the JWT keys are checked where they are used (`runtime.database`,
    `access.jwt_tokens`), by the libraries that read them, still while the app is created.
    """
    return {
        "MONGODB_URI": _text(environ, "MONGODB_URI", EMBEDDED_MONGODB_URI),
        "MONGODB_DB": _database_name(environ, "MONGODB_DB", "botcatalogue"),
        "MONGODB_TIMEOUT_MS": integer(environ, "MONGODB_TIMEOUT_MS", 5000, minimum=1),
        # How long one command of `flask db`/`flask tokens` may run (0: no limit): an index
        # build on a large collection takes minutes, far beyond what a request may wait.
        "MONGODB_ADMIN_TIMEOUT_MS": integer(environ, "MONGODB_ADMIN_TIMEOUT_MS", 0),
        "MONGODB_READ_PREFERENCE": _choice(
            environ, "MONGODB_READ_PREFERENCE", "primaryPreferred", READ_PREFERENCES
        ),
        "READYZ_TIMEOUT_MS": integer(environ, "READYZ_TIMEOUT_MS", 1000, minimum=1),
        "DATABASE_PERMITS": _database_permits(environ, "DATABASE_PERMITS"),
        "RATELIMIT_ENABLED": _flag(environ, "RATELIMIT_ENABLED", default=True),
        "RATELIMIT_DEFAULT": _rate_limits(environ, "RATELIMIT_DEFAULT", "600 per minute"),
        "RATELIMIT_STORAGE_URI": _storage_uri(environ, "RATELIMIT_STORAGE_URI", "memory://"),
        "RATELIMIT_AUTH_FAILURES": _rate_limits(
            environ, "RATELIMIT_AUTH_FAILURES", "60 per minute", most=1
        ),
        "RATELIMIT_EXPORT": _rate_limits(environ, "RATELIMIT_EXPORT", "30 per hour"),
        "RATELIMIT_FEED": _rate_limits(environ, "RATELIMIT_FEED", "60 per hour"),
        "FEED_CONNECTIONS": feed_connections(environ),
        "TRUSTED_PROXIES": integer(environ, "TRUSTED_PROXIES", 0),
        "CORS_ORIGINS": _origins(environ, "CORS_ORIGINS"),
        "JWT_SECRET": _text(environ, "JWT_SECRET"),
        "JWT_PUBLIC_KEY": _text(environ, "JWT_PUBLIC_KEY"),
        "JWT_AUDIENCE": _text(environ, "JWT_AUDIENCE"),
        "JWT_ISSUER": _text(environ, "JWT_ISSUER"),
        # The caches kept exact by a change stream (runtime/changes.py); 0 turns one off.
        "TOKEN_CACHE_SECONDS": _seconds(environ, "TOKEN_CACHE_SECONDS", 300),
        "TOKEN_CACHE_SIZE": integer(environ, "TOKEN_CACHE_SIZE", 10000),
        "CATALOGUE_CACHE_SIZE": integer(environ, "CATALOGUE_CACHE_SIZE", 1000),
        "SUMMARY_CACHE_SIZE": integer(environ, "SUMMARY_CACHE_SIZE", 20000),
        "METRICS_PORT": optional_port(environ, "METRICS_PORT"),
        # Its own, not HOST's: a service opened to a load balancer (HOST=0.0.0.0) must not
        # open its unauthenticated metrics with it.
        "METRICS_HOST": _listen_address(environ, "METRICS_HOST", "127.0.0.1"),
        "TRACING": _tracing(environ),
    }


# What each variable is for, in the order docs/configuration.md lists them: `make docs`
# (scripts/reference.py) writes that page's tables from these and from the defaults that
# `settings_from_env({})` and `server_settings_from_env({})` take, so none is typed by hand.
MEANINGS = {
    "MONGODB_URI": (
        "The MongoDB deployment, with credentials and TLS options. Unset: the embedded "
        "database of `make run`, `make serve` and `make db`; under gunicorn run directly "
        "it must be set ([deployment](deployment.md#settings-checked-at-start))."
    ),
    "MONGODB_DB": "The database name.",
    "MONGODB_TIMEOUT_MS": (
        "The deadline, in ms, of all the database work of one request, authentication "
        "included (`pymongo.timeout`); past it, a 503 "
        "([deployment](deployment.md#faults-the-deadline-of-a-request)). Also the "
        "driver's selection, connect and socket timeout."
    ),
    "MONGODB_ADMIN_TIMEOUT_MS": (
        "How long one command of `flask db …` and `flask tokens …` may wait for its "
        "answer, in ms; 0 is no limit (index builds and loads are never cut short by "
        "`MONGODB_TIMEOUT_MS`)."
    ),
    "MONGODB_READ_PREFERENCE": (
        "pymongo's read preference: `primary`, `primaryPreferred`, `secondary`, "
        "`secondaryPreferred` or `nearest` ([deployment](deployment.md#database))."
    ),
    "READYZ_TIMEOUT_MS": (
        "How long `/readyz` waits for the database's ping, in ms; never longer than "
        "`MONGODB_TIMEOUT_MS`, the deadline of every request."
    ),
    "DATABASE_PERMITS": (
        "Requests of one worker that may use the database at once, by default one fewer "
        "than `GUNICORN_THREADS`; the others wait while permits come back "
        "([admission](deployment.md#admission-control-a-stalled-database-never-holds-up-healthz))."
        " Less than `GUNICORN_THREADS`; `0`: no limit."
    ),
    "RATELIMIT_ENABLED": (
        "Rate limiting on or off (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`)."
    ),
    "RATELIMIT_DEFAULT": (
        "Each token's budget (or each address's, without a token), in Flask-Limiter's "
        "syntax, e.g. `1000 per hour;20 per second`."
    ),
    "RATELIMIT_STORAGE_URI": (
        "Where the counts live: in each worker process, or `redis://host:6379/0` to share"
        " them ([deployment](deployment.md#rate-limits-shared-by-every-worker-redis))."
    ),
    "RATELIMIT_AUTH_FAILURES": (
        "Failed authentications allowed per client address, one limit; past it a failing "
        "request gets 429 instead of 401. A valid token is never refused "
        "([deployment](deployment.md#failed-authentications))."
    ),
    "RATELIMIT_EXPORT": (
        "Each token's exports ([7.6](api.md#exports)), besides `RATELIMIT_DEFAULT`; an "
        "export holds a worker thread while it streams "
        "([deployment](deployment.md#exports))."
    ),
    "RATELIMIT_FEED": (
        "Each token's live feeds opened ([live feed](api.md#live-feed)), besides "
        "`RATELIMIT_DEFAULT`."
    ),
    "TRUSTED_PROXIES": (
        "How many proxies in front of the app append to "
        "`X-Forwarded-For`/`X-Forwarded-Proto`; the client address and scheme are read "
        "from that many entries (Werkzeug's ProxyFix). `0` ignores the headers "
        "([deployment](deployment.md#behind-proxies-the-client-address))."
    ),
    "CORS_ORIGINS": (
        "Origins whose pages may call the API (`https://dash.example.com`, "
        "comma-separated), or `*` ([API](api.md#browsers-on-other-origins))."
    ),
    "JWT_SECRET": "An HS256 secret (at least 32 bytes); enables JWTs.",
    "JWT_PUBLIC_KEY": "A PEM public key (RSA, or EC P-256); enables JWTs. Not with `JWT_SECRET`.",
    "JWT_AUDIENCE": (
        "The `aud` a JWT must carry (an identity provider's API identifier). Unset, a JWT"
        " carrying any `aud` is refused "
        "([deployment](deployment.md#jwt-from-an-identity-provider))."
    ),
    "JWT_ISSUER": "The `iss` a JWT must carry. Unset, not checked.",
    "TOKEN_CACHE_SECONDS": (
        "The longest life of an entry in each worker's token cache, which a change stream"
        " keeps exact; `0` turns it off ([deployment](deployment.md#the-exact-caches))."
    ),
    "TOKEN_CACHE_SIZE": (
        "The tokens each worker's cache keeps, least recently used dropped first; `0`: off."
    ),
    "CATALOGUE_CACHE_SIZE": (
        "The answers of the bot endpoints each worker keeps, kept exact by the same "
        "change stream; `0`: off."
    ),
    "SUMMARY_CACHE_SIZE": (
        "The summaries of bots, users and organizations each worker keeps for the bot "
        "requests that nest them (about 1 to 2 KB each with the cache's bookkeeping: 20 "
        "to 40 MB), kept exact by the same change stream; `0`: off, and every page reads "
        "them from the database."
    ),
    "METRICS_PORT": (
        "Serves Prometheus metrics on this port, on `METRICS_HOST`, without authentication; "
        "unset, there are no metrics ([deployment](deployment.md#metrics))."
    ),
    "METRICS_HOST": (
        "The address the metrics listen on: loopback unless you open it, whatever `HOST` "
        "is (`0.0.0.0` for a scraper on another host; then firewall the port)."
    ),
    "OTEL_EXPORTER_OTLP_ENDPOINT": (
        "OpenTelemetry's own: the collector's OTLP/HTTP base URL "
        "(`http://collector:4318`); set, requests are traced "
        "([deployment](deployment.md#tracing)). Other `OTEL_*` variables are the SDK's."
    ),
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": (
        "The same for traces alone, the full URL (`http://collector:4318/v1/traces`); "
        "wins over the one above."
    ),
    "OTEL_SDK_DISABLED": "`true`: no tracing, whatever the endpoint.",
    "OTEL_TRACES_EXPORTER": (
        "`none`: no tracing, whatever the endpoint; with an endpoint set, any other value"
        " but `otlp` stops the start."
    ),
    "OTEL_EXPORTER_OTLP_PROTOCOL": (
        "The only protocol sent; another (`grpc`) stops the start rather than send nothing."
    ),
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "The same for traces alone.",
}
SERVER_MEANINGS = {
    "HOST": "The address the server listens on (`0.0.0.0` to accept other hosts).",
    "PORT": "The port the server listens on.",
    "EMBEDDED_DB_PORT": (
        "The embedded database's port, when `MONGODB_URI` is unset. Another value is "
        "passed on to the app as `MONGODB_URI`."
    ),
    "GUNICORN_WORKERS": "gunicorn worker processes.",
    "GUNICORN_THREADS": (
        "Threads per worker; the app reads it too, for the default of `DATABASE_PERMITS`."
    ),
    "FEED_CONNECTIONS": (
        "Live feeds one worker serves at once, by default half of `GUNICORN_THREADS` (at "
        "least 1), each on a thread besides `GUNICORN_THREADS`; one more is a 503 "
        "([deployment](deployment.md#live-feeds))."
    ),
    "GUNICORN_TIMEOUT": "Seconds before a silent worker is restarted.",
    "PROMETHEUS_MULTIPROC_DIR": (
        "With `METRICS_PORT`: the folder where gunicorn's workers write their figures for"
        " the master. Unset, gunicorn makes a new one at each start and removes it at "
        "exit; set, it is used as it is ([deployment](deployment.md#metrics))."
    ),
}
# Variables the app reads only to decide whether to trace, whose defaults are those of the
# OpenTelemetry SDK, which reads them itself (`_tracing`).
SDK_DEFAULTS = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": None,
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": None,
    "OTEL_SDK_DISABLED": "false",
    "OTEL_TRACES_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
}


def server_settings_from_env(environ: Mapping[str, str]) -> dict:
    """The settings of what starts the servers: `make run`, `make serve` and `make db`
    (scripts/run.py) and gunicorn (gunicorn.conf.py)."""
    return {
        "HOST": _text(environ, "HOST", "127.0.0.1"),
        "PORT": integer(environ, "PORT", 5000),
        "EMBEDDED_DB_PORT": integer(environ, "EMBEDDED_DB_PORT", 27018),
        "GUNICORN_WORKERS": integer(environ, "GUNICORN_WORKERS", 2, minimum=1),
        "GUNICORN_THREADS": integer(environ, "GUNICORN_THREADS", 4, minimum=1),
        "FEED_CONNECTIONS": feed_connections(environ),
        "GUNICORN_TIMEOUT": integer(environ, "GUNICORN_TIMEOUT", 30),
        "PROMETHEUS_MULTIPROC_DIR": _text(environ, "PROMETHEUS_MULTIPROC_DIR"),
    }
