"""What the tests share besides fixtures: the servers they start, the data they build, and
the checks they repeat."""

from pathlib import Path

# Where commands run, as `make test` runs them.
ROOT = Path(__file__).resolve().parents[2]
