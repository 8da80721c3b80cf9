"""What the command-line tests share."""

import pytest


@pytest.fixture
def db(wire_db):
    """The wire server alone: mongomock's bulk_write takes no ReplaceOne or UpdateOne from
    pymongo 4.11 on (mongomock issue 912), and `db load` and `seed-demo` write with them."""
    return wire_db


@pytest.fixture
def runner(app):
    """The `flask` command line of the test's app."""
    return app.test_cli_runner()
