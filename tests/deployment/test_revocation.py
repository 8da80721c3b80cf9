"""A revocation, a demotion, a removed membership or a deleted user reaches every worker
within a second, with the token cache on (the default, docs/deployment.md#the-exact-caches).

Through a real gunicorn with two workers: the test client is one process and proves nothing
about the others. Each scenario first has every worker answer the token from its cache (the
metrics port counts the hits), so that only the change stream can make it forget; then makes
the change the way the operator or the other system makes it; then asks each worker on its
own connection until the change shows, for at most a second after the write.
A role or a membership is read from `users` for a JWT too, so those run with both kinds.
"""

import datetime as dt
import os
import subprocess
import sys
import uuid
from pathlib import Path

import jwt
import pytest

from runtime.bearer_tokens import hash_token
from tests.support import ROOT
from tests.support.factories import World
from tests.support.wire_server import free_port
from tests.support.workers import cached_in_every_worker, statuses, within_a_second

FLASK = Path(sys.executable).with_name("flask")
JWT_SECRET = "a-test-secret-of-at-least-32-bytes!"


@pytest.fixture(scope="module")
def server(module_gunicorns):
    """The default settings, JWTs accepted too, figures on a metrics port."""
    return module_gunicorns({"JWT_SECRET": JWT_SECRET, "METRICS_PORT": str(free_port())})


def _revoke_by_cli(uri: str, db_name: str, token_id, **env) -> str:
    """`flask tokens revoke`, run as an operator runs it, from the project folder (Flask finds
    the app in wsgi.py there); its standard output."""
    result = subprocess.run(
        [str(FLASK), "tokens", "revoke", str(token_id)],
        cwd=ROOT,
        env={**os.environ, "MONGODB_URI": uri, "MONGODB_DB": db_name, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _token_id(db, token: str):
    return db.tokens.find_one({"tokenHash": hash_token(token)})["_id"]


def test_a_revocation_by_the_cli_refuses_the_token_in_every_worker(
    server, open_connections, wire_uri, module_database, stored
):
    token = stored.token(user=stored.user("Ada"))
    connections = open_connections(server)
    warm = cached_in_every_worker(server, connections, "/v1/bots/", token)
    assert statuses(warm) == [200, 200]

    output = _revoke_by_cli(wire_uri, module_database.name, _token_id(module_database, token))

    assert "every worker refuses it within a second" in output
    within_a_second(server, connections, "/v1/bots/", token, lambda status, _: status == 401)


def test_a_revocation_written_by_the_other_system_refuses_the_token_in_every_worker(
    server, open_connections, module_database, stored
):
    token = stored.token(user=stored.user("Ada"))
    connections = open_connections(server)
    assert statuses(cached_in_every_worker(server, connections, "/v1/bots/", token)) == [200, 200]

    module_database.tokens.update_one(
        {"tokenHash": hash_token(token)}, {"$set": {"revokedAt": dt.datetime.now(dt.UTC)}}
    )

    within_a_second(server, connections, "/v1/bots/", token, lambda status, _: status == 401)


def _token_for(stored: World, user, kind: str) -> str:
    """An opaque token from `tokens`, or a JWT whose rights are read from `users` all the same."""
    if kind == "opaque":
        return stored.token(user=user)
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
    return jwt.encode({"sub": str(user), "exp": expires}, JWT_SECRET, algorithm="HS256")


@pytest.mark.parametrize("kind", ["opaque", "jwt"])
def test_a_demoted_admin_no_longer_sees_another_organizations_private_bot(
    server, open_connections, module_database, stored, kind
):
    name = f"private{uuid.uuid4().hex[:8]}"
    stored.bot(name, name=name, organization=stored.organization("Globex"), is_public=False)
    admin = stored.user("Root", role="admin")
    token = _token_for(stored, admin, kind)
    path = f"/v1/bots/?name={name}"
    connections = open_connections(server)
    before = cached_in_every_worker(server, connections, path, token)
    assert [body["totalResults"] for _, body in before] == [1, 1]

    module_database.users.update_one({"_id": admin}, {"$set": {"role": "user"}})

    within_a_second(
        server, connections, path, token, lambda status, body: body["totalResults"] == 0
    )


@pytest.mark.parametrize("kind", ["opaque", "jwt"])
def test_a_removed_membership_closes_the_organizations_requests_in_every_worker(
    server, open_connections, module_database, stored, kind
):
    acme = stored.organization("Acme")
    member = stored.user("Ada", organizations=[acme])
    token = _token_for(stored, member, kind)
    path = f"/v1/organizations/{acme}/requests/"
    connections = open_connections(server)
    assert statuses(cached_in_every_worker(server, connections, path, token)) == [200, 200]

    module_database.users.update_one({"_id": member}, {"$pull": {"organizations": acme}})

    within_a_second(server, connections, path, token, lambda status, _: status == 403)


@pytest.mark.parametrize("kind", ["opaque", "jwt"])
def test_a_deleted_user_is_refused_in_every_worker(
    server, open_connections, module_database, stored, kind
):
    user = stored.user("Ada")
    token = _token_for(stored, user, kind)
    connections = open_connections(server)
    assert statuses(cached_in_every_worker(server, connections, "/v1/bots/", token)) == [200, 200]

    module_database.users.delete_one({"_id": user})

    within_a_second(server, connections, "/v1/bots/", token, lambda status, _: status == 401)
