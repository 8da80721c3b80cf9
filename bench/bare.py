"""The framework's floor, which `make bench` holds a cached bot by slug to: a bare Flask app
that checks the `Authorization` header and returns the service's bytes for that bot, through
the same gunicorn settings (docs/performance.md#the-framework-under-it).

`gunicorn "bench.bare:create_app()"`, with BARE_BODY naming a file of those bytes and
BARE_TOKEN the token they were asked with.
"""

import os
from pathlib import Path

from flask import Flask, Response, request


def create_app() -> Flask:
    body = Path(os.environ["BARE_BODY"]).read_bytes()
    expected = f"Bearer {os.environ['BARE_TOKEN']}"
    app = Flask(__name__)

    @app.get("/v1/bots/<slug>/")
    def bot(slug: str) -> Response:
        if request.headers.get("Authorization") != expected:
            return Response(status=401)
        return Response(body, mimetype="application/json")

    return app
