"""Exports of requests (docs/api.md#exports) through the API, on both backends.

Streaming through gunicorn (memory, first bytes, a failure mid-stream) is tested in
tests/deployment/test_exports.py.
"""

import csv
import datetime as dt
import io
import json

import pytest
from bson import ObjectId

from app import create_app
from repositories import exports as repositories_exports
from repositories.indexes import ensure_indexes
from schemas import exports
from tests.conftest import TEST_SETTINGS
from tests.support.checks import assert_bad_parameters, assert_error
from tests.support.factories import bearer

JANUARY = "createdFrom=2026-01-01&createdTo=2026-02-01"
ODD_IPS = ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", 'a "quoted", line\nbreak', "plain"]


@pytest.fixture
def scene(world):
    acme, other = world.organization("Acme"), world.organization("Other")
    ada = world.user("Ada", organizations=[acme])
    bob = world.user("Bob", organizations=[acme])
    bot = world.bot("writer", name="Writer", credit_cost=2.5)
    for number, ip in enumerate(ODD_IPS):
        world.bot_request(bot=bot, created_by=[ada, bob][number % 2], organization=acme, ip=ip)
    world.bot_request(bot=ObjectId(), created_by=ObjectId(), organization=acme)
    world.bot_request(
        bot=bot, created_by=world.user("Eve", organizations=[other]), organization=other
    )
    return {
        "acme": acme,
        "other": other,
        "bob": bob,
        "ada": world.token(user=ada),
        "organization": world.token(organization=acme),
        "outsider": world.token(user=world.user("Out")),
    }


def _get(client, scene, url: str, token: str = "ada", **headers):
    return client.get(url.format(**scene), headers={**bearer(scene[token]), **headers})


def _lines(response) -> list[dict]:
    assert response.status_code == 200, response.get_data(as_text=True)
    text = response.get_data(as_text=True)
    assert text.endswith("\n") or text == ""
    return [json.loads(line) for line in text.splitlines()]


def _list(client, scene, url: str, token: str = "ada") -> list[dict]:
    body = _get(client, scene, url, token).get_json()
    assert body["totalPages"] <= 1
    return body["results"]


EXPORTS = {
    "requests": ("/v1/requests/export", "/v1/requests/", "ada"),
    "organization requests": (
        "/v1/organizations/{acme}/requests/export",
        "/v1/organizations/{acme}/requests/",
        "organization",
    ),
}


@pytest.mark.parametrize("name", EXPORTS)
@pytest.mark.parametrize(
    "query", ["", "&sortBy=createdAt:asc", "&fields=ip,bot", "&bot=writer", "&name=WRIT"]
)
def test_ndjson_lines_are_the_list_items(client, scene, name, query):
    export, listing, token = EXPORTS[name]
    response = _get(client, scene, f"{export}?{JANUARY}{query}", token)
    assert response.content_type == "application/x-ndjson"
    expected = _list(client, scene, f"{listing}?limit=100&{JANUARY}{query}", token)
    assert _lines(response) == expected and expected


def test_an_organizations_export_takes_createdby(client, scene):
    url = f"/v1/organizations/{{acme}}/requests/export?{JANUARY}&createdBy={scene['bob']}"
    lines = _lines(_get(client, scene, url))
    assert len(lines) == 4 and {line["createdBy"]["name"] for line in lines} == {"Bob"}


def test_many_batches_make_one_export(client, scene, monkeypatch):
    """Batches of 2 keyset pages: every request once, in order, across both branches."""
    monkeypatch.setattr(exports, "BATCH", 2)
    expected = _list(client, scene, f"/v1/requests/?limit=100&{JANUARY}")
    assert _lines(_get(client, scene, f"/v1/requests/export?{JANUARY}")) == expected


def _csv(response) -> list[list[str]]:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.content_type == "text/csv; charset=utf-8"
    text = response.get_data(as_text=True)
    assert text.endswith("\r\n")
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_has_the_contracts_columns_and_one_row_per_request(client, scene):
    rows = _csv(_get(client, scene, f"/v1/requests/export?format=csv&{JANUARY}"))
    items = _list(client, scene, f"/v1/requests/?limit=100&{JANUARY}")
    assert rows[0] == list(exports.COLUMNS)
    assert [row[0] for row in rows[1:]] == [item["id"] for item in items]
    by_id = {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}
    for item in items:
        row = by_id[item["id"]]
        if item["bot"] is None:
            assert (row["botSlug"], row["botName"], row["botCreditCost"]) == ("", "", "")
            assert row["createdByName"] == ""
        else:
            assert (row["botSlug"], row["botName"], row["botCreditCost"]) == (
                "writer",
                "Writer",
                "2.5",
            )
        assert json.loads(row["inputs"]) == item["inputs"]
        assert json.loads(row["response"]) == item["response"]
        assert (row["createdAt"], row["organizationName"]) == (item["createdAt"], "Acme")


