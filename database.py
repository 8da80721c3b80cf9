"""One MongoClient per process, kept on the app; requests borrow its database."""

from flask import Flask, current_app
from pymongo import MongoClient, timeout
from pymongo.database import Database


def init_app(app: Flask, client: MongoClient | None = None) -> None:
    """Attach a client; tests hand in their own (mongomock or a test server)."""
    if client is None:
        timeout = app.config["MONGODB_TIMEOUT_MS"]
        client = MongoClient(
            app.config["MONGODB_URI"],
            appname="bot-catalogue",
            connect=False,
            serverSelectionTimeoutMS=timeout,
            connectTimeoutMS=timeout,
            socketTimeoutMS=timeout,
            readPreference=app.config["MONGODB_READ_PREFERENCE"],
            datetime_conversion="DATETIME_AUTO",
        )
    app.extensions["mongo"] = client


def get_db() -> Database:
    app = current_app
    return app.extensions["mongo"][app.config["MONGODB_DB"]]


def ping(timeout_seconds: float) -> None:
    """Ask the server to answer within `timeout_seconds`, server selection included."""
    with timeout(timeout_seconds):
        current_app.extensions["mongo"].admin.command("ping")
