"""docs/performance.md types no figure: each of its tables is written from bench/results/ by
`python -m bench.tables`, and this test fails while one of them and its results disagree."""

from bench import tables


def test_every_table_of_the_page_is_written_from_its_results():
    page = tables.PAGE.read_text()

    assert sorted(tables.regions(page)) == sorted(tables.TABLES), "each table placed once"
    assert tables.regenerated(page) == page, "run `python -m bench.tables` after a benchmark"
