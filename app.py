"""The application factory."""

import os
import re
from collections.abc import Callable, Mapping
from types import FunctionType

import pymongo
from flask import Flask
from pymongo import MongoClient
from werkzeug.middleware.proxy_fix import ProxyFix

import commands
from blueprints import agents, bot_requests, bots, exports, feeds, health, usage
from blueprints.converters import ObjectIdConverter
from repositories.tokens import TokenRepository
from repositories.users import UserRepository
from runtime import admission, changes, database, logs, request_feeds, tracing
from runtime.config import settings_from_env
from web import (
    authentication,
    caching,
    cross_origin,
    docs_page,
    errors,
    metrics,
    openapi,
    rate_limits,
    rendered,
    request_ids,
    request_log,
    timing,
)

_API_SETTINGS = {
    "API_TITLE": "Bot Catalogue Service",
    "API_VERSION": "1",
    "OPENAPI_VERSION": "3.1.0",
    **openapi.SETTINGS,
}


class _Flask(Flask):
    # Flask asks `inspect.iscoroutinefunction` of each view and hook at each call: fifteen
    # times for a cached bot (each decorator asks of the view again), 3% of its instructions.
    # Its answer is kept for plain functions, which are the app's views and hooks and so few;
    # a bound method or a partial goes to Flask each time.
    _SYNC_KEPT = 1024

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._sync: dict[FunctionType, Callable] = {}

    def ensure_sync(self, func):
        if type(func) is not FunctionType:
            return super().ensure_sync(func)
        synced = self._sync.get(func)
        if synced is None:
            synced = super().ensure_sync(func)
            if len(self._sync) < self._SYNC_KEPT:
                self._sync[func] = synced
        return synced

    def log_exception(self, exc_info) -> None:
        """Left to `errors.http_error`, which logs every 500 once, with its request id."""

    def full_dispatch_request(self):
        """All the database work of one request, authentication included, shares one
        deadline, MONGODB_TIMEOUT_MS: pymongo's client-side operation timeout, which bounds
        server selection, connecting, waiting for a reply and every retry together, and
        sends the rest of it to the server as maxTimeMS. A request to a stalled database
        therefore ends as a 503 when the time is up, and frees its thread."""
        with pymongo.timeout(self.config["MONGODB_TIMEOUT_MS"] / 1000):
            return super().full_dispatch_request()

    def make_default_options_response(self):
        """`Allow` and no content: Flask's own answer says `text/html` of an empty body."""
        response = super().make_default_options_response()
        response.status_code = 204
        del response.headers["Content-Type"]
        return response


class _MergeSlashes:
    """Serve the specification's doubled-slash paths (`/v1//bots/`) as the single-slash ones."""

    _RUN = re.compile("//+")

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        environ["PATH_INFO"] = self._RUN.sub("/", environ.get("PATH_INFO", ""))
        return self.wsgi_app(environ, start_response)


def create_app(config: Mapping | None = None, *, mongo_client: MongoClient | None = None) -> Flask:
    """Build the app; `config` overrides the environment and `mongo_client` the database."""
    logs.configure()
    app = _Flask(__name__, static_folder=None)
    app.config.from_mapping(settings_from_env(os.environ))
    app.config.from_mapping(_API_SETTINGS)
    if config:
        app.config.from_mapping(config)
    app.json.sort_keys = False
    app.url_map.strict_slashes = False
    app.url_map.converters["objectid"] = ObjectIdConverter
    app.wsgi_app = _MergeSlashes(app.wsgi_app)
    if app.config["TRUSTED_PROXIES"]:
        # Each trusted proxy appends one X-Forwarded-For entry; anything before them is the
        # client's own say. With none, the headers are ignored and the peer is the client.
        proxies = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)

    tracing.init_app(app)  # before the database clients, which copy pymongo's listeners
    admission.init_app(app)  # before the database clients, which tell the permits of replies
    database.init_app(app, mongo_client)
    changes.init_app(app)
    request_feeds.init_app(app)
    authentication.init_app(
        app,
        authentication.Lookups(
            token=lambda db, token_hash: TokenRepository(db).find(token_hash),
            user=lambda db, user_id: UserRepository(db).find(user_id),
        ),
    )
    errors.init_app(app)
    request_ids.init_app(app)
    timing.init_app(app)
    request_log.init_app(app)
    metrics.init_app(app)
    api = errors.Api(app)
    openapi.init_app(app, api)
    docs_page.init_app(app)
    api.register_converter(
        ObjectIdConverter, lambda _: {"type": "string", "pattern": f"^{ObjectIdConverter.regex}$"}
    )
    api.register_blueprint(bots.blp)
    api.register_blueprint(bot_requests.blp)
    api.register_blueprint(exports.blp)
    api.register_blueprint(feeds.blp)
    api.register_blueprint(usage.blp)
    api.register_blueprint(health.blp)
    agents.init_app(app, api.spec.to_dict())  # before the rate limits, which exempt it
    cross_origin.init_app(app, api)
    rate_limits.init_app(app)
    # After the rate limits, so that its hook runs before theirs (Flask runs them in reverse):
    # a 304 is one before it is counted, or not.
    caching.init_app(app)
    rendered.init_app(app)
    commands.init_app(app)
    return app
