"""The /docs page's assets: Swagger UI's files, served from the swagger-ui-bundle package, so
that /docs loads nothing remote. flask-smorest serves the page itself (`openapi.SETTINGS`)."""

import flask
from flask import Flask, send_from_directory
from swagger_ui_bundle import swagger_ui_path

DOCS_ASSETS = ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js")

_assets = flask.Blueprint("docs_assets", __name__)


@_assets.route(f"/docs/assets/<any({', '.join(map(repr, DOCS_ASSETS))}):name>")
def _docs_asset(name: str):
    return send_from_directory(str(swagger_ui_path), name)


def init_app(app: Flask) -> None:
    app.register_blueprint(_assets)
