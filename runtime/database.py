"""One MongoClient per process, kept on the app; requests borrow its database.

The command line gets a second client, whose commands are not held to the request timeout.
"""

import warnings

from flask import Flask, current_app
from pymongo import MongoClient, timeout
from pymongo.database import Database
from pymongo.errors import PyMongoError

from runtime.config import ConfigError


def _client(uri: str, **timeouts) -> MongoClient:
    """The driver only warns about an unknown URI option or a bad value, and would run on
    without it (without `tls=true`, say): at start, that is an error naming MONGODB_URI.
    pymongo's messages name the option, never the URI, so no credential is printed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            return MongoClient(
                uri,
                appname="bot-catalogue",
                connect=False,
                datetime_conversion="DATETIME_AUTO",
                **timeouts,
            )
    except (PyMongoError, ValueError, OSError, UserWarning) as error:
        raise ConfigError("MONGODB_URI", str(error)) from None


def init_app(app: Flask, client: MongoClient | None = None) -> None:
    """Attach a client; tests hand in their own (mongomock or a test server), which then
    serves the command line too."""
    if client is None:
        timeout_ms = app.config["MONGODB_TIMEOUT_MS"]
        client = _client(
            app.config["MONGODB_URI"],
            serverSelectionTimeoutMS=timeout_ms,
            connectTimeoutMS=timeout_ms,
            socketTimeoutMS=timeout_ms,
            readPreference=app.config["MONGODB_READ_PREFERENCE"],
        )
        app.extensions["mongo_admin"] = None
    else:
        app.extensions["mongo_admin"] = client
    app.extensions["mongo"] = client


def get_db() -> Database:
    app = current_app
    return app.extensions["mongo"][app.config["MONGODB_DB"]]


def admin_db() -> Database:
    """The database of the command line, on a client of its own, made at first use.

    Its commands (index builds, bulk loads) may take minutes on a real database: they are
    bound by MONGODB_ADMIN_TIMEOUT_MS (0: no limit), never by MONGODB_TIMEOUT_MS. That one
    still bounds finding the server, so that an unreachable one is reported as soon; the
    driver's connect timeout (20 s) also bounds its heartbeats, so that a server busy
    building an index is not taken for a dead one, which would cancel the build's command.
    """
    app = current_app
    if app.extensions["mongo_admin"] is None:
        app.extensions["mongo_admin"] = _client(
            app.config["MONGODB_URI"],
            serverSelectionTimeoutMS=app.config["MONGODB_TIMEOUT_MS"],
            socketTimeoutMS=app.config["MONGODB_ADMIN_TIMEOUT_MS"] or None,
            readPreference="primary",
        )
    return app.extensions["mongo_admin"][app.config["MONGODB_DB"]]


def ping(timeout_seconds: float) -> None:
    """Ask the server to answer within `timeout_seconds`, server selection included."""
    with timeout(timeout_seconds):
        current_app.extensions["mongo"].admin.command("ping")
