""".env.example names every variable the service reads, with its true default; `flask` and
scripts/run.py (`make run`) read a `.env` file, and the environment wins over it."""

import ast
import os
import re
import subprocess
import sys
from collections.abc import Mapping

from runtime.config import settings_from_env
from tests.support import ROOT

EXAMPLE = ROOT / ".env.example"
NAME = re.compile(r"[A-Z][A-Z0-9_]*")
ENTRY = re.compile(rf"#({NAME.pattern})=(.*)")
# Where the environment is read: the app's settings (every setting is one of them) and what
# starts the servers. Elsewhere `environ` is a WSGI request's.
SOURCES = [ROOT / "runtime" / "config.py", ROOT / "gunicorn.conf.py", ROOT / "scripts" / "run.py"]
ENVIRONMENTS = {"environ", "env"}


def _example() -> dict[str, str]:
    """Each entry's default, after checking that a line of meaning comes before it."""
    lines = EXAMPLE.read_text().splitlines()
    entries = {}
    for before, line in zip(lines, lines[1:], strict=False):
        if match := ENTRY.fullmatch(line):
            assert before.startswith("# ") and not ENTRY.fullmatch(before), line
            entries[match[1]] = match[2]
    return entries


def _is_environment(node: ast.expr) -> bool:
    """`os.environ`, or a mapping named `environ` or `env` (a copy of it, or a parameter)."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return name in ENVIRONMENTS


def _names_read_in(source: str) -> set[str]:
    """Variable names given as text to a read of the environment: `env.get("X")`,
    `os.environ["X"]`, or a reader handed the environment, as in `integer(os.environ, "X")`."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Attribute) and _is_environment(function.value):
                candidates = node.args
            elif any(_is_environment(argument) for argument in node.args):
                candidates = node.args
            else:
                continue
        elif isinstance(node, ast.Subscript) and _is_environment(node.value):
            candidates = [node.slice]
        else:
            continue
        names |= {
            argument.value
            for argument in candidates
            if isinstance(argument, ast.Constant)
            and isinstance(argument.value, str)
            and NAME.fullmatch(argument.value)
        }
    return names


class _Recording(Mapping):
    """An empty environment that remembers every name asked of it."""

    def __init__(self):
        self.asked = set()

    def __getitem__(self, name):
        self.asked.add(name)
        raise KeyError(name)

    def get(self, name, default=None):
        self.asked.add(name)
        return default

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


def test_every_variable_the_code_reads_is_listed():
    environment = _Recording()
    settings_from_env(environment)
    read = environment.asked | {
        name for path in SOURCES for name in _names_read_in(path.read_text())
    }

    assert {"MONGODB_URI", "GUNICORN_WORKERS", "EMBEDDED_DB_PORT"} <= read
    assert read - set(_example()) == set()
    assert set(_example()) - read == set(), "listed but read nowhere"


def test_the_listed_defaults_are_the_settings_defaults():
    defaults = settings_from_env({})
    for name, value in _example().items():
        if name in defaults:
            assert settings_from_env({name: value})[name] == defaults[name], name


def _flask_env(**extra) -> dict[str, str]:
    """This environment without the service's variables, so that only .env can give them,
    and without the tests' switch that keeps .env away (tests/conftest.py)."""
    listed = {*_example(), "FLASK_SKIP_DOTENV"}
    return {**{k: v for k, v in os.environ.items() if k not in listed}, **extra}


def test_the_flask_cli_reads_env_in_its_folder(tmp_path, wire_uri, wire_db):
    (tmp_path / ".env").write_text(f"MONGODB_URI={wire_uri}\nMONGODB_DB={wire_db.name}\n")

    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "db", "init"],
        cwd=tmp_path, env=_flask_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert "tokenHash" in str(wire_db.tokens.index_information())


def test_the_environment_wins_over_env(tmp_path):
    (tmp_path / ".env").write_text("MONGODB_DB=from/env-file\nMONGODB_TIMEOUT_MS=x\n")

    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "db", "--help"],
        cwd=tmp_path, env=_flask_env(MONGODB_TIMEOUT_MS="250"), capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip

    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: MONGODB_DB: 'from/env-file' is not a MongoDB database name."
    ]


def test_make_run_reads_env_in_its_folder(tmp_path, busy_port):
    """scripts/run.py takes PORT from .env: the busy port is refused before anything starts."""
    (tmp_path / ".env").write_text(f"PORT={busy_port}\nMONGODB_URI=mongodb://127.0.0.1:1/\n")

    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "run.py"), "dev"],
        cwd=tmp_path, env=_flask_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert result.returncode == 1
    assert f"Port {busy_port} on 127.0.0.1 is in use" in result.stderr


def test_flasks_switch_keeps_env_away_from_make_run_too(tmp_path, busy_port):
    """FLASK_SKIP_DOTENV, which `flask` obeys, is obeyed by scripts/run.py as well: the bad
    value in .env is never read, and the run stops at the busy port instead."""
    (tmp_path / ".env").write_text("EMBEDDED_DB_PORT=notaport\n")

    def run(**extra):
        return subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "run.py"), "dev"],
            cwd=tmp_path, env=_flask_env(PORT=str(busy_port), **extra), capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip

    assert "EMBEDDED_DB_PORT" in run().stderr
    skipped = run(FLASK_SKIP_DOTENV="1")
    assert skipped.returncode == 1
    assert f"Port {busy_port} on 127.0.0.1 is in use" in skipped.stderr


CONFIGURATION = ROOT / "docs" / "configuration.md"
ROW = re.compile(rf"\| `({NAME.pattern})` \| ([^|]+) \|")


def test_the_configuration_document_lists_each_variable_with_its_listed_default():
    """docs/configuration.md's tables, written from the code (scripts/reference.py), and
    `.env.example`, checked against the code above, name the same variables and defaults."""
    documented = {name: default.strip() for name, default in ROW.findall(CONFIGURATION.read_text())}
    expected = {name: f"`{value}`" if value else "unset" for name, value in _example().items()}
    assert documented == expected
