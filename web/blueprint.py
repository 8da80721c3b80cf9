"""The one Blueprint every route uses: flask-smorest's, with strict query parsing, the list
response (`list_response`), and the behaviour every operation shares written into its
documentation (the components it refers to are `web/openapi.py`'s)."""

import re
from functools import wraps
from http import HTTPStatus

import flask_smorest
from flask import request
from marshmallow import ValidationError
from webargs.flaskparser import FlaskParser

from schemas.pages import page_schema, sent
from schemas.queries import ListQuerySchema
from schemas.selection import selected
from web import links, openapi
from web.authentication import auth
from web.openapi import COMMON_HEADERS, RATE_LIMIT_HEADERS

# Path parameters by name, as the routes spell them; the converters give their schemas.
_PATH_PARAMETERS = {
    "organization_id": "The organization's id: 24 hexadecimal characters.",
    "bot_request_id": "The bot request's id: 24 hexadecimal characters.",
    "slug": "The bot's slug.",
}
_RULE_VARIABLE = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")
# Where flask-smorest hands `list_response` the loaded query string; the view never sees the name.
_LISTING = "listing"


def openapi_path(rule: str) -> str:
    """A Flask rule as the OpenAPI document names its path: `/v1/bots/{slug}/`."""
    return _RULE_VARIABLE.sub(r"{\1}", rule)


