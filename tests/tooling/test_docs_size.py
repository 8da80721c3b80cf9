"""The docs stay a half hour's read (docs/development.md#working-on-it): a README of at most
6 kB, and at most 100 kB of hand-written prose with docs/ and its records. A fact that needs
more room belongs in a docstring or a schema, linked from here. What is written from the code
(scripts/reference.py's regions, docs/openapi.json) is reference, not counted."""

from scripts.reference import without_regions
from tests.support import ROOT


def _written_by_hand(path) -> int:
    return len(without_regions(path.read_text()).encode())


def test_the_readme_and_the_docs_stay_short():
    readme = _written_by_hand(ROOT / "README.md")
    docs = sum(_written_by_hand(path) for path in (ROOT / "docs").rglob("*.md"))

    assert readme <= 6_000
    assert readme + docs <= 100_000
