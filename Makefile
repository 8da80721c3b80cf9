# Thin aliases; the README explains each target. Orchestration lives in scripts/run.py.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run serve db test lint format clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The API on http://127.0.0.1:5000 (Flask's dev server) over the embedded database.
run: $(STAMP)
	$(BIN)/python scripts/run.py dev

# The same behind gunicorn (gunicorn.conf.py), as in production.
serve: $(STAMP)
	$(BIN)/python scripts/run.py serve

# The embedded database alone.
db: $(STAMP)
	$(BIN)/python scripts/run.py db

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache *.egg-info build dist
