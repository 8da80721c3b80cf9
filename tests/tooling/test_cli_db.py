"""`flask db init` and `flask db seed-demo`."""

import re
import stat

from commands import demo
from repositories.indexes import INDEXES
from tests.support.factories import bearer

TOKEN = re.compile(r"bcs_[A-Za-z0-9_-]{43}")


def _tokens(output: str) -> dict[str, str]:
    """{"member": token, ...} from seed-demo's output."""
    return dict(re.findall(r"^  (\w+): (bcs_\S+)$", output, re.MULTILINE))


def test_init_creates_every_index_and_can_run_again(runner, db):
    first = runner.invoke(args=["db", "init"])
    again = runner.invoke(args=["db", "init"])

    assert first.exit_code == again.exit_code == 0, first.output + again.output
    for collection, models in INDEXES.items():
        names = set(db[collection].index_information())
        assert {model.document["name"] for model in models} <= names
    assert db.bots.index_information()["slug_1"]["unique"] is True


def test_seed_demo_builds_a_realistic_data_set(runner, db):
    result = runner.invoke(args=["db", "seed-demo"])

    assert result.exit_code == 0, result.output
    assert db.organizations.count_documents({}) >= 3
    assert db.services.count_documents({}) >= 3
    assert db.users.count_documents({"role": "admin"}) >= 1
    assert db.bots.count_documents({"organization": None, "isPublic": True}) >= 10
    assert db.bots.count_documents({"organization": {"$ne": None}, "isPublic": False}) >= 4
    assert db.bots.count_documents({"tags.0": {"$exists": True}}) == db.bots.count_documents({})
    assert all(bot["inputs"] and bot["inputs"][0]["name"] for bot in db.bots.find())
    assert db.botrequests.count_documents({}) >= 200
    times = [request["createdAt"] for request in db.botrequests.find({}, {"createdAt": 1})]
    assert (max(times) - min(times)).days >= 21


def test_seed_demo_prints_three_working_tokens_once(runner, client, db):
    result = runner.invoke(args=["db", "seed-demo"])

    tokens = _tokens(result.output)
    assert set(tokens) == {"member", "admin", "organization"}
    member = client.get("/v1/bots/?limit=100", headers=bearer(tokens["member"]))
    assert member.status_code == 200
    assert any(bot["slug"].startswith("northwind-") for bot in member.get_json()["results"])
    assert client.get("/v1/requests/", headers=bearer(tokens["member"])).get_json()["totalResults"]
    admin = client.get("/v1/bots/blog-post-writer/", headers=bearer(tokens["admin"]))
    assert "isPublic" in admin.get_json()
    northwind = db.organizations.find_one({"name": "Northwind Traders"})["_id"]
    own = client.get(f"/v1/organizations/{northwind}/bots/", headers=bearer(tokens["organization"]))
    assert own.get_json()["totalResults"] >= 2
    for token in tokens.values():
        assert db.tokens.count_documents({"tokenHash": token}) == 0


def test_seed_demo_again_adds_nothing_and_keeps_the_tokens(runner, client, db):
    tokens = _tokens(runner.invoke(args=["db", "seed-demo"]).output)
    counts = {name: db[name].count_documents({}) for name in db.list_collection_names()}

    again = runner.invoke(args=["db", "seed-demo"])

    assert again.exit_code == 0, again.output
    assert not TOKEN.search(again.output)
    assert "The demo tokens exist already" in again.output
    assert {name: db[name].count_documents({}) for name in counts} == counts
    assert client.get("/v1/bots/", headers=bearer(tokens["member"])).status_code == 200


def test_seed_demo_keeps_documents_already_there(runner, db):
    runner.invoke(args=["db", "seed-demo"])
    db.bots.update_one({"slug": "blog-post-writer"}, {"$set": {"name": "Edited"}})

    runner.invoke(args=["db", "seed-demo"])

    assert db.bots.find_one({"slug": "blog-post-writer"})["name"] == "Edited"


def test_new_tokens_replace_the_old_ones(runner, client):
    old = _tokens(runner.invoke(args=["db", "seed-demo"]).output)

    new = _tokens(runner.invoke(args=["db", "seed-demo", "--new-tokens"]).output)

    assert set(new) == set(old) and not set(new.values()) & set(old.values())
    assert client.get("/v1/bots/", headers=bearer(old["member"])).status_code == 401
    assert client.get("/v1/bots/", headers=bearer(new["member"])).status_code == 200


def test_tokens_file_is_private_and_holds_the_tokens(runner, client, tmp_path):
    path = tmp_path / "var" / "demo-tokens.txt"

    result = runner.invoke(args=["db", "seed-demo", "--tokens-file", str(path)])

    assert result.exit_code == 0, result.output
    assert not TOKEN.search(result.output)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    values = dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    assert set(values) == {"MEMBER_TOKEN", "ADMIN_TOKEN", "ORGANIZATION_TOKEN"}
    assert client.get("/v1/bots/", headers=bearer(values["MEMBER_TOKEN"])).status_code == 200


def test_seed_demo_refuses_to_clash_with_existing_data(runner, db, world):
    world.bot("blog-post-writer")

    result = runner.invoke(args=["db", "seed-demo"])

    assert result.exit_code == 1
    assert "bots[0].slug: slug 'blog-post-writer' is already used" in result.output
    assert db.organizations.count_documents({}) == 0


def test_the_demo_data_file_is_a_db_load_file(runner, db):
    result = runner.invoke(args=["db", "load", str(demo.DATA_FILE)])

    assert result.exit_code == 0, result.output
    assert db.bots.count_documents({}) == 25
    assert db.botrequests.count_documents({}) == 0