def test_a_csv_cell_a_spreadsheet_would_run_is_quoted_off(client, scene):
    rows = _csv(_get(client, scene, f"/v1/requests/export?format=csv&fields=ip&{JANUARY}"))
    assert rows[0] == ["id", "ip"]
    guarded = {ip: ("'" + ip if ip[0] in "=+-@\t\r" else ip) for ip in ODD_IPS}
    odd = [row[1] for row in rows[1:] if row[1] != "203.0.113.7"]
    assert sorted(odd) == sorted(guarded.values())


def test_csv_fields_name_columns(client, scene):
    url = f"/v1/requests/export?format=csv&fields=botSlug,createdByName&{JANUARY}"
    rows = _csv(_get(client, scene, url))
    assert rows[0] == ["id", "botSlug", "createdByName"]
    assert {tuple(row[1:]) for row in rows[1:]} == {("writer", "Ada"), ("writer", "Bob"), ("", "")}


@pytest.mark.parametrize(
    "query",
    ["format=csv&fields=bot", "format=ndjson&fields=botSlug", "fields=nope", "fields=id,,ip"],
)
def test_fields_outside_the_formats_names_are_a_400(client, scene, query):
    assert_bad_parameters(_get(client, scene, f"/v1/requests/export?{query}"), "fields")


@pytest.mark.parametrize(
    "accept, query, media_type",
    [
        ("text/csv", "", "text/csv"),
        ("application/x-ndjson", "", "application/x-ndjson"),
        ("text/csv;q=0.5, application/x-ndjson", "", "application/x-ndjson"),
        ("application/json", "", "application/x-ndjson"),
        ("text/csv", "&format=ndjson", "application/x-ndjson"),
        ("application/x-ndjson", "&format=csv", "text/csv"),
    ],
)
def test_the_format_is_asked_or_negotiated(client, scene, accept, query, media_type):
    response = _get(client, scene, f"/v1/requests/export?{JANUARY}{query}", Accept=accept)
    assert response.status_code == 200 and response.mimetype == media_type
    extension = "csv" if media_type == "text/csv" else "ndjson"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment; filename=") and disposition.endswith(
        f'.{extension}"'
    )


def test_the_file_name_names_the_scope_and_period(client, scene):
    period = "createdFrom=2026-01-01&createdTo=2026-01-31T12:00:00Z"
    url = f"/v1/organizations/{{acme}}/requests/export?{period}"
    response = _get(client, scene, url)
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="bot-requests-organization-{scene["acme"]}'
        '-20260101T000000Z-20260131T120000Z.ndjson"'
    )
    assert "ETag" not in response.headers


def test_the_period_is_the_last_30_days_by_default(client, scene, world, db):
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    acme = scene["acme"]
    recent = [
        world.bot_request(
            bot=None, created_by=None, organization=acme, createdAt=now - dt.timedelta(days=days)
        )
        for days in (1, 29)
    ]
    world.bot_request(
        bot=None, created_by=None, organization=acme, createdAt=now - dt.timedelta(days=31)
    )
    lines = _lines(_get(client, scene, "/v1/organizations/{acme}/requests/export"))
    assert [line["id"] for line in lines] == [str(id_) for id_ in recent]


@pytest.mark.parametrize(
    "query",
    [
        "createdFrom=2025-01-01&createdTo=2026-01-03",
        "createdFrom=2026-02-01&createdTo=2026-01-01",
        "createdFrom=2000-01-01",
    ],
)
def test_a_period_out_of_bounds_is_a_400(client, scene, query):
    assert_bad_parameters(_get(client, scene, f"/v1/requests/export?{query}"), "createdTo")


@pytest.mark.parametrize(
    "query, parameter",
    [("page=2", "page"), ("limit=5", "limit"), ("format=xml", "format"), ("sortBy=slug", "sortBy")],
)
def test_paging_and_unknown_values_are_400s(client, scene, query, parameter):
    assert_bad_parameters(_get(client, scene, f"/v1/requests/export?{query}"), parameter)