class QueryParser(FlaskParser):
    """webargs' parser, made strict.

    A repeated parameter is refused instead of silently taking its first value, and the
    schemas' own `unknown = RAISE` applies, so an unknown parameter is a 400 naming it.
    """

    DEFAULT_VALIDATION_STATUS = 400

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._empty_loads = {}  # schema -> what an empty query string loads to

    def parse(self, argmap, req=None, *, location=None, **kwargs):
        """As webargs parses, but an empty query string of a schema that always loads it
        alike (`StrictQuerySchema.EMPTY_LOADS_ALIKE`) is loaded once: a cached bot spent a
        tenth of its time loading the same nothing."""
        if (
            location == "query"
            and getattr(argmap, "EMPTY_LOADS_ALIKE", False)
            and not (req or request._get_current_object()).query_string
        ):
            if argmap not in self._empty_loads:
                self._empty_loads[argmap] = super().parse(argmap, req, location=location, **kwargs)
            return self._empty_loads[argmap]
        return super().parse(argmap, req, location=location, **kwargs)

    def load_querystring(self, req, schema):
        repeated = sorted({key for key, values in req.args.lists() if len(values) > 1})
        if repeated:
            raise ValidationError({key: ["Given more than once."] for key in repeated})
        return req.args.to_dict()


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint: strict query parsing, the list response, and the behaviour
    every operation shares written into its documentation.

    `rate_limited=False` exempts the whole blueprint from Flask-Limiter (see `rate_limits`),
    and its operations then document no 429.
    """

    ARGUMENTS_PARSER = QueryParser(unknown=None)

    def __init__(self, *args, rate_limited: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.rate_limited = rate_limited
        self._prepare_doc_cbks.append(self._prepare_shared_doc)

    def route(self, rule, *, parameters=None, **options):
        """flask-smorest's route, describing the rule's path parameters."""
        described = [
            {"in": "path", "name": name, "description": _PATH_PARAMETERS[name]}
            for name in _RULE_VARIABLE.findall(rule)
            if name in _PATH_PARAMETERS
        ]
        return super().route(rule, parameters=[*described, *(parameters or [])], **options)

    def arguments(self, schema, *args, **kwargs):
        """flask-smorest's, with the schema made once: given its class, webargs would make an
        instance for every request (a tenth of a cached answer's time)."""
        return super().arguments(schema() if isinstance(schema, type) else schema, *args, **kwargs)

    @staticmethod
    def _make_doc_response_schema(schema):
        """flask-smorest's hook: a schema that dumps one of several views (`documented_as`)
        is documented as what it dumps."""
        return getattr(schema, "documented_as", schema)

    @staticmethod
    def login_required(func):
        """Flask-HTTPAuth's Bearer check; the operation then documents security, 401 and 503."""
        protected = auth.login_required(func)
        protected._apidoc = {**getattr(func, "_apidoc", {}), "authenticated": True}
        return protected

    @staticmethod
    def token_in_query(func):
        """Above `login_required`: the token may come as the `access_token` query parameter
        too (web/authentication.py), and the operation documents both ways."""
        func.token_in_query = True  # read from the registered view, which wraps keep
        func._apidoc = {**getattr(func, "_apidoc", {}), "token_in_query": True}
        return func

    @staticmethod
    def download(media_types, description: str, *, attachment: bool = True):
        """Document a 200 streamed in one of `media_types`: a file (web/downloads.py), or a
        live feed's events (`attachment=False`, web/event_streams.py). No ETag, hence no 304."""

        def decorator(func):
            download = (media_types, description, attachment)
            func._apidoc = {**getattr(func, "_apidoc", {}), "download": download}
            return func

        return decorator

    def error_responses(self, *statuses: int):
        """Document errors only the view knows it raises (403, 404) with the error body."""

        def decorator(func):
            for status in statuses:
                func = self.alt_response(status, response=HTTPStatus(status).name)(func)
            return func

        return decorator

    def _prepare_shared_doc(self, doc, doc_info, **kwargs):
        responses = doc.setdefault("responses", {})
        download = doc_info.get("download")
        if download:
            media_types, description, attachment = download
            responses[200] = {
                "description": description,
                "content": {
                    media_type: {"schema": {"type": "string"}} for media_type in media_types
                },
                "headers": {"Content-Disposition": "CONTENT_DISPOSITION"} if attachment else {},
            }
        success = responses.get(200)
        if isinstance(success, dict):
            headers = success.setdefault("headers", {})
            headers.update(COMMON_HEADERS if download else {**COMMON_HEADERS, "ETag": "ETAG"})
            if self.rate_limited:
                headers.update(RATE_LIMIT_HEADERS)
        shared = [405] if download else [304, 405]
        if self.rate_limited:
            shared.append(429)
        if doc_info.get("authenticated"):
            doc["security"] = [{openapi.BEARER_SCHEME: []}]
            if doc_info.get("token_in_query"):
                doc["security"].append({openapi.QUERY_TOKEN_SCHEME: []})
            shared += [401, 503]
        else:
            # Said, not left out: an operation without `security` reads as "not thought of".
            doc["security"] = []
        for status in shared:
            responses.setdefault(status, HTTPStatus(status).name)
        doc["responses"] = dict(sorted(responses.items(), key=lambda item: str(item[0])))
        shared_parameters = ["X_REQUEST_ID"] if download else ["IF_NONE_MATCH", "X_REQUEST_ID"]
        doc.setdefault("parameters", []).extend(shared_parameters)
        return doc

    def list_response(self, query_schema: type[ListQuerySchema]):
        """A list route, declared once as flask-smorest's own `paginate` declares one (whose
        page-number parameters these lists do not take): its query string parsed by
        `query_schema`, the repository's query handed to the view as its first argument,
        and the page the view returns sent in the list's envelope (`page_schema` of the
        schema's `item`), with its `Link` header and only the selected fields."""
        arguments = self.arguments(query_schema, location="query", arg_name=_LISTING)
        dump = self.response(
            200,
            page_schema(query_schema.item),
            headers={links.HEADER: openapi.LINK_HEADER},
        )

        def decorator(func):
            @wraps(func)
            def listed(*args, **kwargs):
                listing = kwargs.pop(_LISTING)
                page = func(listing.query, *args, **kwargs)
                body, pages = sent(page, listing.query.sort, query_schema.cursor_scope)
                return selected(body, listing.selection), {links.HEADER: links.header(pages)}

            return arguments(dump(listed))

        return decorator
