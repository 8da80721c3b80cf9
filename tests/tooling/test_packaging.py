"""What works in a checkout must work once installed: the wheel holds every module and data
file of the packages, and nothing of the tests, the benchmark or the scripts."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT

OUTSIDE = {"tests", "bench", "scripts", "var", "docs", "build"}


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory) -> set[str]:
    """Built from a copy, since setuptools leaves `build/` and egg-info where it builds."""
    source = tmp_path_factory.mktemp("source") / "checkout"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".*", "var", "build", "*.egg-info", "__pycache__", "node_modules"
        ),
    )
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder),
         str(source)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (wheel,) = folder.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return {name for name in archive.namelist() if ".dist-info/" not in name}


def _shipped(path: Path) -> bool:
    relative = path.relative_to(ROOT)
    return (
        relative.parts[0] not in OUTSIDE
        and not relative.parts[0].startswith(".")
        and "__pycache__" not in relative.parts
        and relative.suffix != ".pyc"
    )


def test_the_wheel_holds_every_package_file_and_only_those(wheel_files):
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - OUTSIDE
    expected = {"app.py", "wsgi.py"} | {
        str(path.relative_to(ROOT))
        for package in packages
        for path in (ROOT / package).rglob("*")
        if path.is_file() and _shipped(path)
    }

    assert wheel_files == expected


def test_only_the_owners_modules_stand_at_the_top_level(wheel_files):
    assert {name for name in wheel_files if "/" not in name} == {"app.py", "wsgi.py"}
