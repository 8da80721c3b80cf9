"""A database that requires SCRAM authentication and TLS, as production's does.

The wire server gets a user, then restarts with `--auth` and a certificate from a throwaway
CA made with openssl. The commands and gunicorn get the credentials and `tlsCAFile` in
MONGODB_URI and nowhere else. With the right ones everything works; with a wrong password or
a CA that did not sign the server's certificate, requests are 503s and each command ends with
one line. The password is searched for in everything the processes wrote and answered.
"""

import json
import os
import secrets
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pymongo
import pytest
from bson import ObjectId

from tests.support import ROOT
from tests.support.checks import problem_checked
from tests.support.factories import bearer
from tests.support.gunicorn_server import GunicornServer
from tests.support.wire_server import WireServer

FLASK = Path(sys.executable).with_name("flask")
USER = "catalogue"
PASSWORD = f"pw-{secrets.token_urlsafe(18)}"
WRONG_PASSWORD = f"pw-{secrets.token_urlsafe(18)}"
DATABASE = f"locked_{uuid.uuid4().hex[:12]}"
TIMEOUT_MS = "1000"
pytestmark = pytest.mark.skipif(
    shutil.which("openssl") is None, reason="needs openssl (Debian: apt-get install openssl)"
)


def _openssl(folder: Path, *arguments: str) -> None:
    subprocess.run(["openssl", *arguments], cwd=folder, check=True, capture_output=True)


def _certificate_authority(folder: Path, name: str) -> None:
    _openssl(
        folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.pem",
    )  # fmt: skip


def _server_certificate(folder: Path, authority: str) -> None:
    """For 127.0.0.1, which the URI names: hostname verification stays on."""
    _openssl(
        folder, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", "server.key", "-out", "server.csr",
    )  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(
        folder, "x509", "-req", "-in", "server.csr", "-CA", f"{authority}.pem",
        "-CAkey", f"{authority}.key", "-CAcreateserial", "-days", "1",
        "-extfile", "san.ext", "-out", "server.pem",
    )  # fmt: skip


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> Path:
    """The server's CA and its certificate, and a CA that signed nothing of it."""
    folder = tmp_path_factory.mktemp("tls")
    _certificate_authority(folder, "ca")
    _certificate_authority(folder, "unknown-ca")
    _server_certificate(folder, "ca")
    return folder


def _uri(server: WireServer, password: str, authority: Path) -> str:
    return (
        f"mongodb://{USER}:{password}@127.0.0.1:{server.port}/?directConnection=true"
        f"&authSource=admin&tls=true&tlsCAFile={authority}"
    )


@pytest.fixture(scope="module")
def server(certificates):
    """Users are created on an open server, which then restarts locked (SecantusDB's way),
    reached through the credentials and the CA from then on: `wait` asks through `uri`."""
    wire = WireServer().start()
    try:
        client = pymongo.MongoClient(wire.uri)
        client.admin.command(
            "createUser", USER, pwd=PASSWORD, roles=[{"role": "readWrite", "db": DATABASE}]
        )
        client.close()
        wire.stop()
        wire.options = (*wire.options, "--auth")
        wire.options += ("--tls-cert-file", str(certificates / "server.pem"))
        wire.options += ("--tls-key-file", str(certificates / "server.key"))
        wire.uri = _uri(wire, PASSWORD, certificates / "ca.pem")
        wire.start()
        yield wire
    finally:
        wire.close()


def _flask(uri: str, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(FLASK), "--app", "app", *arguments],
        cwd=ROOT,
        env={
            **os.environ,
            "MONGODB_URI": uri,
            "MONGODB_DB": DATABASE,
            "MONGODB_TIMEOUT_MS": TIMEOUT_MS,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def _assert_no_password(*outputs: str) -> None:
    for output in outputs:
        assert PASSWORD not in output and WRONG_PASSWORD not in output


@pytest.fixture(scope="module")
def loaded(server, tmp_path_factory):
    """`db init`, `db load` and the token commands, with the credentials in the URI; returns
    a token issued through them and everything they printed."""
    organization, user = ObjectId(), ObjectId()
    data = tmp_path_factory.mktemp("load") / "data.json"
    data.write_text(
        json.dumps(
            {
                "organizations": [{"_id": str(organization), "name": "Acme"}],
                "users": [
                    {
                        "_id": str(user),
                        "name": "Ada",
                        "email": "ada@example.com",
                        "role": "user",
                        "organizations": [str(organization)],
                    }
                ],
            }
        )
    )
    outputs = []

    def run(*arguments: str) -> subprocess.CompletedProcess:
        result = _flask(server.uri, *arguments)
        outputs.extend([result.stdout, result.stderr])
        assert result.returncode == 0, (arguments, result.stderr)
        return result

    run("db", "init")
    run("db", "load", str(data))
    token = run("tokens", "issue", "--user", "ada@example.com").stdout.strip()
    spare = run("tokens", "issue", "--organization", "Acme", "--label", "spare")
    spare_id = spare.stderr.split()[1]
    assert spare_id in run("tokens", "list").stdout
    run("tokens", "revoke", spare_id)
    return token, outputs


def test_the_commands_work_with_credentials_and_tls_and_never_print_the_password(loaded):
    token, outputs = loaded
    assert token.startswith("bcs_")
    _assert_no_password(*outputs)


def test_the_service_works_with_credentials_and_tls(server, loaded):
    token, _ = loaded
    settings = {"MONGODB_URI": server.uri, "MONGODB_DB": DATABASE}
    with GunicornServer(settings) as gunicorn:
        readiness = gunicorn.request("GET", "/readyz")
        listed = gunicorn.request("GET", "/v1/requests/", bearer(token))
        log = gunicorn.log()
    assert readiness[0] == 200
    assert listed[0] == 200 and listed[2]["totalResults"] == 0
    _assert_no_password(log, repr(readiness), repr(listed))


@pytest.mark.parametrize(
    ("password", "authority", "reason"),
    [
        (WRONG_PASSWORD, "ca", "authentication failed"),
        (PASSWORD, "unknown-ca", "CERTIFICATE_VERIFY_FAILED"),
    ],
    ids=["wrong password", "unknown CA"],
)
def test_refused_credentials_or_certificate_are_503s_and_one_line_from_each_command(
    server, certificates, loaded, password, authority, reason
):
    token, _ = loaded
    uri = _uri(server, password, certificates / f"{authority}.pem")
    settings = {"MONGODB_URI": uri, "MONGODB_DB": DATABASE, "MONGODB_TIMEOUT_MS": TIMEOUT_MS}
    with GunicornServer(settings) as gunicorn:
        answers = [
            gunicorn.request("GET", "/readyz"),
            gunicorn.request("GET", "/v1/bots/", bearer(token)),
            gunicorn.request("GET", "/v1/requests/", bearer(token)),
        ]
        log = gunicorn.log()
    for status, headers, body in answers:
        assert status == 503
        assert headers["Retry-After"] == "1"
        assert body["code"] == 503 and set(problem_checked(body)) == {"code", "message"}
    assert reason in log
    _assert_no_password(log, repr(answers))

    for command in (["db", "init"], ["db", "seed-demo"], ["tokens", "list"]):
        result = _flask(uri, *command)
        assert result.returncode == 1, command
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("Error: The database failed: ")
        assert reason in lines[0]
        _assert_no_password(result.stdout, result.stderr)
