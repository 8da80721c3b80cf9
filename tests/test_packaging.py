"""A module missing from pyproject works in a checkout and breaks once installed."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_top_level_module_and_package_is_listed():
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    modules = {path.stem for path in ROOT.glob("*.py") if "." not in path.stem}
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests"}

    assert set(listed["py-modules"]) == modules
    assert set(listed["packages"]) == packages
