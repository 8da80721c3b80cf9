"""`flask db load`: valid files are upserted; any bad document means nothing is written."""

import datetime as dt
import json

import pymongo
import pytest
from bson import Decimal128, ObjectId, json_util

from app import create_app
from commands import load_writes
from runtime.bearer_tokens import hash_token
from tests.conftest import TEST_SETTINGS
from tests.support.command_log import CommandLog
from tests.support.factories import bearer

ORG = "65a000000000000000000001"
USER = "65a000000000000000000002"
SERVICE = "65a000000000000000000003"
TAG = "65a000000000000000000004"
BOT = "65a000000000000000000005"
REQUEST = "65a000000000000000000006"
TOKEN = "65a000000000000000000007"
RAW_TOKEN = "bcs_loaded-token-for-tests"


def oid(hex_id: str) -> dict:
    return {"$oid": hex_id}


def date(iso: str) -> dict:
    return {"$date": iso}


def valid_data() -> dict:
    """A small, complete data set in MongoDB Extended JSON."""
    return {
        "organizations": [{"_id": oid(ORG), "name": "Acme"}],
        "users": [
            {
                "_id": oid(USER),
                "name": "Ada",
                "email": "ada@acme.example",
                "role": "user",
                "organizations": [oid(ORG)],
            }
        ],
        "tokens": [
            {
                "_id": oid(TOKEN),
                "tokenHash": hash_token(RAW_TOKEN),
                "kind": "user",
                "user": oid(USER),
                "label": "loaded",
                "createdAt": date("2026-01-01T00:00:00Z"),
            }
        ],
        "services": [{"_id": oid(SERVICE), "name": "Writing", "slug": "writing"}],
        "tags": [{"_id": oid(TAG), "name": "SEO"}],
        "bots": [
            {
                "_id": oid(BOT),
                "slug": "acme-writer",
                "name": "Acme Writer",
                "description": "Writes for Acme.",
                "creditCost": {"$numberDecimal": "2.5"},
                "modelKey": "gpt-4o",
                "applyToApi": True,
                "inputs": [{"name": "topic", "type": "text", "required": True}],
                "isPublic": False,
                "organization": oid(ORG),
                "service": oid(SERVICE),
                "tags": [oid(TAG)],
                "createdAt": date("2026-01-01T00:00:00Z"),
                "updatedAt": date("2026-01-02T00:00:00Z"),
            }
        ],
        "botrequests": [
            {
                "_id": oid(REQUEST),
                "bot": oid(BOT),
                "createdBy": oid(USER),
                "organization": oid(ORG),
                "inputs": {"topic": "Spring"},
                "response": {"message": "Done"},
                "ip": "203.0.113.9",
                "createdAt": date("2026-01-03T00:00:00.123Z"),
                "updatedAt": date("2026-01-03T00:00:01Z"),
            }
        ],
    }


@pytest.fixture
def write(tmp_path):
    def write(data, name="data.json"):
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        return str(path)

    return write


def snapshot(db) -> dict:
    return {
        name: sorted(db[name].find(), key=lambda document: str(document["_id"]))
        for name in sorted(db.list_collection_names())
    }


def test_loads_extended_json_and_serves_it(runner, write, db, client):
    result = runner.invoke(args=["db", "load", write(valid_data())])

    assert result.exit_code == 0, result.output
    assert "bots: 1 new, 0 replaced" in result.output
    bot = db.bots.find_one({"_id": ObjectId(BOT)})
    assert bot["creditCost"] == Decimal128("2.5")
    assert bot["createdAt"] == dt.datetime(2026, 1, 1)
    response = client.get("/v1/requests/", headers=bearer(RAW_TOKEN))
    assert response.status_code == 200
    [item] = response.get_json()["results"]
    assert item["id"] == REQUEST
    assert item["bot"] == {"creditCost": 2.5, "name": "Acme Writer", "slug": "acme-writer"}
    assert item["createdAt"] == "2026-01-03T00:00:00.123Z"


def test_plain_json_ids_and_timestamps_become_bson_types(runner, write, db):
    data = {
        "organizations": [{"_id": ORG, "name": "Acme"}],
        "bots": [
            {
                "_id": BOT,
                "slug": "plain",
                "name": "Plain",
                "creditCost": 1,
                "isPublic": True,
                "organization": ORG,
                "createdAt": "2026-01-01T01:00:00+01:00",
                "updatedAt": "2026-01-01T00:00:00",
            }
        ],
    }

    result = runner.invoke(args=["db", "load", write(data)])

    assert result.exit_code == 0, result.output
    bot = db.bots.find_one({"_id": ObjectId(BOT)})
    assert bot["organization"] == ObjectId(ORG)
    assert bot["createdAt"] == bot["updatedAt"] == dt.datetime(2026, 1, 1)
    assert (bot["tags"], bot["inputs"], bot["applyToApi"]) == ([], [], False)


