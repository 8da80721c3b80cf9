"""Usage summaries (docs/api.md#usage), on both backends.

Expected sums are computed here in plain Python over the documents the scene stored, as 7.3
states the rules: a request's own numeric `creditCost`, else its bot's, else 0.
"""

import datetime as dt
from collections import defaultdict

import pytest
from bson import Decimal128, ObjectId

from tests.support.checks import assert_bad_parameters, assert_error
from tests.support.factories import bearer

T0 = dt.datetime(2026, 3, 1, 22, 0)
PERIOD = "from=2026-03-01T22:00:00Z&to=2026-03-05T00:00:00Z"


def _at(hours: float) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours)


@pytest.fixture
def scene(world):
    """Ada (Acme) and Bo (Acme); Cy in Beta. Requests over four days, gaps included."""
    acme, beta = world.organization("Acme"), world.organization("Beta")
    ada = world.user("Ada", organizations=[acme])
    bo = world.user("Bo", organizations=[acme])
    cy = world.user("Cy", organizations=[beta])
    writer = world.bot("writer", credit_cost=3)
    painter = world.bot("painter", credit_cost=2.5, organization=acme)
    gone, gone_user = ObjectId(), ObjectId()
    stored = [
        # (hours from T0, bot, user, organization, own creditCost or absent)
        (0, writer, ada, acme, None),  # first instant: inclusive
        (1, writer, ada, acme, 10),  # own cost beats the bot's
        (1.5, painter, ada, None, None),  # Ada's own, outside Acme
        (2, painter, bo, acme, None),
        (3, gone, ada, acme, None),  # deleted bot: 0 credits
        (4, writer, gone_user, acme, 7),  # deleted user
        (5, painter, ada, acme, "free"),  # not a number: the bot's cost
        (50, writer, bo, acme, None),  # 2026-03-04: 2026-03-03 stays empty
        (-0.001, writer, ada, acme, None),  # before `from`
        (74, writer, ada, acme, None),  # exactly `to`: excluded
        (1, writer, cy, beta, 100),  # another organization's
    ]
    for hours, bot, user, organization, cost in stored:
        extra = {} if cost is None else {"creditCost": cost}
        world.bot_request(
            bot=bot, created_by=user, organization=organization, createdAt=_at(hours), **extra
        )
    return {
        "db": world.db,
        "acme": acme,
        "ada": ada,
        "tokens": {
            "ada": world.token(user=ada),
            "bo": world.token(user=bo),
            "cy": world.token(user=cy),
            "acme": world.token(organization=acme),
            "beta": world.token(organization=beta),
        },
    }


def _expected(db, match: dict, start: dt.datetime, end: dt.datetime, group_by: str) -> list:
    bots = {bot["_id"]: bot for bot in db.bots.find()}
    users = {user["_id"]: user for user in db.users.find()}
    groups = defaultdict(lambda: [0, 0])
    for request in db.botrequests.find(match):
        if not start <= request["createdAt"] < end:
            continue
        own, bot = request.get("creditCost"), bots.get(request["bot"])
        if isinstance(own, int | float) and not isinstance(own, bool):
            credits = own
        else:
            credits = bot["creditCost"] if bot else 0
        if group_by == "bot":
            key = (str(request["bot"]), bot and bot["slug"], bot and bot["name"])
        elif group_by == "user":
            user = users.get(request["createdBy"])
            key = (str(request["createdBy"]), user and user["name"])
        else:
            key = request["createdAt"].strftime("%Y-%m-%d")
        groups[key][0] += 1
        groups[key][1] += credits
    if group_by == "day":
        first, last = start.date(), (end - dt.timedelta(microseconds=1)).date()
        dates = [str(first + dt.timedelta(days=n)) for n in range((last - first).days + 1)]
        return [
            {"key": day, "requests": groups[day][0], "credits": groups[day][1]} for day in dates
        ]
    fields = ("id", "slug", "name") if group_by == "bot" else ("id", "name")
    rows = [
        {"key": dict(zip(fields, key, strict=True)), "requests": n, "credits": credits}
        for key, (n, credits) in groups.items()
    ]
    return sorted(rows, key=lambda row: (-row["credits"], -row["requests"], row["key"]["id"]))


def _get(client, scene, caller, path, query=PERIOD):
    return client.get(f"{path}?{query}", headers=bearer(scene["tokens"][caller]))


START, END = T0, dt.datetime(2026, 3, 5)


