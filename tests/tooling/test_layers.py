"""The packages form layers that only point down (docs/development.md, Layout): a package
imports only packages below it, so `domain/` and `runtime/` at the bottom import none of the
project's. Two more rules keep the web apart from the data: `web/` imports no repository
(its pages come through `schemas/`), and no schema imports Flask (a query string is loaded,
a cursor made, an answer dumped, without a request)."""

import ast
from pathlib import Path

from tests.support import ROOT

# Bottom first; packages of one rank never import each other.
LAYERS = {
    "domain": 0,
    "runtime": 0,
    "access": 1,
    "repositories": 2,
    "schemas": 3,
    "web": 4,
    "blueprints": 5,
    "commands": 5,
}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return {name.split(".")[0] for name in names}


def test_every_package_imports_only_packages_below_it():
    upward = [
        f"{path.relative_to(ROOT)} imports {imported}"
        for package, rank in LAYERS.items()
        for path in sorted((ROOT / package).glob("*.py"))
        for imported in sorted(_imports(path) & LAYERS.keys() - {package})
        if LAYERS[imported] >= rank
    ]
    assert upward == []


# Packages a package must not import though they are below it.
APART = {"web": {"repositories"}, "schemas": {"flask", "flask_smorest", "werkzeug"}}


def test_the_web_reads_no_repository_and_no_schema_needs_a_request():
    imported = [
        f"{path.relative_to(ROOT)} imports {name}"
        for package, forbidden in APART.items()
        for path in sorted((ROOT / package).glob("*.py"))
        for name in sorted(_imports(path) & forbidden)
    ]
    assert imported == []


def test_every_package_of_the_project_has_its_layer():
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    assert packages - {"tests", "bench", "scripts"} == LAYERS.keys()