def test_loading_again_replaces_by_id_without_duplicates(runner, write, db):
    runner.invoke(args=["db", "load", write(valid_data())])
    data = valid_data()
    data["bots"][0]["name"] = "Renamed"
    data["bots"][0]["extra"] = "kept"

    result = runner.invoke(args=["db", "load", write(data)])

    assert result.exit_code == 0, result.output
    assert "bots: 0 new, 1 replaced" in result.output
    assert db.bots.count_documents({}) == 1
    bot = db.bots.find_one()
    assert (bot["name"], bot["extra"]) == ("Renamed", "kept")


def test_references_resolve_across_files_and_to_the_database(runner, write, db):
    data = valid_data()
    organizations = {"organizations": data.pop("organizations")}
    runner.invoke(args=["db", "load", write(organizations, "orgs.json")])
    users = {"users": data.pop("users")}

    result = runner.invoke(args=["db", "load", write(users, "users.json"), write(data)])

    assert result.exit_code == 0, result.output
    assert db.botrequests.count_documents({}) == 1


def _set(collection, index, field, value):
    def change(data):
        data[collection][index][field] = value

    return change


def _add(collection, document):
    def change(data):
        data[collection].append(document)

    return change


BAD_DATA = {
    "wrong type": (_set("bots", 0, "creditCost", "3"), "bots[0].creditCost: Not a valid number."),
    "boolean as number": (
        _set("bots", 0, "isPublic", 1),
        "bots[0].isPublic: Not a valid boolean",
    ),
    "missing required field": (
        _set("organizations", 0, "name", None),
        "organizations[0].name: Field may not be null.",
    ),
    "malformed id in a list": (
        _set("bots", 0, "tags", [oid(TAG), "nope"]),
        "bots[0].tags[1]: Not a valid id",
    ),
    "bad timestamp": (
        _set("botrequests", 0, "createdAt", "yesterday"),
        "botrequests[0].createdAt: Not a valid timestamp",
    ),
    "unknown role": (_set("users", 0, "role", "root"), "users[0].role: Must be one of"),
    "token without its user": (
        _set("tokens", 0, "user", None),
        "tokens[0].user: Required for a token of kind 'user'.",
    ),
    "ip not a string": (
        _set("botrequests", 0, "ip", 203),
        "botrequests[0].ip: Not a valid string.",
    ),
    "duplicate slug": (
        _add("bots", {**valid_data()["bots"][0], "_id": oid("65a0000000000000000000b2")}),
        "bots[1].slug: Duplicate slug 'acme-writer'; also at",
    ),
    "duplicate token hash": (
        _add("tokens", {**valid_data()["tokens"][0], "_id": oid("65a0000000000000000000c2")}),
        "tokens[1].tokenHash: Duplicate tokenHash",
    ),
    "duplicate id": (
        _add("tags", {"_id": oid(TAG), "name": "Again"}),
        "tags[1]._id: Duplicate _id",
    ),
    "document not an object": (_add("tags", "SEO"), "tags[1]: Expected a document"),
    "bad slug for a path": (
        _set("bots", 0, "slug", "a/b"),
        "bots[0].slug: Must be letters, digits",
    ),
}


@pytest.mark.parametrize("change, message", BAD_DATA.values(), ids=BAD_DATA.keys())
def test_an_invalid_document_is_reported_and_nothing_is_written(runner, write, db, change, message):
    data = valid_data()
    change(data)
    before = snapshot(db)

    result = runner.invoke(args=["db", "load", write(data)])

    assert result.exit_code == 1
    assert message in result.output
    assert "Nothing was written" in result.output
    assert snapshot(db) == before


BAD_FILES = {
    "invalid JSON": ('{"bots": [', "data.json: Invalid JSON: "),
    "NaN is not JSON": (
        json.dumps(valid_data()).replace(
            '"creditCost": {"$numberDecimal": "2.5"}', '"creditCost": NaN'
        ),
        "data.json: Invalid JSON: NaN is not valid JSON",
    ),
    "unknown collection": (
        json.dumps({**valid_data(), "robots": []}),
        "data.json: robots: Unknown collection; expected one of: organizations",
    ),
    "not an object": ("[]", "data.json: Invalid file: expected an object of collections."),
    "collection not a list": (
        json.dumps({**valid_data(), "tags": {"_id": TAG}}),
        "data.json: tags: Expected a list of documents.",
    ),
    "malformed $oid": ('{"tags": [{"_id": {"$oid": "zz"}, "name": "x"}]}', "Invalid JSON: "),
}


