"""Settings are checked when a process starts: a bad one stops `flask` and gunicorn with one
line naming the variable, exit status 1, and never reaches a request as a 500."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import mongomock
import pytest

from app import create_app
from runtime.config import EMBEDDED_MONGODB_URI, ConfigError, settings_from_env
from tests.support import ROOT
from tests.support.wire_server import free_port

BIN = Path(sys.executable).parent
PASSWORD = "pa55-w0rd-never-printed"
SECRET = "a-test-secret-of-at-least-32-bytes!"

# (variable, bad value, what the line says)
APP_SETTINGS = [
    ("MONGODB_URI", "http://127.0.0.1:27017/", "URI must begin with 'mongodb://'"),
    ("MONGODB_DB", "bot.catalogue", "not a MongoDB database name"),
    ("MONGODB_TIMEOUT_MS", "5s", "must be a whole number"),
    ("MONGODB_ADMIN_TIMEOUT_MS", "-1", "must be at least 0"),
    ("MONGODB_READ_PREFERENCE", "fastest", "must be one of primary,"),
    ("READYZ_TIMEOUT_MS", "0", "must be at least 1"),
    ("DATABASE_PERMITS", "-1", "must be at least 0"),
    ("RATELIMIT_ENABLED", "maybe", "must be true or false"),
    ("RATELIMIT_DEFAULT", "600 per minit", "is not a rate limit"),
    ("RATELIMIT_STORAGE_URI", "redis:/cache:6379", "must be a storage URI"),
    ("RATELIMIT_AUTH_FAILURES", "60 per minute;5/second", "takes one rate limit, not 2"),
    ("TRUSTED_PROXIES", "-1", "must be at least 0"),
    ("CORS_ORIGINS", "https://dash.example.com/app", "takes * or origins such as"),
    ("JWT_SECRET", "too-short", "at least 32 bytes"),
    ("JWT_PUBLIC_KEY", "-----BEGIN PUBLIC KEY-----", "is not a PEM public key"),
    ("JWT_AUDIENCE", "https://api.example.com", "needs JWT_SECRET or JWT_PUBLIC_KEY"),
    ("JWT_ISSUER", "https://id.example.com/", "needs JWT_SECRET or JWT_PUBLIC_KEY"),
    ("TOKEN_CACHE_SECONDS", "-1", "must be 0 or more seconds"),
    ("TOKEN_CACHE_SIZE", "lots", "must be a whole number"),
    ("METRICS_PORT", "70000", "must be a TCP port from 1 to 65535"),
    ("METRICS_HOST", "0.0.0.0:9100", "must be an IP address or a host name"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector.internal:4318", "must be an http:// or https://"),
    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "otlp://x/v1/traces", "must be an http:// or https://"),
]
GUNICORN_SETTINGS = [
    ("PORT", "http", "must be a whole number"),
    ("GUNICORN_WORKERS", "0", "must be at least 1"),
    ("GUNICORN_THREADS", "four", "must be a whole number"),
    ("GUNICORN_TIMEOUT", "30s", "must be a whole number"),
]
_ALL_NAMES = {name for name, *_ in APP_SETTINGS + GUNICORN_SETTINGS} | {"EMBEDDED_DB_PORT"}


def _environment(**settings) -> dict:
    """The test's own environment without any setting of ours, plus `settings`."""
    clean = {key: value for key, value in os.environ.items() if key not in _ALL_NAMES}
    return {**clean, **settings}


def _run(command: list[str], **settings) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=ROOT, env=_environment(**settings), capture_output=True, text=True, timeout=60
    )


def _flask(**settings) -> subprocess.CompletedProcess:
    return _run([str(BIN / "flask"), "--app", "app", "routes"], **settings)


def _gunicorn(**settings) -> subprocess.CompletedProcess:
    """gunicorn never gets as far as binding: the check runs as it reads its configuration.
    Were it to start instead, `_run`'s timeout fails the test."""
    defaults = {"PORT": str(free_port()), "MONGODB_URI": EMBEDDED_MONGODB_URI}
    return _run([str(BIN / "gunicorn"), "wsgi:app"], **{**defaults, **settings})


def _assert_stopped_with_one_line(result: subprocess.CompletedProcess, name: str, said: str):
    output = (result.stdout + result.stderr).strip()
    assert result.returncode == 1, output
    assert output.count("\n") == 0, output
    assert output.startswith(f"Error: {name}: "), output
    assert said in output


@pytest.mark.parametrize(("name", "value", "said"), APP_SETTINGS)
def test_a_bad_app_setting_stops_the_app_factory_with_its_line(monkeypatch, name, value, said):
    """Where `flask` and gunicorn's workers both read the app's settings; the processes'
    own tests below show that such an error ends each with its one line. A client handed
    in skips the URI, whose check is creating the client."""
    for other in _ALL_NAMES:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(name, value)
    client = None if name == "MONGODB_URI" else mongomock.MongoClient()

    with pytest.raises(ConfigError) as raised:
        create_app(mongo_client=client)

    assert raised.value.format_message().startswith(f"{name}: ")
    assert said in raised.value.format_message()


