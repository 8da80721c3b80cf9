"""`make docs`: the facts the code holds, written into the docs from the code, so that no page
types them by hand (docs/development.md#generated-reference).

- `docs/openapi.json`: the OpenAPI document the service serves at `GET /v1/openapi.json`.
- The marked regions of the pages, `<!-- generated: NAME -->`, then what NAME's function of
  REGIONS writes, then `<!-- end of generated -->`.

tests/tooling/test_reference.py fails while a file or a region and the code disagree, and the
docs' size cap (tests/tooling/test_docs_size.py) counts no generated region.
"""

import ast
import functools
import json
import re
from collections.abc import Callable
from pathlib import Path

import mongomock
from prometheus_client import REGISTRY

from app import create_app
from bench.tables import markdown_table
from repositories.indexes import INDEXES
from runtime import config
from scripts import examples
from web import errors, rate_limits

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
OPENAPI_FILE = DOCS / "openapi.json"
REGION = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end of generated -->)", re.DOTALL)


@functools.cache
def served_openapi() -> dict:
    """The document as the service serves it; it depends on no setting."""
    app = create_app({"TESTING": True, "TRACING": False}, mongo_client=mongomock.MongoClient())
    try:
        return app.test_client().get("/v1/openapi.json").get_json()
    finally:
        app.extensions["changes"].stop()
        app.extensions["request_feeds"].stream.stop()


def openapi_text() -> str:
    return json.dumps(served_openapi(), indent=2, ensure_ascii=False) + "\n"


def _shown(value) -> str:
    """A setting's value as the environment would spell it."""
    if value is None or value == ():
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def _settings_table(meanings: dict[str, str], defaults: dict) -> str:
    rows = [[f"`{name}`", _shown(defaults[name]), meaning] for name, meaning in meanings.items()]
    return markdown_table(["variable", "default", "meaning"], rows)


def app_settings() -> str:
    """Every variable the app reads (runtime/config.py), with the default it takes."""
    defaults = {**config.SDK_DEFAULTS, **config.settings_from_env({})}
    return _settings_table(config.MEANINGS, defaults)


def server_settings() -> str:
    """The variables of what starts the servers (scripts/run.py, gunicorn.conf.py)."""
    return _settings_table(config.SERVER_MEANINGS, config.server_settings_from_env({}))


def metrics() -> str:
    """Every metric of the service, as Prometheus names it, with its labels and help."""
    rows = []
    for family in sorted(REGISTRY.collect(), key=lambda family: family.name):
        if not family.name.startswith("botcatalogue_"):
            continue
        suffix = "_total" if family.type == "counter" else ""
        labels = _labels(family.name)
        name = f"{family.name}{suffix}" + (f"{{{','.join(labels)}}}" if labels else "")
        rows.append([f"`{name}`", family.type, family.documentation])
    return markdown_table(["metric", "type", "what it counts"], rows)


def _labels(name: str) -> tuple[str, ...]:
    collector = REGISTRY._names_to_collectors[name]
    return tuple(collector._labelnames)


def problem_types() -> str:
    """Each kind of error (web/errors.py): its type's name, title, status and what comes with it."""
    kinds = [(code, errors.problem_title(code)) for code in errors.TITLES]
    kinds.insert(1, (400, errors.problem_title(400, unread=True)))
    rows = [
        [f"`{errors.problem_type(title).removeprefix(errors.PROBLEM_TYPES)}`", title, str(code),
         errors.NOTES.get(title if title == errors.UNREADABLE_TITLE else code, "")]
        for code, title in kinds
    ]  # fmt: skip
    return markdown_table(["type", "title", "status", "notes"], rows)


def rate_limit_policies() -> str:
    """Each policy the rate-limit fields name (web/rate_limits.py), with its setting's default."""
    defaults = config.settings_from_env({})
    rows = [
        [f"`{name}`", f"`{setting}`", _shown(defaults[setting]), counts]
        for name, (setting, counts) in rate_limits.POLICIES.items()
    ]
    return markdown_table(["policy", "setting", "default", "what it counts"], rows)


def indexes() -> str:
    """Every index `flask db init` makes (repositories/indexes.py)."""
    rows = []
    for collection, models in INDEXES.items():
        for model in models:
            document = model.document
            keys = ", ".join(f"{field}: {order}" for field, order in document["key"].items())
            options = sorted(key for key in document if key not in ("name", "key"))
            rows.append([collection, f"`{document['name']}`", f"`{{{keys}}}`", ", ".join(options)])
    return markdown_table(["collection", "index", "keys", "options"], rows)


