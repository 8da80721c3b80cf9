"""Every response a test's Flask client receives is checked against the app's own OpenAPI
document, so that a document which lies about a response fails the suite.

The tests already see every shape the service sends (null summaries, each error, 304), on both
backends; checking them all here keeps the document true as it changes, where a list of sample
responses would go stale. openapi-core checks the status and the body. The headers are checked
here: each declared one against its schema, with a validator made once per schema (openapi-core
builds its validators again for each header of each response, which was two thirds of the
suite's checking), and one the document does not declare for that response is refused.
`pytest_configure` installs the client for every app.
"""

import functools
import json
import re
import weakref
from dataclasses import dataclass, field

from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from openapi_core import Config, OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.deserializing.media_types.util import plain_loads
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_core.validation.response.exceptions import MissingData
from openapi_core.validation.response.validators import V31ResponseDataValidator

from web.errors import PROBLEM_JSON
from web.event_streams import MEDIA_TYPE as EVENT_STREAM

# What HTTP itself puts on a response, which OpenAPI leaves out of a response's headers; and
# what the Fetch standard's CORS adds for a page on another origin (web/cross_origin.py).
_TRANSPORT_HEADERS = {"content-type", "content-length", "date", "vary"}
_CROSS_ORIGIN = "access-control-"
_SLASHES = re.compile("//+")
# The downloads' text formats (docs/api.md#exports): openapi-core would read them as bytes, and
# takes an empty one (an export of nothing) for a missing body.
_TEXT_DOWNLOADS = ("text/csv", "application/x-ndjson")
_PARAMETER = re.compile(r"\\\{[^/]+?\\\}")


class DocumentedPath(WerkzeugOpenAPIRequest):
    """The request as the document spells its path: the service also answers the path
    without its trailing slash and with doubled slashes (docs/api.md#paths-and-methods). The probes
    and the exports (docs/api.md#exports) are spelled without one."""

    @property
    def path(self) -> str:
        path = _SLASHES.sub("/", super().path)
        if path in ("/healthz", "/readyz") or path.rstrip("/").endswith("/export"):
            return path.rstrip("/")
        return path if path.endswith("/") else f"{path}/"


@dataclass(frozen=True)
class Document:
    openapi: OpenAPI
    components: dict  # the document's, by kind (responses, headers) and name
    operations: tuple  # (path pattern, path item) per documented path
    _headers: dict = field(default_factory=dict)  # the declared headers, by response

    def declared_headers(self, path: str, method: str, status: int) -> dict[str, dict]:
        """The headers the document declares for this response, by lowercase name."""
        key = (path, method, status)
        if key not in self._headers:
            self._headers[key] = {}
            for pattern, item in self.operations:
                if pattern.fullmatch(path) and method in item:
                    responses = item[method]["responses"]
                    response = self._resolve(
                        responses.get(str(status)) or responses.get("default", {})
                    )
                    declared = response.get("headers", {}).items()
                    self._headers[key] = {n.lower(): self._resolve(h) for n, h in declared}
                    break
        return self._headers[key]

    def _resolve(self, item: dict) -> dict:
        if "$ref" not in item:
            return item
        _, kind, name = item["$ref"].rsplit("/", 2)
        return self.components[kind][name]


