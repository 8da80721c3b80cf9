"""`flask tokens issue|list|revoke`: shown once, stored as a hash, listed without secrets."""

import datetime as dt

import pytest

from runtime.bearer_tokens import hash_token
from tests.support.factories import bearer


@pytest.fixture
def acme(world):
    return world.organization("Acme")


@pytest.fixture
def ada(db, world, acme):
    user = world.user("Ada", organizations=[acme])
    db.users.update_one({"_id": user}, {"$set": {"email": "ada@acme.example"}})
    return user


def _issue(runner, *args) -> str:
    result = runner.invoke(args=["tokens", "issue", *args])
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


@pytest.mark.parametrize("reference", ["id", "email", "email in capitals"])
def test_issue_for_a_user_prints_a_working_token_and_stores_only_its_hash(
    runner, client, db, ada, reference
):
    given = {"id": str(ada), "email": "ada@acme.example", "email in capitals": "ADA@acme.example"}

    token = _issue(runner, "--user", given[reference], "--label", "laptop")

    assert token.startswith("bcs_") and len(token) >= 40
    stored = db.tokens.find_one()
    assert (stored["kind"], stored["user"], stored["label"]) == ("user", ada, "laptop")
    assert stored["tokenHash"] == hash_token(token)
    assert token not in str(stored)
    assert client.get("/v1/requests/", headers=bearer(token)).status_code == 200


@pytest.mark.parametrize("reference", ["id", "name"])
def test_issue_for_an_organization(runner, client, acme, reference):
    token = _issue(runner, "--organization", str(acme) if reference == "id" else "acme")

    response = client.get(f"/v1/organizations/{acme}/bots/", headers=bearer(token))
    assert response.status_code == 200


def test_each_token_is_new(runner, ada):
    assert _issue(runner, "--user", str(ada)) != _issue(runner, "--user", str(ada))


def test_expires_in_days(runner, db, ada):
    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)

    _issue(runner, "--user", str(ada), "--expires-in", "3")

    expires = db.tokens.find_one()["expiresAt"]
    assert abs(expires - before - dt.timedelta(days=3)) < dt.timedelta(minutes=1)


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "Give exactly one of --user and --organization."),
        (["--user", "x", "--organization", "y"], "Give exactly one of"),
        (["--user", "nobody@acme.example"], "No user matches 'nobody@acme.example'."),
        (["--organization", "Nope"], "No organization matches 'Nope'."),
        (["--user", "a", "--expires-in", "0"], "Invalid value for '--expires-in'"),
    ],
)
def test_issue_refuses_bad_arguments(runner, db, ada, args, message):
    result = runner.invoke(args=["tokens", "issue", *args])

    assert result.exit_code in (1, 2)
    assert message in result.output
    assert db.tokens.count_documents({}) == 0


def test_issue_refuses_an_ambiguous_organization_name(runner, world, acme):
    world.organization("ACME")

    result = runner.invoke(args=["tokens", "issue", "--organization", "acme"])

    assert result.exit_code == 1
    assert "2 organizations match 'acme'" in result.output
    assert "use the id" in result.output


def test_list_shows_tokens_without_secrets(runner, db, ada, acme):
    user_token = _issue(runner, "--user", str(ada), "--label", "laptop")
    org_token = _issue(runner, "--organization", str(acme), "--expires-in", "30")

    result = runner.invoke(args=["tokens", "list"])

    assert result.exit_code == 0, result.output
    header, *rows = result.output.splitlines()
    assert header.split() == ["ID", "KIND", "OWNER", "LABEL", "CREATED", "EXPIRES", "REVOKED"]
    assert len(rows) == 2
    user_id, org_id = (str(token["_id"]) for token in db.tokens.find().sort("createdAt", 1))
    assert rows[0].startswith(user_id) and "Ada <ada@acme.example>" in rows[0]
    assert "laptop" in rows[0]
    assert rows[1].startswith(org_id) and "organization  Acme" in rows[1]
    for secret in (user_token, org_token, hash_token(user_token), hash_token(org_token)):
        assert secret not in result.output


def test_revoke_stops_a_token_at_once(runner, client, db, ada):
    token = _issue(runner, "--user", str(ada))
    token_id = str(db.tokens.find_one()["_id"])

    result = runner.invoke(args=["tokens", "revoke", token_id])

    assert result.exit_code == 0, result.output
    assert f"Token {token_id} revoked: every worker refuses it within a second." in result.output
    assert db.tokens.find_one()["revokedAt"] is not None
    assert client.get("/v1/requests/", headers=bearer(token)).status_code == 401
    listed = runner.invoke(args=["tokens", "list"]).output.splitlines()[1]
    assert listed.split()[-1] != "-"


def test_revoking_twice_keeps_the_first_time(runner, db, ada):
    _issue(runner, "--user", str(ada))
    token_id = str(db.tokens.find_one()["_id"])
    runner.invoke(args=["tokens", "revoke", token_id])
    first = db.tokens.find_one()["revokedAt"]

    result = runner.invoke(args=["tokens", "revoke", token_id])

    assert result.exit_code == 0
    assert "was already revoked at" in result.output
    assert db.tokens.find_one()["revokedAt"] == first


@pytest.mark.parametrize(
    "token_id, status, message",
    [("6b0000000000000000000001", 1, "No token with id"), ("not-an-id", 2, "Not a token id")],
)
def test_revoke_unknown_or_malformed_id(runner, token_id, status, message):
    result = runner.invoke(args=["tokens", "revoke", token_id])

    assert result.exit_code == status
    assert message in result.output
