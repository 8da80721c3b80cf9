"""Every link between the README and docs/ (its folders too) leads somewhere: to a file that exists
and, after a `#`, to one of its headings, as GitHub makes their anchors. Moving a section moves its
links."""

import re
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.doc_anchors import FENCE, anchors

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _links(path: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(FENCE.sub("", path.read_text()))
        if not target.startswith(("http://", "https://", "mailto:"))
    ]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(document):
    broken = []
    for target in _links(document):
        file, _, anchor = target.partition("#")
        linked = (document.parent / file).resolve() if file else document
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)
    assert broken == []