@functools.cache
def _validator(schema: str) -> Draft202012Validator:
    return Draft202012Validator(
        json.loads(schema), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _header_problems(header: dict, value: str) -> list[str]:
    """What is wrong with `value` as `header`'s schema reads it (a `simple` style value)."""
    schema = header.get("schema", {})
    if schema.get("type") == "integer":
        try:
            value = int(value)
        except ValueError:
            return ["not an integer"]
    return [error.message for error in _validator(json.dumps(schema)).iter_errors(value)]


@functools.cache
def _document(text: str) -> Document:
    spec = json.loads(text)
    operations = tuple(
        (re.compile(_PARAMETER.sub("[^/]+", re.escape(template))), item)
        for template, item in spec["paths"].items()
    )
    deserializers = dict.fromkeys(_TEXT_DOWNLOADS, plain_loads)
    # openapi-core reads `application/json` only; a problem is JSON under its own type.
    deserializers[PROBLEM_JSON] = json.loads
    config = Config(
        extra_media_type_deserializers=deserializers,
        response_validator_cls=V31ResponseDataValidator,  # the headers are checked here
    )
    openapi = OpenAPI.from_dict(spec, config=config)
    return Document(openapi, spec["components"], operations)


# Each app's document, built from the same specification that the app serves.
_DOCUMENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def document_of(app) -> Document | None:
    if app not in _DOCUMENTS:
        apis = app.extensions.get("flask-smorest", {}).get("apis", {})
        specs = [api["ext_obj"].spec.to_dict() for api in apis.values()]
        _DOCUMENTS[app] = _document(json.dumps(specs[0], sort_keys=True)) if specs else None
    return _DOCUMENTS[app]


class ValidatingClient(FlaskClient):
    """Flask's test client, raising `AssertionError` for a response its document denies.

    A request outside the document (an unknown path, a POST) is left alone: the document
    makes no promise about it, and the tests of 404 and 405 check the error body."""

    def open(self, *args, **kwargs):
        response = super().open(*args, **kwargs)
        document = document_of(self.application)
        if document is not None:
            check(document, response)
        return response


def check(document: Document, response) -> None:
    if response.request.method == "POST":  # /mcp, whose messages MCP describes (tools/list)
        return
    request = DocumentedPath(response.request)
    if response.mimetype == EVENT_STREAM:
        # A live feed never ends: its status and headers are checked, its events are the
        # feed tests' (tests/deployment/test_feeds.py).
        _check_headers(document, request, response)
        return
    # Read as a test reads it; openapi-core would swap a file's body for a copy that
    # `response.close()` no longer closes.
    response.get_data()
    try:
        document.openapi.validate_response(request, WerkzeugOpenAPIResponse(response))
    except (PathNotFound, OperationNotFound):
        return
    except MissingData as error:
        if response.get_data() or response.mimetype not in _TEXT_DOWNLOADS:
            _refuse(response, "; ".join(_causes(error)), error)
    except Exception as error:
        _refuse(response, "; ".join(_causes(error)), error)
    _check_headers(document, request, response)


def _check_headers(document: Document, request, response) -> None:
    # A HEAD answers with the headers its GET would send (HTTP's rule, not the document's).
    method = "get" if request.method.lower() == "head" else request.method
    declared = document.declared_headers(request.path, method, response.status_code)
    sent = {name.lower(): value for name, value in response.headers.items()}
    problems = [
        f"header {name} {value!r}: {'; '.join(wrong)}"
        for name, value in sent.items()
        if name in declared and (wrong := _header_problems(declared[name], value))
    ]
    problems += [
        f"header {name} is required"
        for name, h in declared.items()
        if h.get("required") and name not in sent
    ]
    if problems:
        _refuse(response, "; ".join(problems))
    undeclared = set(sent) - _TRANSPORT_HEADERS - set(declared)
    undeclared = {name for name in undeclared if not name.startswith(_CROSS_ORIGIN)}
    if undeclared:
        _refuse(response, f"headers it does not declare: {sorted(undeclared)}")


def _refuse(response, problems: str, error: Exception | None = None):
    raise AssertionError(
        f"{response.request.method} {response.request.full_path} answered "
        f"{response.status_code}, which the OpenAPI document does not allow: {problems}"
    ) from error


def _causes(error: BaseException):
    """openapi-core's error, then the schema errors it wraps, which say what is wrong."""
    yield str(error)
    for cause in getattr(error, "schema_errors", ()) or ():
        yield f"{cause.message} at /{'/'.join(map(str, cause.absolute_path))}"
    if error.__cause__ is not None:
        yield from _causes(error.__cause__)