@pytest.mark.parametrize("text, message", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_bad_file_is_reported_and_nothing_is_written(runner, write, db, text, message):
    good = write(valid_data(), "good.json")
    before = snapshot(db)

    result = runner.invoke(args=["db", "load", good, write(text)])

    assert result.exit_code == 1
    assert message in result.output
    assert snapshot(db) == before


def test_a_slug_taken_in_the_database_is_a_duplicate(runner, write, db, world):
    world.bot("acme-writer")
    before = snapshot(db)

    result = runner.invoke(args=["db", "load", write(valid_data())])

    assert result.exit_code == 1
    assert "bots[0].slug: slug 'acme-writer' is already used in the database" in result.output
    assert snapshot(db) == before


def test_every_problem_is_reported_with_collection_index_and_field(runner, write):
    data = valid_data()
    data["bots"][0]["creditCost"] = "free"
    data["bots"][0]["slug"] = "a b"
    data["users"][0]["email"] = "not an email"

    result = runner.invoke(args=["db", "load", write(data), write("{", "broken.json")])

    lines = result.output.splitlines()
    assert any(
        line.endswith("data.json: users[0].email: Not a valid email address.") for line in lines
    )
    assert any("data.json: bots[0].creditCost: Not a valid number." in line for line in lines)
    assert any("data.json: bots[0].slug: Must be letters, digits" in line for line in lines)
    assert any("broken.json: Invalid JSON" in line for line in lines)
    assert "Nothing was written: 4 problem(s) found." in result.output


def test_an_unreadable_file_is_a_problem_not_a_traceback(runner, tmp_path):
    result = runner.invoke(args=["db", "load", str(tmp_path / "missing.json")])

    assert result.exit_code == 1
    assert "missing.json: Cannot read the file" in result.output


def test_extended_json_round_trip_of_a_dump(runner, write, db, world):
    """A file written by `mongoexport`-style Extended JSON dumps loads back as it was."""
    organization = world.organization("Dumped")
    dump = json_util.dumps({"organizations": list(db.organizations.find())})
    db.organizations.delete_many({})

    result = runner.invoke(args=["db", "load", write(dump)])

    assert result.exit_code == 0, result.output
    assert db.organizations.find_one()["_id"] == organization


def test_references_to_documents_that_exist_nowhere_are_loaded_with_a_warning(
    runner, write, db, client
):
    data = valid_data()
    data["botrequests"][0]["bot"] = oid("65a0000000000000000000ff")
    data["botrequests"][0]["createdBy"] = oid("65a0000000000000000000fe")
    data["users"][0]["organizations"] = [oid(ORG), oid("65a0000000000000000000fd")]
    data["bots"][0]["tags"] = [oid("65a0000000000000000000fc"), oid("65a0000000000000000000fb")]

    result = runner.invoke(args=["db", "load", write(data)])

    assert result.exit_code == 0, result.output
    assert (
        "Warning: 5 reference(s) to documents in neither the load nor the database (deleted "
        "data?), loaded as they are: botrequests.bot 1, botrequests.createdBy 1, bots.tags 2, "
        "users.organizations 1."
    ) in result.output
    assert db.botrequests.find_one()["bot"] == ObjectId("65a0000000000000000000ff")
    [item] = client.get("/v1/requests/", headers=bearer(RAW_TOKEN)).get_json()["results"]
    assert (item["bot"], item["createdBy"]) == (None, None)


def test_references_resolved_by_the_load_or_the_database_are_no_warning(runner, write, db):
    data = valid_data()
    runner.invoke(args=["db", "load", write({"tags": data.pop("tags")}, "tags.json")])

    result = runner.invoke(args=["db", "load", write(data)])

    assert result.exit_code == 0, result.output
    assert "Warning" not in result.output


def test_users_may_share_an_email_or_have_none(runner, write, db):
    data = valid_data()
    data["users"] += [
        {"_id": oid("65a0000000000000000000e2"), "name": "Bo", "email": "ada@acme.example"},
        {"_id": oid("65a0000000000000000000e3"), "name": "Cy"},
        {"_id": oid("65a0000000000000000000e4"), "name": "Di", "email": None},
    ]

    result = runner.invoke(args=["db", "load", write(data)])

    assert result.exit_code == 0, result.output
    assert db.users.count_documents({"email": "ada@acme.example"}) == 2


@pytest.mark.parametrize("ip", ["unknown", "203.0.113.9, 10.0.0.1", "[2001:db8::1]:443", ""])
def test_ip_is_any_string(runner, write, db, client, ip):
    data = valid_data()
    data["botrequests"][0]["ip"] = ip

    result = runner.invoke(args=["db", "load", write(data)])

    assert result.exit_code == 0, result.output
    [item] = client.get("/v1/requests/", headers=bearer(RAW_TOKEN)).get_json()["results"]
    assert item["ip"] == ip


def _tags(count: int) -> list[dict]:
    return [{"_id": oid(f"65b{n:021x}"), "name": f"tag {n}"} for n in range(count)]


def test_documents_are_written_in_ordered_batches(write, wire_uri, wire_db):
    log = CommandLog()
    client = pymongo.MongoClient(wire_uri, event_listeners=[log])
    app = create_app({**TEST_SETTINGS, "MONGODB_DB": wire_db.name}, mongo_client=client)
    path = write({"tags": _tags(load_writes.BATCH_SIZE * 2 + 1)})

    result = app.test_cli_runner().invoke(args=["db", "load", path])
    client.close()

    assert result.exit_code == 0, result.output
    writes = [command for command in log.take() if command.get("update") == "tags"]
    assert [len(command["updates"]) for command in writes] == [load_writes.BATCH_SIZE] * 2 + [1]
    assert all(command["ordered"] for command in writes)
    assert wire_db.tags.count_documents({}) == load_writes.BATCH_SIZE * 2 + 1


def test_a_write_refused_midway_says_which_documents_were_written(runner, write, db, monkeypatch):
    """A unique index of the writer's that the load's checks know nothing of."""
    monkeypatch.setattr(load_writes, "BATCH_SIZE", 2)
    db.tags.create_index("name", unique=True)
    db.tags.insert_one({"name": "tag 2"})
    data = valid_data()
    data["tags"] = _tags(5)
    data["bots"][0]["tags"] = []
    path = write(data)

    result = runner.invoke(args=["db", "load", path])

    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    lines = result.output.splitlines()
    assert lines[0].startswith("Error: the database failed during the load: ")
    assert "duplicate key" in lines[0].lower()
    assert lines[1:] == [
        "organizations: all 1 written.",
        "users: all 1 written.",
        "tokens: all 1 written.",
        "services: all 1 written.",
        f"tags: 2 of 5 written, up to {path}: tags[1]; {path}: tags[2] was refused, "
        "nothing after it was written.",
        "Not written at all: bots, botrequests.",
    ]
    assert sorted(tag["name"] for tag in db.tags.find()) == ["tag 0", "tag 1", "tag 2"]
    assert db.bots.count_documents({}) == 0


FAULTS = {
    "connection lost": {"closeConnection": True},
    "write concern not met": {"writeConcernError": {"code": 64, "errmsg": "waiting timed out"}},
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_a_batch_in_doubt_says_which_documents_may_be_written(
    write, wire_uri, wire_db, wire_client, monkeypatch, fault
):
    """The command line's own client (appname bot-catalogue) fails on the second batch, and
    again on the driver's retry."""
    monkeypatch.setattr(load_writes, "BATCH_SIZE", 2)
    settings = {**TEST_SETTINGS, "MONGODB_URI": wire_uri, "MONGODB_DB": wire_db.name}
    app = create_app(settings)
    path = write({"tags": _tags(5)})
    failure = {"failCommands": ["update"], "appName": "bot-catalogue", **fault}
    try:
        wire_client.admin.command(
            "configureFailPoint", "failCommand", mode={"skip": 1, "times": 2}, data=failure
        )
    except pymongo.errors.OperationFailure as error:
        pytest.skip(f"This server takes no failpoint: {error.details.get('errmsg')}")
    try:
        result = app.test_cli_runner().invoke(args=["db", "load", path])
    finally:
        wire_client.admin.command("configureFailPoint", "failCommand", mode="off")
        app.extensions["mongo_admin"].close()

    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    assert result.output.startswith("Error: the database failed during the load: ")
    assert result.output.splitlines()[1:] == [
        f"tags: 2 of 5 written; {path}: tags[2] to {path}: tags[3] may be partly written, "
        "nothing after them was."
    ]
    assert wire_db.tags.count_documents({"name": "tag 4"}) == 0
