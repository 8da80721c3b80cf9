"""The packages form layers that only point down (docs/development.md, Layout): a package
imports only packages below it, so `runtime/` at the bottom imports none of the project's."""

import ast
from pathlib import Path

from tests.support import ROOT

# Bottom first; packages of one rank never import each other.
LAYERS = {
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


def test_every_package_of_the_project_has_its_layer():
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    assert packages - {"tests", "bench", "scripts"} == LAYERS.keys()
