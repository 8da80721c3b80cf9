"""Worked examples for docs/api.md, made by calling the service: `make docs` sends each request
to an app over the demo data (commands/demo.py, generated as of NOW) in a throwaway embedded
database, and writes what came back into the page (scripts/reference.py's regions), so that no
example drifts from what the service answers.

Only what does not change from one run to the next is shown: no `Date`, `X-Request-ID` only
where the request gave its own, and of the rate-limit fields only `RateLimit-Policy` (the
others count down with the clock).
"""

import contextlib
import datetime as dt
import json
import tempfile
from collections.abc import Callable, Iterator
from http import HTTPStatus
from pathlib import Path

import pymongo
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from app import create_app
from commands import demo, load_writes
from repositories.token_admin import TokenAdmin
from runtime.bearer_tokens import hash_token
from runtime.config import settings_from_env
from runtime.database import admin_db
from runtime.embedded_database import EmbeddedDatabase

NOW = dt.datetime(2026, 11, 24)
BASE_URL = "http://127.0.0.1:5000"
# The member's token as the examples spell it; the app is given its hash.
TOKEN = "$TOKEN"
SHOWN_HEADERS = ("Content-Type", "Content-Disposition", "ETag", "Link", "RateLimit-Policy")


@contextlib.contextmanager
def _database() -> Iterator[pymongo.database.Database]:
    with tempfile.TemporaryDirectory(prefix="docs-examples-") as folder:
        server = EmbeddedDatabase(Path(folder) / "db", Path(folder) / "server.log").start()
        client = pymongo.MongoClient(server.uri)
        try:
            yield client["botcatalogue"]
        finally:
            client.close()
            server.stop()


def _app(db) -> Flask:
    entries = demo.entries(db, NOW)
    load_writes.write(db, entries)
    member = demo.TOKENS[0]
    TokenAdmin(db).issue(
        hash_token(TOKEN), kind=member.kind, owner=member.owner_id(entries), label="docs", now=NOW
    )
    # The caches off: their change stream would only wait for the server here.
    caches_off = {"TOKEN_CACHE_SECONDS": 0, "CATALOGUE_CACHE_SIZE": 0, "SUMMARY_CACHE_SIZE": 0}
    # The defaults, whatever the shell that runs `make docs` exports.
    defaults = settings_from_env({})
    settings = {**defaults, "TESTING": True, "TRACING": False, "MONGODB_DB": db.name, **caches_off}
    return create_app(settings, mongo_client=db.client)


class _Session:
    """The requests of one example, as a client sends them, and what came back."""

    def __init__(self, client: FlaskClient):
        self.client = client
        self.shown: list[str] = []

    def get(self, path: str, headers: dict | None = None, *, keep: int | None = None):
        headers = {"Authorization": f"Bearer {TOKEN}", **(headers or {})}
        response = self.client.get(path, headers=headers, base_url=BASE_URL)
        self.shown.append(_exchange(path, headers, response, keep))
        return response

    def text(self) -> str:
        return "```http\n" + "\n\n".join(self.shown) + "\n```"


def _exchange(path: str, headers: dict, response: TestResponse, keep: int | None) -> str:
    lines = [f"GET {path} HTTP/1.1", *(f"{name}: {value}" for name, value in headers.items())]
    lines += ["", f"HTTP/1.1 {response.status_code} {HTTPStatus(response.status_code).phrase}"]
    shown = [*SHOWN_HEADERS, *(["X-Request-ID"] if "X-Request-ID" in headers else [])]
    lines += [f"{name}: {response.headers[name]}" for name in shown if name in response.headers]
    if not response.is_json and response.data:
        # CSV's CRLF line ends shown as the page's own.
        lines += ["", response.get_data(as_text=True).replace("\r\n", "\n").rstrip("\n")]
        return "\n".join(lines)
    body = response.get_json(silent=True)
    if body is not None:
        if keep is not None and isinstance(body.get("results"), list):
            body = {**body, "results": body["results"][:keep]}
        lines += ["", json.dumps(body, indent=2)]
    return "\n".join(lines)


def keyset_pages(client: FlaskClient) -> str:
    session = _Session(client)
    fields = "fields=id,createdAt,bot"
    first = session.get(f"/v1/requests/?pagination=keyset&limit=2&{fields}").get_json()
    session.get(f"/v1/requests/?pagination=keyset&limit=2&{fields}&cursor={first['nextCursor']}")
    return session.text()


def offset_pages(client: FlaskClient) -> str:
    session = _Session(client)
    session.get("/v1/bots/?limit=2&page=2&fields=slug,name")
    session.get("/v1/bots/?limit=2&page=2&fields=slug,name&count=none")
    return session.text()


def invalid_parameters(client: FlaskClient) -> str:
    session = _Session(client)
    session.get("/v1/requests/?limit=0&sortBy=cost", {"X-Request-ID": "docs-example-1"})
    return session.text()


def conditional_request(client: FlaskClient) -> str:
    session = _Session(client)
    etag = session.get("/v1/bots/blog-post-writer/?fields=slug,name,creditCost").headers["ETag"]
    session.get("/v1/bots/blog-post-writer/?fields=slug,name,creditCost", {"If-None-Match": etag})
    return session.text()


def export(client: FlaskClient) -> str:
    session = _Session(client)
    period = "createdFrom=2026-11-22T00:00:00Z&createdTo=2026-11-24T00:00:00Z"
    session.get(f"/v1/requests/export?format=csv&fields=id,botSlug,createdAt&{period}")
    return session.text()


def db_init_again(client: FlaskClient) -> str:
    """`flask db init` run a second time, on a database where the writer of the tokens had
    made its own unique index of their hash: the first run's lines name build times."""
    app = client.application
    with app.app_context():
        admin_db().tokens.create_index("tokenHash", unique=True, name="writer_token_hash")
    runner = app.test_cli_runner()
    runner.invoke(args=["db", "init"])
    again = runner.invoke(args=["db", "init"])
    return "```text\n$ flask db init\n" + again.output.rstrip("\n") + "\n```"


EXAMPLES: dict[str, Callable[[FlaskClient], str]] = {
    "example-keyset-pages": keyset_pages,
    "example-offset-pages": offset_pages,
    "example-invalid-parameters": invalid_parameters,
    "example-conditional-request": conditional_request,
    "example-export": export,
    "example-db-init": db_init_again,
}


def written() -> dict[str, str]:
    """Each example's text, from one app over the demo data."""
    with _database() as db:
        app = _app(db)
        try:
            client = app.test_client()
            return {name: example(client) for name, example in EXAMPLES.items()}
        finally:
            app.extensions["changes"].stop()
            app.extensions["request_feeds"].stream.stop()
