"""Admission control through the app: what takes a database permit, what a request that finds
none gets, and that every request gives its permit back, whatever its answer."""

import time

import pytest
from prometheus_client import REGISTRY

from repositories.bots import BotRepository
from runtime import admission
from runtime.admission import DatabaseBusy, Permits
from tests.support.checks import assert_error, problem_checked
from tests.support.factories import bearer

UNAVAILABLE = {"code": 503, "message": "The database is unavailable; try again shortly."}
REFUSED = "botcatalogue_admission_refused_total"


@pytest.fixture
def permit(app) -> Permits:
    """The app's only permit, judged stalled as soon as it is held: a request either has
    it or is refused at once."""
    permits = app.extensions["database_permits"] = Permits(1, stall=0)
    return permits


def _free(permits: Permits) -> bool:
    """Whether a permit was free (and is now taken)."""
    try:
        permits.take(0)
    except DatabaseBusy:
        return False
    return True


@pytest.fixture
def reader(world):
    world.bot("public-bot")
    return bearer(world.token(user=world.user("Ada")))


def _refused() -> float:
    return REGISTRY.get_sample_value(REFUSED) or 0.0


def test_by_default_a_worker_has_one_permit_fewer_than_gunicorn_threads(app):
    assert app.extensions["database_permits"].count == 3


def test_with_no_permit_free_a_request_is_refused_at_once_with_503(
    client, permit, reader, json_log
):
    permit.take(0)
    before = _refused()

    response = client.get("/v1/bots/", headers={**reader, "X-Request-ID": "busy-1"})

    assert_error(response, 503)
    assert problem_checked(response.get_json()) == UNAVAILABLE
    assert response.headers["Retry-After"] == "1"
    assert _refused() == before + 1
    [warning] = [line for line in json_log() if line["level"] == "WARNING"]
    assert warning["requestId"] == "busy-1" and warning["message"].startswith("database stalled")


def test_a_request_that_finds_no_permit_within_its_deadline_is_told_the_service_is_busy(
    app, client, reader, json_log
):
    """Permits that keep coming back are not a stalled database: the request waits, and if
    its deadline runs out first, the 503 says so."""
    app.extensions["database_permits"] = permits = Permits(1, stall=None)
    app.config["MONGODB_TIMEOUT_MS"] = 50
    permits.take(0)
    before = _refused()

    response = client.get("/v1/bots/", headers=reader)

    assert_error(response, 503)
    assert problem_checked(response.get_json()) == {
        "code": 503,
        "message": "The service is busy; try again shortly.",
    }
    assert response.headers["Retry-After"] == "1"
    assert _refused() == before + 1
    [warning] = [line for line in json_log() if line["level"] == "WARNING"]
    assert warning["message"].startswith("database busy")


def test_looking_up_a_token_needs_a_permit_too(client, permit):
    """An unknown token is a 401 only once the database has said so."""
    permit.take(0)

    assert client.get("/v1/bots/", headers=bearer("bcs_unknown")).status_code == 503
    permit.give_back()
    assert client.get("/v1/bots/", headers=bearer("bcs_unknown")).status_code == 401


def test_readyz_waits_for_a_permit_no_longer_than_its_own_timeout(app, client):
    """A busy worker's permit may come back within the request's deadline, but a probe gives
    up sooner: READYZ_TIMEOUT_MS bounds the wait too."""
    app.extensions["database_permits"] = permits = Permits(1, stall=None)
    app.config["READYZ_TIMEOUT_MS"] = 100
    permits.take(0)

    started = time.monotonic()
    response = client.get("/readyz")

    assert_error(response, 503)
    assert time.monotonic() - started < 1


def test_readyz_needs_a_permit_for_its_ping(client, permit):
    permit.take(0)

    response = client.get("/readyz")

    assert_error(response, 503)
    assert response.headers["Retry-After"] == "1"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/healthz", 200),
        ("GET", "/v1/openapi.json", 200),
        ("GET", "/docs", 200),
        ("GET", "/v1/no-such-thing/", 404),
        ("POST", "/v1/bots/", 405),
        ("GET", "/v1/bots/", 401),
    ],
)
def test_what_never_asks_the_database_never_needs_a_permit(client, permit, method, path, status):
    permit.take(0)

    assert client.open(path, method=method).status_code == status


def test_a_request_holds_its_permit_while_it_reads(client, permit, reader, monkeypatch):
    """One permit for the whole request: its authentication and its query share it."""
    seen = []
    find_page = BotRepository.find_page

    def find_page_and_try_the_permit(self, *args):
        seen.append(_free(permit))
        return find_page(self, *args)

    monkeypatch.setattr(BotRepository, "find_page", find_page_and_try_the_permit)

    assert client.get("/v1/bots/", headers=reader).status_code == 200
    assert seen == [False]


@pytest.mark.parametrize(
    ("path", "status"),
    [("/v1/bots/", 200), ("/v1/bots/no-such-bot/", 404), ("/v1/bots/?limit=0", 400)],
)
def test_every_answer_gives_the_permit_back(client, permit, reader, path, status):
    assert client.get(path, headers=reader).status_code == status
    assert _free(permit)


def test_an_exception_gives_the_permit_back(app, client, permit, reader, monkeypatch):
    def fails(*args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(BotRepository, "find_page", fails)
    app.config["PROPAGATE_EXCEPTIONS"] = False  # answer 500, as in production

    assert_error(client.get("/v1/bots/", headers=reader), 500)
    assert _free(permit)


def test_a_304_gives_the_permit_back(client, permit, reader):
    etag = client.get("/v1/bots/", headers=reader).headers["ETag"]

    response = client.get("/v1/bots/", headers={**reader, "If-None-Match": etag})

    assert response.status_code == 304
    assert _free(permit)


def test_the_requests_client_tells_the_permits_the_database_answers(make_app, wire_uri, wire_db):
    """The app's own client (not one handed in) reports each reply to the permits: every
    permit held past STALL is not a stall while the database answers a command."""
    app = make_app(
        {"MONGODB_URI": wire_uri, "MONGODB_DB": wire_db.name, "DATABASE_PERMITS": 1}, None
    )
    permits, client = app.extensions["database_permits"], app.extensions["mongo"]
    try:
        permits.take(0)
        time.sleep(admission.STALL + 0.05)
        assert permits.stalled()

        client.admin.command("ping")
        assert not permits.stalled()
    finally:
        client.close()
        app.extensions["mongo_stream"].close()
