"""A module missing from pyproject works in a checkout and breaks once installed."""

import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_top_level_module_and_package_is_listed():
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    modules = {path.stem for path in ROOT.glob("*.py") if "." not in path.stem}
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests"}

    assert set(listed["py-modules"]) == modules
    assert set(listed["packages"]) == packages


def test_every_data_file_of_a_package_is_installed_with_it():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    declared = setuptools.get("package-data", {})
    for package in setuptools["packages"]:
        folder = ROOT / package
        for path in folder.rglob("*"):
            if path.is_file() and path.suffix not in {".py", ".pyc"}:
                name = str(path.relative_to(folder))
                patterns = declared.get(package, [])
                assert any(fnmatch(name, pattern) for pattern in patterns), f"{package}/{name}"
