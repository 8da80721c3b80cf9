"""The anchors of a Markdown file, as GitHub makes them from its headings: what a link or a
citation after `#` must name (tests/tooling/test_docs_links.py, test_citations.py)."""

import re
from pathlib import Path

HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(path: Path) -> set[str]:
    """GitHub's: lowercase, punctuation other than `-` and `_` dropped, spaces as `-`."""
    text = FENCE.sub("", path.read_text())
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in HEADING.findall(text)
    }
