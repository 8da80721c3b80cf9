"""The /docs page's assets: Swagger UI 5's files, served from the `dist` folder the
flask-swagger-ui package ships, so that /docs loads nothing remote. flask-smorest serves the
page itself (`openapi.SETTINGS`)."""

from pathlib import Path

import flask
import flask_swagger_ui
from flask import Flask, send_from_directory

_DIST = Path(flask_swagger_ui.__file__).parent / "dist"

DOCS_ASSETS = ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js")

_assets = flask.Blueprint("docs_assets", __name__)


@_assets.route(f"/docs/assets/<any({', '.join(map(repr, DOCS_ASSETS))}):name>")
def _docs_asset(name: str):
    return send_from_directory(_DIST, name)


def init_app(app: Flask) -> None:
    app.register_blueprint(_assets)