def test_who_may_export_what(client, scene):
    assert_error(_get(client, scene, "/v1/requests/export", "organization"), 403)
    assert_error(_get(client, scene, "/v1/organizations/{acme}/requests/export", "outsider"), 403)
    assert_error(
        _get(client, scene, "/v1/organizations/{other}/requests/export", "organization"), 403
    )
    lines = _lines(_get(client, scene, f"/v1/requests/export?{JANUARY}"))
    assert {line["organization"]["name"] for line in lines} == {"Acme"}
    assert _get(client, scene, "/v1/requests/export").status_code == 200
    assert client.get("/v1/requests/export").status_code == 401


def test_an_export_path_also_answers_with_a_trailing_slash(client, scene):
    assert _get(client, scene, f"/v1/requests/export/?{JANUARY}").status_code == 200
    assert _get(client, scene, f"/v1//requests/export?{JANUARY}").status_code == 200


def _limited(db, default: str, export: str):
    """A client of an app whose rate limits are on, with these budgets."""
    settings = {
        **TEST_SETTINGS,
        "MONGODB_DB": db.name,
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_DEFAULT": default,
        "RATELIMIT_EXPORT": export,
    }
    return create_app(settings, mongo_client=db.client).test_client()


def test_exports_have_a_budget_of_their_own_per_token(db, world):
    client = _limited(db, default="10 per minute", export="2 per hour")
    acme = world.organization()
    ada, bob = (world.token(user=world.user(name, organizations=[acme])) for name in "AB")
    exports_ = ["/v1/requests/export", f"/v1/organizations/{acme}/requests/export"]
    assert [client.get(url, headers=bearer(ada)).status_code for url in exports_] == [200, 200]
    refused = client.get(exports_[0], headers=bearer(ada))
    assert_error(refused, 429)
    assert refused.headers["X-RateLimit-Limit"] == "2" and int(refused.headers["Retry-After"]) > 60
    assert client.get("/v1/requests/", headers=bearer(ada)).status_code == 200
    assert client.get(exports_[1], headers=bearer(bob)).status_code == 200


@pytest.mark.parametrize("sort", ["createdAt:desc", "createdAt:asc", "updatedAt:desc"])
def test_windows_and_bursts_keep_the_lists_order(client, scene, world, monkeypatch, sort):
    """Batches of 2 read in windows of the period (repositories/exports.py): windows that
    widen over gaps, narrow over crowds, and a burst of requests in one millisecond, more than
    a batch, which no window can split."""
    monkeypatch.setattr(exports, "BATCH", 2)
    acme, burst = scene["acme"], dt.datetime(2026, 1, 20, 12, 0, 0)
    for _ in range(5):
        world.bot_request(bot=None, created_by=None, organization=acme, createdAt=burst)
    for minutes in (1, 2, 3, 600, 601, 10_000):
        moment = burst + dt.timedelta(minutes=minutes)
        world.bot_request(bot=None, created_by=None, organization=acme, createdAt=moment)
    query = f"{JANUARY}&sortBy={sort}"
    expected = _list(client, scene, f"/v1/requests/?limit=100&{query}")
    assert len(expected) == 20
    assert _lines(_get(client, scene, f"/v1/requests/export?{query}")) == expected


def test_a_request_on_a_bound_of_the_period_or_a_window_is_exported_once(
    client, scene, world, db, monkeypatch
):
    """On the indexes, a request stored exactly at `createdFrom` is in the list, the usage and
    the export, and one stored exactly on a window's edge is in exactly one window. The
    embedded engine's `$gte` on a descending index left such a request out
    (domain/timestamps.py)."""
    ensure_indexes(db)
    monkeypatch.setattr(repositories_exports, "FIRST_WINDOW", dt.timedelta(hours=1))
    monkeypatch.setattr(exports, "BATCH", 4)
    acme, end = scene["acme"], dt.datetime(2026, 1, 25)
    hours = [end - dt.timedelta(hours=number) for number in (1, 2, 3)]
    on_bounds = [
        world.bot_request(bot=None, created_by=None, organization=acme, createdAt=moment)
        for moment in hours
    ]
    start, end = f"{hours[-1].isoformat()}Z", f"{end.isoformat()}Z"
    url = "/v1/organizations/{acme}/"
    listed = _list(
        client, scene, f"{url}requests/?createdFrom={start}&createdTo={end}", "organization"
    )
    assert [item["id"] for item in listed] == [str(id_) for id_ in on_bounds]
    exported = _get(
        client, scene, f"{url}requests/export?createdFrom={start}&createdTo={end}", "organization"
    )
    assert _lines(exported) == listed
    usage = _get(client, scene, f"{url}usage/?from={start}&to={end}", "organization").get_json()
    assert usage["totals"]["requests"] == 3


