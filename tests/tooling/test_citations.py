"""Every rule the code, the tests and the docs cite is a place in this repository
(`docs/api.md#keyset-pages`), never a numbered section of a document a maintainer cannot open
(docs/decisions/readings.md says how the service reads that document)."""

import re
import subprocess

from tests.support import ROOT
from tests.support.doc_anchors import anchors

# The word contract, a section sign or the word section, then a number: an outside document's.
OUTSIDE = re.compile(r"[Cc]ontract,? (?:section |§ ?)?\d|§ ?\d|\b[Ss]ection \d")


def _tracked(*patterns: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return listed.stdout.split()


def test_no_line_cites_a_numbered_section_of_an_outside_document():
    cited = [
        f"{path}:{number}: {line.strip()}"
        for path in _tracked("*.py", "*.md", "Makefile", "*.toml", "*.cfg", "*.yaml")
        for number, line in enumerate((ROOT / path).read_text().splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert cited == []


# A place in the docs as code cites it: docs/api.md#keyset-pages.
PLACE = re.compile(r"\b(docs/[\w/.-]+\.md)((?:#[\w-]+)?)")


def test_every_place_the_code_cites_exists():
    missing = []
    for path in _tracked("*.py"):
        for number, line in enumerate((ROOT / path).read_text().splitlines(), 1):
            for document, anchor in PLACE.findall(line):
                target = ROOT / document
                if not target.exists() or (anchor and anchor[1:] not in anchors(target)):
                    missing.append(f"{path}:{number}: {document}{anchor}")
    assert missing == []