@pytest.mark.parametrize("group_by", ["bot", "day"])
def test_own_usage_is_the_users_requests_everywhere(client, scene, group_by):
    response = _get(client, scene, "ada", "/v1/usage/", f"{PERIOD}&groupBy={group_by}")
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    expected = _expected(scene["db"], {"createdBy": scene["ada"]}, START, END, group_by)
    assert body["results"] == expected
    assert body["totals"] == {
        "requests": sum(row["requests"] for row in expected),
        "credits": sum(row["credits"] for row in expected),
    }
    assert (body["from"], body["to"], body["groupBy"]) == (
        "2026-03-01T22:00:00.000Z",
        "2026-03-05T00:00:00.000Z",
        group_by,
    )


@pytest.mark.parametrize("caller", ["ada", "bo", "acme"])
@pytest.mark.parametrize("group_by", ["bot", "day", "user"])
def test_organization_usage_counts_the_organizations_requests(client, scene, caller, group_by):
    path = f"/v1/organizations/{scene['acme']}/usage/"
    body = _get(client, scene, caller, path, f"{PERIOD}&groupBy={group_by}").get_json()
    expected = _expected(scene["db"], {"organization": scene["acme"]}, START, END, group_by)
    assert body["results"] == expected
    assert body["totals"]["requests"] == 7


def test_the_rules_of_credits_and_deleted_references(client, scene):
    path = f"/v1/organizations/{scene['acme']}/usage/"
    by_bot = _get(client, scene, "acme", path).get_json()["results"]
    summary = {row["key"]["slug"]: (row["requests"], row["credits"]) for row in by_bot}
    # writer: 3 (bot's) + 10 (own) + 7 (own) + 3 (bot's); painter: 2.5 twice ("free" is no
    # number); the deleted bot: 0 credits, and null slug and name.
    assert summary == {"writer": (4, 23), "painter": (2, 5.0), None: (1, 0)}
    assert [row["key"]["slug"] for row in by_bot] == ["writer", "painter", None]
    assert by_bot[-1]["key"]["name"] is None and ObjectId.is_valid(by_bot[-1]["key"]["id"])
    by_user = _get(client, scene, "acme", path, f"{PERIOD}&groupBy=user").get_json()["results"]
    assert [row["key"]["name"] for row in by_user] == ["Ada", None, "Bo"]


def test_days_without_requests_are_zeros_and_partial_days_count(client, scene):
    body = _get(client, scene, "ada", "/v1/usage/", f"{PERIOD}&groupBy=day").get_json()
    days = [(row["key"], row["requests"]) for row in body["results"]]
    assert days == [("2026-03-01", 3), ("2026-03-02", 2), ("2026-03-03", 0), ("2026-03-04", 0)]
    assert body["results"][2]["credits"] == 0


def test_days_of_early_years_are_iso_dates(client, scene):
    body = _get(client, scene, "ada", "/v1/usage/", "to=0103-01-02&groupBy=day").get_json()
    assert body["results"][-1] == {"key": "0103-01-01", "requests": 0, "credits": 0}


def test_bounds_are_inclusive_then_exclusive_to_the_millisecond(client, scene):
    just_after = "from=2026-03-01T22:00:00.001Z&to=2026-03-05T00:00:00.001Z"
    body = _get(client, scene, "acme", f"/v1/organizations/{scene['acme']}/usage/", just_after)
    # Loses the request at `from`, gains the one at the old `to`.
    assert body.get_json()["totals"]["requests"] == 7


def test_ordering_breaks_ties_on_requests_then_id(client, world):
    user = world.user("Tie")
    bots = sorted(world.bot(f"tie-{n}", credit_cost=2) for n in range(3))
    for bot in bots:
        world.bot_request(bot=bot, created_by=user)
    world.bot_request(bot=bots[2], created_by=user, creditCost=0)
    response = client.get(
        "/v1/usage/?from=2026-01-01&to=2026-02-01", headers=bearer(world.token(user=user))
    )
    keys = [row["key"]["slug"] for row in response.get_json()["results"]]
    assert keys == ["tie-2", "tie-0", "tie-1"]


def test_the_default_period_is_the_30_days_before_now(client, world):
    user = world.user("Now")
    bot = world.bot("recent")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    for days in (1, 29, 31):
        world.bot_request(bot=bot, created_by=user, createdAt=now - dt.timedelta(days=days))
    body = client.get("/v1/usage/?groupBy=day", headers=bearer(world.token(user=user))).get_json()
    start = dt.datetime.fromisoformat(body["from"].rstrip("Z"))
    end = dt.datetime.fromisoformat(body["to"].rstrip("Z"))
    assert end - start == dt.timedelta(days=30)
    assert abs(end - now) < dt.timedelta(minutes=1)
    assert body["totals"]["requests"] == 2
    assert len(body["results"]) == 31


