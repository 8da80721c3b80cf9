"""docs/development.md#layout names every module: a newcomer who reads the table has seen
every file that holds code, each under its folder's row."""

import re

from tests.support import ROOT

FOLDERS = ("domain", "access", "web", "runtime", "blueprints", "schemas", "repositories",
           "commands", "bench", "tests/support", "scripts")  # fmt: skip


def _rows() -> dict[str, str]:
    """Each row of the layout table, by the path in its first cell."""
    text = (ROOT / "docs" / "development.md").read_text()
    table = text.split("## Layout", 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in table.splitlines()[2:]:
        path, holds = re.match(r"\| `([^`]+)` \| (.*) \|$", line).groups()
        rows[path.rstrip("/")] = holds
    return rows


def test_the_layout_table_names_every_module():
    rows = _rows()
    unnamed = [
        f"{folder}/{path.name}"
        for folder in FOLDERS
        for path in sorted((ROOT / folder).glob("*.py"))
        if path.name != "__init__.py"
        and f"{folder}/{path.name}" not in rows  # a row of its own
        and f"`{path.stem}`" not in rows.get(folder, "")
    ]
    top = [path.name for path in sorted(ROOT.glob("*.py")) if path.name not in rows]
    assert unnamed + top == []