# A setting of each place that checks one: the database client, JWT, the app's settings.
CHECKED_AT_START = [
    setting
    for setting in APP_SETTINGS
    if setting[0] in ("MONGODB_URI", "JWT_PUBLIC_KEY", "RATELIMIT_DEFAULT")
]


@pytest.mark.parametrize(("name", "value", "said"), CHECKED_AT_START)
def test_a_bad_app_setting_stops_flask(name, value, said):
    _assert_stopped_with_one_line(_flask(**{name: value}), name, said)


@pytest.mark.parametrize(("name", "value", "said"), CHECKED_AT_START + GUNICORN_SETTINGS)
def test_a_bad_setting_stops_gunicorn(name, value, said):
    _assert_stopped_with_one_line(_gunicorn(**{name: value}), name, said)


@pytest.mark.parametrize("value", [None, ""])
def test_gunicorn_without_a_database_uri_stops_before_listening(value):
    """Production runs gunicorn: a forgotten MONGODB_URI is an error, not the embedded
    database's address. An empty value counts as unset."""
    port = free_port()
    settings = {"PORT": str(port)} if value is None else {"PORT": str(port), "MONGODB_URI": value}
    result = _run([str(BIN / "gunicorn"), "wsgi:app"], **settings)

    _assert_stopped_with_one_line(result, "MONGODB_URI", "must be set to run under gunicorn")
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize(("name", "value"), [("PORT", "5OOO"), ("EMBEDDED_DB_PORT", "-1")])
def test_a_bad_setting_stops_make_run(name, value):
    result = _run([sys.executable, "scripts/run.py", "dev"], **{name: value})

    _assert_stopped_with_one_line(result, name, "must be")


def test_good_settings_start():
    result = _flask(
        RATELIMIT_DEFAULT="100/second;1000 per hour",
        RATELIMIT_STORAGE_URI="redis://cache.internal:6379/0",
        MONGODB_URI="mongodb://db1.internal,db2.internal/?replicaSet=rs0&tls=true",
        JWT_SECRET=SECRET,
        JWT_AUDIENCE="https://api.example.com",
        TOKEN_CACHE_SECONDS="0.5",
    )

    assert result.returncode == 0, result.stderr
    assert "bots.list_bots" in result.stdout


@pytest.mark.parametrize(
    "uri",
    [
        f"mongodb://reader:{PASSWORD}@db.internal/?tls=maybe",
        f"mongodb://reader:{PASSWORD}@db.internal/?authSource=admin&bogusOption=1",
        f"mongodb://reader:{PASSWORD}@db.internal:port/",
        f"mongodb://reader:{PASSWORD}@db.internal/?tls=true&tlsCAFile=/nowhere/ca.pem",
    ],
)
def test_a_bad_database_uri_never_prints_its_password(uri):
    result = _flask(MONGODB_URI=uri)

    _assert_stopped_with_one_line(result, "MONGODB_URI", "")
    assert PASSWORD not in result.stdout + result.stderr


def test_empty_values_mean_the_defaults():
    settings = settings_from_env({name: "" for name, *_ in APP_SETTINGS})

    assert settings == settings_from_env({})
    assert settings["RATELIMIT_DEFAULT"] == "600 per minute"
    assert settings["MONGODB_TIMEOUT_MS"] == 5000


@pytest.mark.parametrize(
    ("threads", "permits", "expected"),
    [(None, None, 3), ("8", None, 7), ("1", None, 0), ("8", "2", 2), ("4", "0", 0)],
)
def test_database_permits_leave_one_gunicorn_thread_free_by_default(threads, permits, expected):
    """With one thread there is none to spare: admission control is off (0)."""
    environment = {"GUNICORN_THREADS": threads, "DATABASE_PERMITS": permits}
    settings = settings_from_env({k: v for k, v in environment.items() if v is not None})

    assert settings["DATABASE_PERMITS"] == expected


@pytest.mark.parametrize("command", [_flask, _gunicorn])
def test_as_many_database_permits_as_threads_leave_none_free_and_stop_the_start(command):
    result = command(GUNICORN_THREADS="4", DATABASE_PERMITS="4")

    _assert_stopped_with_one_line(result, "DATABASE_PERMITS", "must be less than GUNICORN_THREADS")


def test_the_error_is_the_one_line_the_cli_prints():
    with pytest.raises(ConfigError) as raised:
        settings_from_env({"MONGODB_TIMEOUT_MS": "fast"})

    assert raised.value.format_message() == (
        "MONGODB_TIMEOUT_MS: must be a whole number, not 'fast'."
    )
    assert raised.value.exit_code == 1


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, False),
    ],
)
def test_tracing_is_on_where_an_otlp_endpoint_is_set(settings, expected):
    assert settings_from_env(settings)["TRACING"] is expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OTEL_TRACES_EXPORTER", "zipkin"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
    ],
)
def test_a_tracing_setting_we_cannot_honour_stops_the_start(name, value):
    settings = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", name: value}

    with pytest.raises(ConfigError, match=name):
        settings_from_env(settings)


def test_a_bad_endpoint_is_named_without_its_credentials():
    endpoint = f"reader:{PASSWORD}@collector.internal:4318"

    with pytest.raises(ConfigError) as raised:
        settings_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})

    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in raised.value.format_message()
    assert PASSWORD not in raised.value.format_message()