def test_a_request_stored_with_several_creation_times_is_exported_once(
    client, scene, world, monkeypatch
):
    """Its times fall in several windows; it comes once, where the list puts it, even when
    `createdAt` is not selected."""
    monkeypatch.setattr(repositories_exports, "FIRST_WINDOW", dt.timedelta(hours=1))
    acme, day = scene["acme"], dt.datetime(2026, 1, 20)
    times = [day, day + dt.timedelta(hours=5), day + dt.timedelta(days=3)]
    world.bot_request(bot=None, created_by=None, organization=acme, createdAt=times)
    for sort in ("createdAt:desc", "createdAt:asc"):
        query = f"{JANUARY}&sortBy={sort}&fields=ip"
        expected = _list(client, scene, f"/v1/requests/?limit=100&{query}")
        assert _lines(_get(client, scene, f"/v1/requests/export?{query}")) == expected


def test_an_export_also_spends_the_default_budget(db, world):
    client = _limited(db, default="2 per minute", export="10 per hour")
    ada = bearer(world.token(user=world.user("Ada")))
    statuses = [client.get("/v1/requests/export", headers=ada).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_windows_widen_to_the_density_they_find(client, scene, world, monkeypatch):
    """A request an hour over January, in batches of 100: from a minute, each window after a
    sparse one aims at half a batch, so a few windows reach that width, where doubling took
    a dozen."""
    monkeypatch.setattr(exports, "BATCH", 100)
    acme, start = scene["acme"], dt.datetime(2026, 1, 1)
    for hour in range(24 * 31):
        moment = start + dt.timedelta(hours=hour, minutes=30)
        world.bot_request(bot=None, created_by=None, organization=acme, createdAt=moment)
    windows = []
    first = repositories_exports.BotRequestRepository.first

    def counted(repository, visibility, query):
        windows.append(query.created_to - query.created_from)
        return first(repository, visibility, query)

    monkeypatch.setattr(repositories_exports.BotRequestRepository, "first", counted)
    assert (
        len(_lines(_get(client, scene, f"/v1/organizations/{{acme}}/requests/export?{JANUARY}")))
        >= 744
    )
    assert len(windows) <= 30, windows
    assert max(windows[:6]) >= dt.timedelta(hours=40), windows


def test_fields_a_request_stores_beyond_its_item_stay_out_of_the_export(client, scene, world):
    """An export of every field reads whole documents (repositories/bot_requests.py, `whole`);
    what another writer stores besides the item's fields is not exported."""
    acme = scene["acme"]
    noted = world.bot_request(bot=None, created_by=None, organization=acme, internalNote="x")
    expected = _list(client, scene, f"/v1/requests/?limit=100&{JANUARY}")
    exported = _lines(_get(client, scene, f"/v1/requests/export?{JANUARY}"))
    assert str(noted) in [line["id"] for line in exported]
    assert exported == expected and all("internalNote" not in line for line in exported)
    csv_text = _get(client, scene, f"/v1/requests/export?{JANUARY}&format=csv").get_data(True)
    assert "internalNote" not in csv_text and ",x," not in csv_text


def test_a_request_with_a_document_for_id_and_several_creation_times_is_exported_once(
    client, scene, world, monkeypatch
):
    """As above, with another writer's document for `_id`, which a Python set refused."""
    monkeypatch.setattr(repositories_exports, "FIRST_WINDOW", dt.timedelta(hours=1))
    day = dt.datetime(2026, 1, 20)
    times = [day, day + dt.timedelta(hours=5), day + dt.timedelta(days=3)]
    world.bot_request(
        bot=None, created_by=None, organization=scene["acme"], createdAt=times, _id={"n": 1}
    )
    query = f"{JANUARY}&fields=ip"
    expected = _list(client, scene, f"/v1/requests/?limit=100&{query}")
    exported = _lines(_get(client, scene, f"/v1/requests/export?{query}"))
    assert exported == expected and len(exported) == len({line["id"] for line in exported})
