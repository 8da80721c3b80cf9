# Thin aliases, each explained in docs/development.md#make-targets. Orchestration lives in
# scripts/run.py.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed

.PHONY: install run serve db reset-db test test-slow test-fast lint format docs clean bench bench-scale bench-load \
	bench-caches bench-instructions soak wrk

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# spectral and redocly (package.json), which lint the OpenAPI document in the tests, and the MCP
# Inspector with the Node 22 it needs; those tests skip where there is no npm. --ignore-scripts: no install script runs (one only reports usage).
$(NODE_STAMP): package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --ignore-scripts --no-audit --no-fund && touch $@; \
	else echo "npm not found: the OpenAPI lint test will skip (Debian: apt-get install npm)"; fi

install: $(STAMP) $(NODE_STAMP)

# The API on http://127.0.0.1:5000 (Flask's dev server) over the embedded database.
run: $(STAMP)
	$(BIN)/python scripts/run.py dev

# The same behind gunicorn (gunicorn.conf.py), as in production.
serve: $(STAMP)
	$(BIN)/python scripts/run.py serve

# The embedded database alone.
db: $(STAMP)
	$(BIN)/python scripts/run.py db

# The embedded database's data and its demo tokens, nothing else (not .venv, as `make clean`).
reset-db: $(STAMP)
	$(BIN)/python scripts/run.py reset-db

# One pytest worker more than the cores (at most 5), with work stealing, so that no worker ends
# the run alone with a queue of long tests, and a worker waiting on a server's answer leaves no
# core idle. The load tests hold under that starvation: admission judges a stall by the
# database's replies too (docs/decisions/2026-11-29-busy-or-stalled.md).
TEST_WORKERS := $(shell $(PYTHON) -c 'import os; print(min((len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1) + 1, 5))')
PYTEST := $(BIN)/python -m pytest --numprocesses=$(TEST_WORKERS) --dist=worksteal --durations=10

# Everything but the tests marked slow, which `test-slow` runs; CI runs both (.ci/run).
test: $(STAMP) $(NODE_STAMP)
	$(PYTEST) -m "not slow"

test-slow: $(STAMP)
	$(PYTEST) -m slow

# The inner loop: unit and API tests on mongomock only; no server, gunicorn or browser.
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests/unit tests/integration tests/api -m "not wire and not browser"

# Load test over generated data (docs/performance.md); needs wrk, and says how to install it.
bench: $(STAMP) wrk
	$(BIN)/python -m bench.run

# Minutes of mixed traffic: errors, memory over time, tokens in the server log (bench/soak.py).
soak: $(STAMP) wrk
	$(BIN)/python -m bench.soak

wrk:
	@command -v wrk >/dev/null || { echo "needs wrk: apt-get install wrk (Debian, as root)"; exit 1; }

# Page-1 and deep-page latency as the requests grow (BENCH_SIZES, default 20000,200000).
bench-scale: $(STAMP)
	$(BIN)/python -m bench.scale

# How soon the catalogue cache serves a slow list after a start and a rename (bench/caches.py).
bench-caches: $(STAMP)
	$(BIN)/python -m bench.caches

# Instructions per cached bot by slug, the app's against bare Flask's (bench/instructions.py).
bench-instructions: $(STAMP)
	@command -v valgrind >/dev/null || { echo "needs valgrind: apt-get install valgrind (Debian, as root)"; exit 1; }
	$(BIN)/python -m bench.instructions

# How long `flask db load` takes on an export of BENCH_DOCUMENTS (50000), then `db init`.
bench-load: $(STAMP)
	$(BIN)/python -m bench.load

# docs/openapi.json and the docs' generated regions, written from the code (scripts/reference.py).
docs: $(STAMP)
	$(BIN)/python -m scripts.reference

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) node_modules var .pytest_cache .ruff_cache *.egg-info build dist
