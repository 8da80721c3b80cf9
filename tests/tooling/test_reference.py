"""The facts the code holds are written into the docs from the code (scripts/reference.py,
`make docs`): this test fails while docs/openapi.json or a generated region of a page and the
code disagree, and shows that each region follows what it is written from."""

import json

import pytest
from pymongo import IndexModel

from repositories import indexes
from runtime import config
from scripts import reference
from web import errors, metrics, rate_limits


@pytest.fixture(scope="module")
def served():
    return reference.served_openapi()


def test_the_openapi_file_is_the_served_document_and_is_openapi_3_1(served):
    assert json.loads(reference.OPENAPI_FILE.read_text()) == served, "run `make docs`"
    assert served["openapi"].startswith("3.1.")


def test_every_region_is_placed_once_and_as_the_code_writes_it():
    placed = []
    for page in reference.pages():
        text = page.read_text()
        placed += reference.regions(text)
        assert reference.regenerated(text) == text, f"{page.name}: run `make docs`"
    assert sorted(placed) == sorted(reference.REGIONS)


def test_a_default_changed_in_the_code_changes_the_settings_table(monkeypatch):
    before = reference.app_settings()
    changed = {**config.settings_from_env({}), "MONGODB_TIMEOUT_MS": 7000}
    monkeypatch.setattr(config, "settings_from_env", lambda environ: changed)

    after = reference.app_settings()
    assert "| `MONGODB_TIMEOUT_MS` | `5000` |" in before
    assert "| `MONGODB_TIMEOUT_MS` | `7000` |" in after


def test_a_server_default_changed_in_the_code_changes_its_table(monkeypatch):
    changed = {**config.server_settings_from_env({}), "GUNICORN_WORKERS": 3}
    monkeypatch.setattr(config, "server_settings_from_env", lambda environ: changed)

    assert "| `GUNICORN_WORKERS` | `3` |" in reference.server_settings()


def test_a_metrics_labels_are_read_from_the_metric(monkeypatch):
    assert "`botcatalogue_rate_limited_total{limit}`" in reference.metrics()
    monkeypatch.setattr(metrics.RATE_LIMITED, "_labelnames", ("limit", "scope"))

    assert "`botcatalogue_rate_limited_total{limit,scope}`" in reference.metrics()


def test_a_problem_type_added_in_the_code_is_listed(monkeypatch):
    monkeypatch.setitem(errors.TITLES, 409, "Conflict")
    monkeypatch.setitem(errors.NOTES, 409, "a write that lost a race")

    assert "| `conflict` | Conflict | 409 | a write that lost a race |" in reference.problem_types()


def test_a_rate_limit_policy_follows_its_setting(monkeypatch):
    changed = {**config.settings_from_env({}), "RATELIMIT_FEED": "10 per hour"}
    monkeypatch.setattr(config, "settings_from_env", lambda environ: changed)
    monkeypatch.setitem(rate_limits.POLICIES, "usage", ("RATELIMIT_EXPORT", "usage summaries"))

    table = reference.rate_limit_policies()
    assert "| `feed` | `RATELIMIT_FEED` | `10 per hour` |" in table
    assert "| `usage` | `RATELIMIT_EXPORT` | `30 per hour` | usage summaries |" in table


def test_an_index_added_in_the_code_is_listed(monkeypatch):
    added = IndexModel([("label", 1)], unique=True)
    monkeypatch.setitem(indexes.INDEXES, "tokens", [*indexes.INDEXES["tokens"], added])

    assert "| tokens | `label_1` | `{label: 1}` | unique |" in reference.indexes()


def test_every_variable_the_app_reads_has_a_meaning():
    read = set(config.settings_from_env({})) - {"TRACING"}
    assert read <= set(config.MEANINGS) | set(config.SERVER_MEANINGS)
    assert set(config.SDK_DEFAULTS) <= set(config.MEANINGS)


def test_a_log_record_added_in_the_code_is_listed(monkeypatch, tmp_path):
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "quotas.py").write_text(
        "import logging\n\nlog = logging.getLogger(__name__)\n\n\n"
        "def spent(n):\n    log.warning('quota spent by %s callers', n)\n"
    )
    monkeypatch.setattr(reference, "ROOT", tmp_path)

    assert reference.log_records().splitlines()[2:] == [
        "| `web.quotas` | WARNING | `quota spent by <…> callers` |"
    ]
