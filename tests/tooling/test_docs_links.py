"""Every link between the README and docs/ leads somewhere: to a file that exists and, after a
`#`, to one of its headings, as GitHub makes their anchors. Moving a section moves its links."""

import re
from pathlib import Path

import pytest

from tests.support import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _anchors(path: Path) -> set[str]:
    """GitHub's: lowercase, punctuation other than `-` and `_` dropped, spaces as `-`."""
    text = FENCE.sub("", path.read_text())
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in HEADING.findall(text)
    }


def _links(path: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(FENCE.sub("", path.read_text()))
        if not target.startswith(("http://", "https://", "mailto:"))
    ]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_leads_to_a_file_and_heading(document):
    broken = []
    for target in _links(document):
        file, _, anchor = target.partition("#")
        linked = (document.parent / file).resolve() if file else document
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(target)
    assert broken == []
