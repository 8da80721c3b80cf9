"""`flask db init` on a database shaped like a real one (wire server, `flask` as a process).

A real database is large, was indexed by its writer under the writer's own names, and holds
users without an email or sharing one. `db init` must build what is missing within its own
timeout, reuse what is there, and turn any conflict into one line and exit status 1.
"""

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bson import ObjectId

from repositories import change_images
from repositories.indexes import INDEXES
from tests.support import ROOT
from tests.support.wire_server import free_port

FLASK = Path(sys.executable).parent / "flask"
REQUESTS = 100_000
BATCH = 10_000
# Far below what an index build over REQUESTS documents takes on the wire server (seconds).
REQUEST_TIMEOUT_MS = "500"
# One of ours, which the writer made first under its own name.
WRITERS_REQUEST_INDEX = [("createdBy", 1), ("createdAt", -1), ("_id", -1), ("bot", 1)]
LINE = re.compile(r"^(\w+)\.(\S+): (built in \d+\.\d s|already there|reused .*|dropped: .*)$")


def flask_db(uri: str, db_name: str, *args: str, **settings) -> subprocess.CompletedProcess:
    """`flask db …` as the README writes it, from the project folder, where Flask finds the
    app in wsgi.py without `--app`."""
    environment = {**os.environ, "MONGODB_URI": uri, "MONGODB_DB": db_name, **settings}
    environment.pop("FLASK_APP", None)
    return subprocess.run(
        [str(FLASK), "db", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def outcomes(stdout: str) -> dict[str, str]:
    """{"collection.index": what was done} from the lines db init prints (its last two say
    how many indexes, and whether it turned the pre-images on)."""
    found = {}
    for line in stdout.splitlines()[:-2]:
        match = LINE.match(line)
        assert match, line
        found[f"{match[1]}.{match[2]}"] = match[3]
    return found


def _fill_requests(db) -> None:
    """Raw documents, as the writer stores them, in a few large inserts."""
    bots = [ObjectId() for _ in range(50)]
    users = [ObjectId() for _ in range(500)]
    organizations = [ObjectId() for _ in range(20)]
    start = dt.datetime(2025, 1, 1)
    for first in range(0, REQUESTS, BATCH):
        db.botrequests.insert_many(
            [
                {
                    "bot": bots[n % 50],
                    "createdBy": users[n % 500],
                    "organization": organizations[n % 20] if n % 3 else None,
                    "createdAt": start + dt.timedelta(seconds=n),
                    "updatedAt": start + dt.timedelta(seconds=n + 1),
                }
                for n in range(first, first + BATCH)
            ],
            ordered=False,
        )


def _fill_users(db) -> None:
    db.users.insert_many(
        [
            {"name": "No email"},
            {"name": "Null email", "email": None},
            {"name": "Shared one", "email": "team@example.com"},
            {"name": "Shared two", "email": "team@example.com"},
        ]
    )


@pytest.mark.slow
def test_init_on_a_real_sized_database_builds_past_the_request_timeout(wire_uri, wire_db):
    wire_db.tokens.create_index("tokenHash", name="writer_token_hash", unique=True)
    wire_db.botrequests.create_index(WRITERS_REQUEST_INDEX, name="writer_by_user")
    _fill_requests(wire_db)
    _fill_users(wire_db)

    first = flask_db(wire_uri, wire_db.name, "init", MONGODB_TIMEOUT_MS=REQUEST_TIMEOUT_MS)

    assert first.returncode == 0, first.stderr
    assert first.stderr == ""
    done = outcomes(first.stdout)
    assert list(done) == [f"{c}.{m.document['name']}" for c, ms in INDEXES.items() for m in ms]
    assert done["tokens.tokenHash_1"] == "reused the existing index 'writer_token_hash' (unique)"
    assert done["botrequests.createdBy_1_createdAt_-1__id_-1_bot_1"] == (
        "reused the existing index 'writer_by_user'"
    )
    assert done["users.email_1"].startswith("built in ")
    request_builds = [what for name, what in done.items() if name.startswith("botrequests.")]
    assert sum(what.startswith("built in") for what in request_builds) == (
        len(INDEXES["botrequests"]) - 1
    )
    assert "email_1" in wire_db.users.index_information()
    assert "unique" not in wire_db.users.index_information()["email_1"]

    again = flask_db(wire_uri, wire_db.name, "init", MONGODB_TIMEOUT_MS=REQUEST_TIMEOUT_MS)

    assert again.returncode == 0, again.stderr
    assert not any(what.startswith("built") for what in outcomes(again.stdout).values())
    assert outcomes(again.stdout)["tokens.tokenHash_1"] == done["tokens.tokenHash_1"]
    assert again.stdout.splitlines()[-2:] == [
        f"Indexes of {wire_db.name!r}: 2 reused, {len(done) - 2} already there.",
        "botrequests: pre-images for the live feeds already on.",
    ]


def test_init_turns_on_the_pre_images_of_the_live_feeds(wire_uri, wire_client):
    """On a database whose writer made `botrequests` without them, and on one without it."""
    names = [f"test_images_{ObjectId()}" for _ in range(2)]
    wire_client[names[0]].botrequests.insert_one({"status": "done"})
    try:
        results = [flask_db(wire_uri, name, "init") for name in names]
        kept = [change_images.kept(wire_client[name]) for name in names]
    finally:
        for name in names:
            wire_client.drop_database(name)

    assert [result.stdout.splitlines()[-1] for result in results] == [
        "botrequests: pre-images for the live feeds turned on."
    ] * 2
    assert kept == [True, True]


def test_init_reports_options_of_a_reused_index_and_creates_no_twin(wire_uri, wire_db):
    wire_db.bots.create_index("slug", name="writer_slug")
    wire_db.users.create_index("email", name="writer_email", sparse=True)

    result = flask_db(wire_uri, wire_db.name, "init")

    assert result.returncode == 0, result.stderr
    done = outcomes(result.stdout)
    assert done["bots.slug_1"] == "reused the existing index 'writer_slug' (not unique)"
    assert done["users.email_1"] == "reused the existing index 'writer_email' (sparse)"
    assert [i["name"] for i in wire_db.bots.list_indexes() if list(i["key"]) == ["slug"]] == [
        "writer_slug"
    ]


def test_init_drops_the_partial_indexes_an_earlier_run_made_and_no_other(wire_uri, wire_db):
    """The partial indexes of the windows an earlier db init made for page 1 (replaced:
    docs/decisions/2026-11-28-lists-as-pipelines.md); a writer's index of one of their names
    without their partial filter stays."""
    partial = {"createdAt": {"$type": ["timestamp", "regex"]}}
    wire_db.botrequests.create_index(
        [("createdAt", -1)], name="createdAt_above_dates", partialFilterExpression=partial
    )
    wire_db.botrequests.create_index([("updatedAt", 1)], name="updatedAt_below_dates")

    done = flask_db(wire_uri, wire_db.name, "init")

    assert done.returncode == 0, done.stderr
    assert outcomes(done.stdout)["botrequests.createdAt_above_dates"].startswith("dropped: ")
    assert "botrequests.updatedAt_below_dates" not in outcomes(done.stdout)
    names = set(wire_db.botrequests.index_information())
    assert "createdAt_above_dates" not in names and "updatedAt_below_dates" in names
    assert "dropped" in done.stdout.splitlines()[-2]  # the total counts it


def test_shared_and_missing_emails_do_not_stop_init(wire_uri, wire_db):
    _fill_users(wire_db)

    result = flask_db(wire_uri, wire_db.name, "init")

    assert result.returncode == 0, result.stderr
    assert outcomes(result.stdout)["users.email_1"].startswith("built in ")


def test_a_name_taken_on_other_keys_is_one_line_and_exit_status_1(wire_uri, wire_db):
    wire_db.tokens.create_index("label", name="tokenHash_1")

    result = flask_db(wire_uri, wire_db.name, "init")

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "Error: tokens.tokenHash_1: an index of this name exists with another definition "
        "(keys {'label': 1}); drop or rename it, then run db init again.",
        "1 index(es) could not be made.",
    ]
    assert outcomes(result.stdout)["bots.slug_1"].startswith("built in ")


def test_a_unique_index_over_duplicates_is_one_line_and_exit_status_1(wire_uri, wire_db):
    wire_db.bots.insert_many([{"slug": "twin"}, {"slug": "twin"}])

    result = flask_db(wire_uri, wire_db.name, "init")

    assert result.returncode == 1
    [line, _] = result.stderr.splitlines()
    assert line.startswith("Error: bots.slug_1: ") and "duplicate key" in line.lower()
    assert "Traceback" not in result.stdout + result.stderr


def test_an_unreachable_database_is_one_line_and_exit_status_1(wire_db):
    uri = f"mongodb://127.0.0.1:{free_port()}/?directConnection=true"

    result = flask_db(uri, wire_db.name, "init", MONGODB_TIMEOUT_MS="300")

    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: The database failed: ")
