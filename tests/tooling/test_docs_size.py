"""The docs stay a half hour's read (docs/development.md#working-on-it): a README of at most
6 kB, and at most 100 kB with docs/ and its records. A fact that needs more room belongs in
a docstring or a schema, linked from here."""

from tests.support import ROOT


def test_the_readme_and_the_docs_stay_short():
    readme = (ROOT / "README.md").stat().st_size
    docs = sum(path.stat().st_size for path in (ROOT / "docs").rglob("*.md"))

    assert readme <= 6_000
    assert readme + docs <= 100_000