# Where the service's own log records are made: a module's `log = logging.getLogger(...)`.
_LOGGED = ("web", "runtime", "access", "blueprints", "repositories", "schemas", "commands")
_LEVELS = {"debug": "DEBUG", "info": "INFO", "warning": "WARNING", "error": "ERROR",
           "exception": "ERROR", "critical": "CRITICAL"}  # fmt: skip
_PLACEHOLDER = re.compile(r"%(?:\.\d+)?[sdfr]")


def _logger_name(tree: ast.Module, module: str) -> str | None:
    """The name given to `logging.getLogger` in a module: `__name__` is the module's."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "getLogger":
            if not node.args or isinstance(node.args[0], ast.Name):  # the root, or __name__
                return module if node.args else "root"
            return node.args[0].value
    return None


def log_records() -> str:
    """Every record the service's own code logs through its module's `log`: its logger, level
    and message, with `<…>` where the message takes a value, read from the source."""
    rows = []
    for path in sorted(p for folder in _LOGGED for p in (ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        logger = _logger_name(tree, module)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            target, level = node.func.value, _LEVELS.get(node.func.attr)
            if level and isinstance(target, ast.Name) and target.id == "log" and logger:
                message = node.args[0].value if isinstance(node.args[0], ast.Constant) else "…"
                rows.append((f"`{logger}`", level, f"`{_PLACEHOLDER.sub('<…>', message)}`"))
    rows = [list(row) for row in dict.fromkeys(rows)]
    return markdown_table(["logger", "level", "message"], rows)


def _allowed(schema: dict) -> str:
    if "enum" in schema:
        return ", ".join(f"`{value}`" for value in schema["enum"])
    if "maximum" in schema:
        return f"{schema.get('minimum', '')} to {schema['maximum']}"
    if "minimum" in schema:
        return f"{schema['minimum']} or more"
    return schema.get("format", "")


def _default(schema: dict) -> str:
    """A parameter's default, where its schema states one; else its meaning says it."""
    return f"`{schema['default']}`" if "default" in schema else ""


def _parameters(path: str) -> Callable[[], str]:
    """The query parameters of `path`'s GET, as the served OpenAPI document describes them."""

    def table() -> str:
        operation = served_openapi()["paths"][path]["get"]
        rows = [
            [f"`{parameter['name']}`", _default(parameter["schema"]),
             _allowed(parameter["schema"]), parameter.get("description", "")]
            for parameter in operation["parameters"]
            if parameter.get("in") == "query"
        ]  # fmt: skip
        return markdown_table(["parameter", "default", "values", "meaning"], rows)

    return table


REGIONS: dict[str, Callable[[], str]] = {
    "app-settings": app_settings,
    "server-settings": server_settings,
    "metrics": metrics,
    "problem-types": problem_types,
    "rate-limit-policies": rate_limit_policies,
    "indexes": indexes,
    "log-records": log_records,
    "list-parameters": _parameters("/v1/requests/"),
    "export-parameters": _parameters("/v1/requests/export"),
    "feed-parameters": _parameters("/v1/requests/feed"),
    # Worked examples (scripts/examples.py), all from one app over the demo data.
    **{name: functools.partial(lambda name: _examples()[name], name) for name in examples.EXAMPLES},
}


@functools.cache
def _examples() -> dict[str, str]:
    return examples.written()


def pages() -> list[Path]:
    return sorted([ROOT / "README.md", *DOCS.rglob("*.md")])


def regenerated(text: str) -> str:
    """`text` with every marked region written again from the code."""
    return REGION.sub(lambda m: f"{m.group(1)}{REGIONS[m.group(2)]()}\n{m.group(4)}", text)


def regions(text: str) -> list[str]:
    return [match.group(2) for match in REGION.finditer(text)]


def without_regions(text: str) -> str:
    """What of a page is written by hand."""
    return REGION.sub("", text)


def main() -> None:
    OPENAPI_FILE.write_text(openapi_text(), encoding="utf-8")
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if regions(text):
            page.write_text(regenerated(text), encoding="utf-8")
            print(f"wrote {', '.join(regions(text))} into {page.relative_to(ROOT)}")
    print(f"wrote {OPENAPI_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