def test_another_organizations_requests_are_never_counted(client, scene):
    beta = _get(client, scene, "beta", "/v1/usage/")
    assert_error(beta, 403)
    cy = _get(client, scene, "cy", "/v1/usage/").get_json()
    assert cy["totals"] == {"requests": 1, "credits": 100}


@pytest.mark.parametrize("caller", ["cy", "beta"])
def test_outsiders_of_the_organization_get_403(client, scene, caller):
    assert_error(_get(client, scene, caller, f"/v1/organizations/{scene['acme']}/usage/"), 403)


def test_an_organization_token_has_no_own_usage(client, scene):
    assert_error(_get(client, scene, "acme", "/v1/usage/"), 403)


@pytest.mark.parametrize(
    ("path", "query", "parameter"),
    [
        ("/v1/usage/", "groupBy=user", "groupBy"),
        ("/v1/usage/", "groupBy=month", "groupBy"),
        ("/v1/usage/", "from=2026-03-02&to=2026-03-01", "to"),
        ("/v1/usage/", "from=2026-03-01&to=2026-03-01", "to"),
        ("/v1/usage/", "from=2025-01-01&to=2026-01-03", "to"),
        ("/v1/usage/", "from=yesterday", "from"),
        ("/v1/usage/", "to=2026-03-01T12:00:00", "to"),
        ("/v1/usage/", "page=1", "page"),
        ("ORG", "groupBy=organization", "groupBy"),
        ("ORG", "createdFrom=2026-01-01", "createdFrom"),
    ],
)
def test_bad_parameters_are_a_400_naming_them(client, scene, path, query, parameter):
    path = path.replace("ORG", f"/v1/organizations/{scene['acme']}/usage/")
    assert_bad_parameters(_get(client, scene, "ada", path, query), parameter)


def test_366_days_is_the_longest_period(client, scene):
    response = _get(client, scene, "ada", "/v1/usage/", "from=2024-01-01&to=2025-01-01")
    assert response.status_code == 200
    assert _get(client, scene, "ada", "/v1/usage/", "to=0001-01-02").status_code == 200


@pytest.mark.parametrize("db", ["wire"], indirect=True)
def test_decimal_costs_are_numbers(client, world):
    """Wire only: mongomock does no arithmetic on Decimal128 (its $sum and $isNumber fail)."""
    user = world.user("Dec")
    bot = world.bot("decimal", credit_cost=Decimal128("1.25"))
    world.bot_request(bot=bot, created_by=user)
    world.bot_request(bot=bot, created_by=user, creditCost=Decimal128("0.5"))
    response = client.get(
        "/v1/usage/?from=2026-01-01&to=2026-02-01", headers=bearer(world.token(user=user))
    )
    assert response.get_json()["totals"] == {"requests": 2, "credits": 1.75}


def test_a_stored_charge_counts_even_when_its_bot_is_deleted(client, world):
    """What a run was charged stays charged: only the bot's current cost is gone with it."""
    user = world.user("Charged")
    world.bot_request(bot=ObjectId(), created_by=user, creditCost=4)
    world.bot_request(bot=ObjectId(), created_by=user)
    response = client.get(
        "/v1/usage/?from=2026-01-01&to=2026-02-01", headers=bearer(world.token(user=user))
    )
    assert sorted(row["credits"] for row in response.get_json()["results"]) == [0, 4]


def test_credits_that_are_no_finite_number_are_null_and_so_is_the_total(client, world):
    """Real data: a stored NaN, and costs whose sum passes the float range (1e308 twice)."""
    user = world.user("Odd")
    world.bot_request(bot=world.bot("nan"), created_by=user, creditCost=float("nan"))
    huge = world.bot("huge", credit_cost=1e308)
    world.bot_request(bot=huge, created_by=user)
    world.bot_request(bot=huge, created_by=user)
    world.bot_request(bot=world.bot("plain", credit_cost=2), created_by=user)
    response = client.get(
        "/v1/usage/?from=2026-01-01&to=2026-02-01", headers=bearer(world.token(user=user))
    )
    assert response.status_code == 200
    body = response.get_json()
    assert {row["key"]["slug"]: row["credits"] for row in body["results"]} == {
        "nan": None,
        "huge": None,
        "plain": 2,
    }
    assert body["totals"] == {"requests": 4, "credits": None}


def test_a_bots_cost_that_is_no_number_counts_nothing(client, world):
    """Real data: another writer stored a bot's cost as text; the run still counts, for 0."""
    user = world.user("Texty")
    world.bot_request(bot=world.bot("texty", credit_cost="5"), created_by=user)
    response = client.get(
        "/v1/usage/?from=2026-01-01&to=2026-02-01", headers=bearer(world.token(user=user))
    )
    assert response.status_code == 200
    assert response.get_json()["totals"] == {"requests": 1, "credits": 0}
