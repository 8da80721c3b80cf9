"""One MongoClient per process, kept on the app; requests borrow its database, each
holding one of its worker's permits while it does (`runtime.admission`).

The command line gets a second client, whose commands are not held to the request timeout,
and so does the change stream (`runtime.changes`).
What counts as the database being unavailable, rather than refusing what was asked, is
decided here too (`unavailable`), and how a database error is told in one line (`describe`).
"""

import warnings

from flask import Flask, current_app
from pymongo import MongoClient, ReadPreference, timeout
from pymongo.database import Database
from pymongo.errors import ConnectionFailure, OperationFailure, PyMongoError
from pymongo.read_concern import ReadConcern

from runtime import admission
from runtime.config import ConfigError

# Error replies that mean "this node cannot serve now", which pymongo raises as a plain
# OperationFailure: the Retryable Reads specification's codes that are not already a
# NotPrimaryError (a ConnectionFailure). A refused login is not retried, but no request can
# be served either.
_TRANSIENT_CODES = {
    6: "HostUnreachable",
    7: "HostNotFound",
    89: "NetworkTimeout",
    134: "ReadConcernMajorityNotAvailableYet",
    262: "ExceededTimeLimit",
    9001: "SocketException",
}
_AUTHENTICATION_FAILED = 18
# How long the change stream waits for one answer, whatever MONGODB_TIMEOUT_MS gives a
# request: a busy server's late answer still brings its changes, and cutting it would only
# ask that server to open the stream again.
STREAM_TIMEOUT_MS = 10_000


def _client(uri: str, **timeouts) -> MongoClient:
    """The driver only warns about an unknown URI option or a bad value, and would run on
    without it (without `tls=true`, say): at start, that is an error naming MONGODB_URI.
    pymongo's messages name the option, never the URI, so no credential is printed.

    The server monitor polls rather than streams. A node that answers a command with "shutting
    down" or "not primary" is marked unknown, and the driver asks its monitor to look again
    before the read is retried: a polling monitor does so at once (at most every half
    second), a streaming one only when the server pushes a change of state, which a node
    that refused one command may never do; the retry would then wait out the deadline, and
    the requests after it find no server for up to heartbeatFrequencyMS (10 seconds).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            return MongoClient(
                uri,
                appname="bot-catalogue",
                connect=False,
                serverMonitoringMode="poll",
                datetime_conversion="DATETIME_AUTO",
                **timeouts,
            )
    except (PyMongoError, ValueError, OSError, UserWarning) as error:
        raise ConfigError("MONGODB_URI", str(error)) from None


def init_app(app: Flask, client: MongoClient | None = None) -> None:
    """Attach a client; tests hand in their own (mongomock or a test server), which then
    serves the command line and the change stream too.

    The requests' client tells the worker's permits of each reply (`admission.Replies`); a
    client handed in tells nothing, and its permits are judged by their coming back alone.
    The change stream's client finds the server and connects as a request's does, but waits
    STREAM_TIMEOUT_MS for an answer, and reads the primary (`admitted_primary_db`). It is a
    client of its own rather than an operation timeout on the request's client: under an
    operation timeout the driver retries a lost connection until the timeout runs out, so a
    cut stream would be reported only that much later.
    """
    if client is None:
        uri, timeout_ms = app.config["MONGODB_URI"], app.config["MONGODB_TIMEOUT_MS"]
        reach = {"serverSelectionTimeoutMS": timeout_ms, "connectTimeoutMS": timeout_ms}
        permits = app.extensions["database_permits"]
        client = _client(
            uri,
            **reach,
            socketTimeoutMS=timeout_ms,
            readPreference=app.config["MONGODB_READ_PREFERENCE"],
            event_listeners=[admission.Replies(permits)] if permits else [],
        )
        app.extensions["mongo_stream"] = _client(
            uri, **reach, socketTimeoutMS=STREAM_TIMEOUT_MS, readPreference="primary"
        )
        app.extensions["mongo_admin"] = None
    else:
        app.extensions["mongo_admin"] = app.extensions["mongo_stream"] = client
    app.extensions["mongo"] = client


def admitted_db() -> Database:
    """The request's database, once it holds one of its worker's permits (`admission`): named
    so, since the call may wait for a permit or end the request with a 503."""
    admission.admit()
    app = current_app
    return app.extensions["mongo"][app.config["MONGODB_DB"]]


def admitted_primary_db() -> Database:
    """The request's database as the caches must read it (runtime/exact_cache.py): on the
    primary while there is one, whatever MONGODB_READ_PREFERENCE says, and only what a
    majority holds. The change stream reports exactly those writes; a lagging secondary, or a
    write later rolled back, would otherwise put into a cache what no event will take out."""
    return admitted_db().with_options(
        read_preference=ReadPreference.PRIMARY_PREFERRED, read_concern=ReadConcern("majority")
    )


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
    """Ask the server to answer within `timeout_seconds`, server selection included, once
    the request holds a permit (`admission`), waited for within the same bound."""
    admission.admit(within=timeout_seconds)
    with timeout(timeout_seconds):
        current_app.extensions["mongo"].admin.command("ping")


def unavailable(error: PyMongoError) -> bool:
    """Whether the database could not serve (down, unreachable, stepping down, too slow,
    refusing our login), as opposed to refusing what we asked, which is a bug to look at.

    ConnectionFailure covers lost and closed connections, network and server-selection
    timeouts and "not primary" or "shutting down" replies; `timeout` an operation that
    outlived its deadline on the server (ExecutionTimeout).
    """
    if isinstance(error, ConnectionFailure) or error.timeout:
        return True
    return isinstance(error, OperationFailure) and (
        error.code in _TRANSIENT_CODES or error.code == _AUTHENTICATION_FAILED
    )


def describe(error: PyMongoError) -> str:
    """The reason in one line for an operator: the server's own message for an error reply,
    else pymongo's, without the topology description a server-selection timeout appends.

    Neither holds the URI, so no credential is repeated."""
    if isinstance(error, OperationFailure) and (error.details or {}).get("errmsg"):
        return f"{error.details['errmsg']} (code {error.code})"
    return str(error).partition(", Timeout: ")[0]
