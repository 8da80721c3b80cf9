"""Response shapes (docs/api.md, Responses): exact keys, exact values, JSON-safe stored content."""

import datetime as dt
import json
import math
import uuid

import pytest
from bson import (
    Binary,
    Code,
    Decimal128,
    Int64,
    MaxKey,
    MinKey,
    ObjectId,
    Regex,
    Timestamp,
)

from tests.support.factories import bearer

CREATED = dt.datetime(2026, 1, 2, 3, 4, 5, 678000)
UPDATED = dt.datetime(2026, 2, 3, 4, 5, 6, 7000)
EXTRA_FIELDS = {"secret": "do not show", "internalNotes": {"cost": 3}, "__v": 2}


@pytest.fixture
def acme(world):
    return world.organization("Acme")


@pytest.fixture
def member_token(world, acme):
    return world.token(user=world.user("Ada", organizations=[acme]))


@pytest.fixture
def admin_token(world):
    return world.token(user=world.user("Root", role="admin"))


@pytest.fixture
def bot(world, acme):
    """An Acme bot with a service, two tags and fields the API does not return."""
    service = world.service("Writing", "writing", "text")
    tags = [world.tag("alpha"), world.tag("beta")]
    return world.bot(
        "writer",
        name="Writer",
        organization=acme,
        is_public=False,
        credit_cost=3,
        service=service,
        tags=tags,
        createdAt=CREATED,
        updatedAt=UPDATED,
        **EXTRA_FIELDS,
    )


def _public_view(bot_id) -> dict:
    return {
        "id": str(bot_id),
        "slug": "writer",
        "name": "Writer",
        "description": "The writer bot.",
        "creditCost": 3,
        "modelKey": "gpt-4o-mini",
        "applyToApi": True,
        "inputs": [{"name": "prompt", "type": "text", "required": True}],
    }


def _json(response, status: int = 200):
    assert response.status_code == status, response.get_json()
    assert response.content_type == "application/json"
    return response.get_json()


def _single_page(item: dict) -> dict:
    """The envelope of a first page with default paging, holding `item` alone."""
    return {"results": [item], "page": 1, "limit": 10, "totalPages": 1, "totalResults": 1}


def test_bot_list_item_is_the_public_view(client, member_token, bot):
    body = _json(client.get("/v1/bots/", headers=bearer(member_token)))
    assert body == _single_page(_public_view(bot))


def test_bot_is_the_public_view_for_a_member(client, member_token, bot):
    assert _json(client.get("/v1/bots/writer/", headers=bearer(member_token))) == _public_view(bot)


@pytest.mark.parametrize("role", ["user", "admin"])
def test_organization_bot_is_the_bot_beside_its_organization(client, world, bot, acme, role):
    """The public view of the bot, for an admin member too: only 4.7 shows the details."""
    token = world.token(user=world.user("Bo", organizations=[acme], role=role))
    response = client.get(f"/v1/organizations/{acme}/bots/writer/", headers=bearer(token))
    assert _json(response) == {
        "bot": _public_view(bot),
        "organization": {"id": str(acme), "name": "Acme"},
    }
    listed = _json(client.get(f"/v1/organizations/{acme}/bots/", headers=bearer(token)))
    assert listed["results"] == [{**_public_view(bot), "organizationId": str(acme)}]


def test_admin_view(client, admin_token, bot, acme, db):
    service = db.services.find_one()
    alpha, beta = db.tags.find().sort("name")
    assert _json(client.get("/v1/bots/writer/", headers=bearer(admin_token))) == {
        **_public_view(bot),
        "organizationId": str(acme),
        "isPublic": False,
        "service": {
            "id": str(service["_id"]),
            "name": "Writing",
            "slug": "writing",
            "directory": "text",
        },
        "tags": [
            {"id": str(alpha["_id"]), "name": "alpha"},
            {"id": str(beta["_id"]), "name": "beta"},
        ],
        "createdAt": "2026-01-02T03:04:05.678Z",
        "updatedAt": "2026-02-03T04:05:06.007Z",
    }


def test_admin_view_of_a_bot_without_organization_service_or_tags(client, admin_token, world):
    world.bot("plain", createdAt=CREATED, updatedAt=CREATED)
    body = _json(client.get("/v1/bots/plain/", headers=bearer(admin_token)))
    assert (body["organizationId"], body["service"], body["tags"]) == (None, None, [])


def test_admin_view_drops_deleted_service_and_tags(client, admin_token, world, db):
    kept, deleted = world.tag("kept"), world.tag("deleted")
    service = world.service()
    world.bot("stale", service=service, tags=[deleted, kept])
    db.tags.delete_one({"_id": deleted})
    db.services.delete_one({"_id": service})
    body = _json(client.get("/v1/bots/stale/", headers=bearer(admin_token)))
    assert body["service"] is None
    assert body["tags"] == [{"id": str(kept), "name": "kept"}]


def test_admin_view_keeps_the_stored_tag_order(client, admin_token, world):
    tags = [world.tag(name) for name in ("c", "a", "b")]
    world.bot("tagged", tags=[tags[2], tags[0], tags[1]])
    body = _json(client.get("/v1/bots/tagged/", headers=bearer(admin_token)))
    assert [tag["name"] for tag in body["tags"]] == ["b", "c", "a"]


# Bot requests ------------------------------------------------------------------------------


@pytest.fixture
def run(world, acme, bot, db):
    """A request of the member for Acme, with fields the API does not return."""
    user = db.users.find_one({"name": "Ada"})["_id"]
    return world.bot_request(
        bot=bot,
        created_by=user,
        organization=acme,
        inputs={"prompt": "Hello", "n": 2},
        response={"message": "Hi there", "tokens": 5},
        createdAt=CREATED,
        updatedAt=UPDATED,
        **EXTRA_FIELDS,
    )


def _request_view(run_id) -> dict:
    return {
        "id": str(run_id),
        "bot": {"creditCost": 3, "name": "Writer", "slug": "writer"},
        "createdBy": {"name": "Ada"},
        "organization": {"name": "Acme"},
        "inputs": {"prompt": "Hello", "n": 2},
        "ip": "203.0.113.7",
        "response": {"message": "Hi there", "tokens": 5},
        "createdAt": "2026-01-02T03:04:05.678Z",
        "updatedAt": "2026-02-03T04:05:06.007Z",
    }


def test_bot_request(client, member_token, run):
    assert _json(client.get(f"/v1/requests/{run}/", headers=bearer(member_token))) == (
        _request_view(run)
    )


def test_bot_request_lists(client, member_token, run, acme):
    for path in ("/v1/requests/", f"/v1/organizations/{acme}/requests/"):
        body = _json(client.get(path, headers=bearer(member_token)))
        assert body == _single_page(_request_view(run))


def test_organization_bot_request(client, member_token, run, acme):
    path = f"/v1/organizations/{acme}/requests/{run}/"
    assert _json(client.get(path, headers=bearer(member_token))) == _request_view(run)


@pytest.mark.parametrize(
    ("deleted", "field"),
    [("bots", "bot"), ("users", "createdBy"), ("organizations", "organization")],
)
def test_missing_reference_is_null(client, world, db, deleted, field):
    acme = world.organization("Acme")
    token = world.token(user=world.user("Ada", organizations=[acme]))
    requester = world.user("Bob", organizations=[acme])
    run = world.bot_request(bot=world.bot("gone"), created_by=requester, organization=acme)
    referenced = db.botrequests.find_one({"_id": run})[field]
    db[deleted].delete_one({"_id": referenced})

    body = _json(client.get(f"/v1/requests/{run}/", headers=bearer(token)))
    assert body[field] is None
    assert {key for key, value in body.items() if value is None} == {field}
    assert set(body) == set(_request_view(run))


def test_request_without_organization_or_references(client, world):
    user = world.user("Ada")
    token = world.token(user=user)
    run = world.bot_request(bot=None, created_by=user, organization=None)
    body = _json(client.get(f"/v1/requests/{run}/", headers=bearer(token)))
    assert (body["bot"], body["organization"], body["createdBy"]) == (None, None, {"name": "Ada"})


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        pytest.param(ObjectId("0123456789abcdef01234567"), "0123456789abcdef01234567", id="oid"),
        pytest.param(CREATED, "2026-01-02T03:04:05.678Z", id="datetime"),
        pytest.param(dt.datetime(1, 1, 1), "0001-01-01T00:00:00.000Z", id="datetime-min"),
        pytest.param(Decimal128("12.50"), 12.5, id="decimal"),
        pytest.param(Decimal128("42"), 42, id="decimal-integral"),
        pytest.param(Decimal128("-0.001"), -0.001, id="decimal-small"),
        pytest.param(Decimal128("NaN"), None, id="decimal-nan"),
        pytest.param(Decimal128("-Infinity"), None, id="decimal-infinity"),
        pytest.param(Decimal128("sNaN"), None, id="decimal-signaling-nan"),
        pytest.param(Decimal128("1E+6000"), None, id="decimal-huge"),
        pytest.param(Decimal128("1E+20"), 1e20, id="decimal-past-int64"),
        pytest.param(Decimal128("9223372036854775807"), 9223372036854775807, id="decimal-int64"),
        pytest.param(math.nan, None, id="nan"),
        pytest.param(math.inf, None, id="infinity"),
        pytest.param(-math.inf, None, id="minus-infinity"),
        pytest.param(1.25, 1.25, id="float"),
        pytest.param(Int64(2**62), 2**62, id="int64"),
        pytest.param(2**31 - 1, 2**31 - 1, id="int32"),
        pytest.param(Binary(b"\x00\x01\xff", 0), "AAH/", id="binary"),
        pytest.param(Binary(b"\x00\x01\xff", 128), "AAH/", id="binary-user-subtype"),
        pytest.param(
            Binary.from_uuid(uuid.UUID("12345678-1234-5678-1234-567812345678")),
            "12345678-1234-5678-1234-567812345678",
            id="uuid",
        ),
        pytest.param(Binary(b"\x01\x02", 4), "AQI=", id="uuid-subtype-wrong-length"),
        pytest.param(Regex("^a.*b$", "i"), "^a.*b$", id="regex"),
        pytest.param(Timestamp(1767323045, 1), "2026-01-02T03:04:05.000Z", id="timestamp"),
        pytest.param(Code("function () {}"), "function () {}", id="code"),
        pytest.param(Code("return x;", {"x": 1}), "return x;", id="code-with-scope"),
        pytest.param(
            {"a": [1, {"b": [CREATED, Decimal128("1.5")]}], "c": {"d": None}},
            {"a": [1, {"b": ["2026-01-02T03:04:05.678Z", 1.5]}], "c": {"d": None}},
            id="nested",
        ),
        pytest.param([[], {}, "", False, True], [[], {}, "", False, True], id="empties"),
    ],
)
def test_stored_values_become_json(client, world, stored, shown):
    """Inputs and responses are returned as stored, each BSON value made JSON-safe."""
    user = world.user("Ada")
    token = world.token(user=user)
    run = world.bot_request(
        bot=None,
        created_by=user,
        inputs={"value": stored},
        response={"message": "ok", "value": stored},
    )
    for path in (f"/v1/requests/{run}/", "/v1/requests/"):
        response = client.get(path, headers=bearer(token))
        assert response.status_code == 200
        json.loads(response.get_data(as_text=True))  # strict JSON: no NaN or Infinity tokens
        body = response.get_json()
        item = body if "id" in body else body["results"][0]
        assert item["inputs"] == {"value": shown}
        assert item["response"] == {"message": "ok", "value": shown}


@pytest.mark.parametrize("stored", [MinKey(), MaxKey()], ids=["minkey", "maxkey"])
def test_exotic_stored_values_are_strings(client, world, stored):
    user = world.user("Ada")
    token = world.token(user=user)
    run = world.bot_request(bot=None, created_by=user, inputs={"value": stored})
    response = client.get(f"/v1/requests/{run}/", headers=bearer(token))
    assert response.status_code == 200
    assert isinstance(response.get_json()["inputs"]["value"], str)


@pytest.mark.parametrize(
    ("stored", "shown"),
    [("free text", "free text"), (["a", 1], ["a", 1]), (None, None), (7, 7)],
)
def test_inputs_and_response_that_are_not_objects(client, world, stored, shown):
    user = world.user("Ada")
    token = world.token(user=user)
    run = world.bot_request(bot=None, created_by=user, inputs=stored, response=stored)
    body = _json(client.get(f"/v1/requests/{run}/", headers=bearer(token)))
    assert (body["inputs"], body["response"]) == (shown, shown)


@pytest.mark.parametrize(
    ("cost", "shown"),
    [
        (Decimal128("2.5"), 2.5),
        (Int64(7), 7),
        (0.5, 0.5),
        (math.nan, None),
        (Decimal128("Infinity"), None),
        # Another writer's value of another type: the document promises a number or null.
        ("5", None),
        (True, None),
        ({"amount": 5}, None),
    ],
)
def test_bot_credit_cost_is_a_number(client, world, cost, shown):
    user = world.user("Ada")
    token = world.token(user=user)
    world.bot("priced", credit_cost=cost)
    world.bot_request(bot=world.db.bots.find_one()["_id"], created_by=user)
    assert _json(client.get("/v1/bots/priced/", headers=bearer(token)))["creditCost"] == shown
    body = _json(client.get("/v1/requests/", headers=bearer(token)))
    assert body["results"][0]["bot"]["creditCost"] == shown


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        (dt.datetime(2026, 1, 2, 3, 4, 5), "2026-01-02T03:04:05.000Z"),
        (dt.datetime(2026, 1, 2, 3, 4, 5, 999999), "2026-01-02T03:04:05.999Z"),
        (dt.datetime(2026, 12, 31, 23, 59, 59, 1000), "2026-12-31T23:59:59.001Z"),
        (
            dt.datetime(2026, 1, 2, 5, 4, 5, 678000, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "2026-01-02T03:04:05.678Z",
        ),
        # Another writer's value of another type: the document promises a date-time or null.
        ("2026-01-02", None),
        (1767323045678, None),
    ],
)
def test_timestamps(client, world, stored, shown):
    token = world.token(user=world.user("Root", role="admin"))
    world.bot("timed", createdAt=stored, updatedAt=stored)
    body = _json(client.get("/v1/bots/timed/", headers=bearer(token)))
    assert (body["createdAt"], body["updatedAt"]) == (shown, shown)


def test_sparse_documents_keep_every_key(client, world, db):
    """Fields missing from a stored document are null, never absent, in every shape."""
    acme = world.organization("Acme")
    user = world.user("Ada", organizations=[acme])
    member, admin = world.token(user=user), world.token(user=world.user("Root", role="admin"))
    bot = db.bots.insert_one({"slug": "bare", "isPublic": True, "organization": acme}).inserted_id
    run = db.botrequests.insert_one({"createdBy": user, "organization": acme}).inserted_id
    public = dict.fromkeys(_public_view(bot), None) | {"id": str(bot), "slug": "bare"}

    assert _json(client.get("/v1/bots/bare/", headers=bearer(member))) == public
    assert _json(client.get("/v1/bots/", headers=bearer(member)))["results"] == [public]
    pair = _json(client.get(f"/v1/organizations/{acme}/bots/bare/", headers=bearer(member)))
    assert pair == {"bot": public, "organization": {"id": str(acme), "name": "Acme"}}
    assert _json(client.get("/v1/bots/bare/", headers=bearer(admin))) == public | {
        "organizationId": str(acme),
        "isPublic": True,
        "service": None,
        "tags": [],
        "createdAt": None,
        "updatedAt": None,
    }
    assert _json(client.get(f"/v1/requests/{run}/", headers=bearer(member))) == dict.fromkeys(
        _request_view(run), None
    ) | {"id": str(run), "createdBy": {"name": "Ada"}, "organization": {"name": "Acme"}}


def test_ids_of_another_type_show_as_text(client, world, db):
    """Another writer may use ids that are no ObjectId: they are listed, as text, and the
    document promises a string rather than the ObjectId pattern (the suite's client checks)."""
    user = world.user("Ada")
    member, admin = world.token(user=user), world.token(user=world.user("Root", role="admin"))
    db.bots.insert_one(
        {"_id": "legacy-1", "slug": "legacy", "name": "L", "isPublic": True, "organization": 7}
    )
    db.botrequests.insert_one({"_id": 42, "bot": "legacy-1", "createdBy": user})

    bots = _json(client.get("/v1/bots/", headers=bearer(member)))["results"]
    detail = _json(client.get("/v1/bots/legacy/", headers=bearer(admin)))
    requests = _json(client.get("/v1/requests/", headers=bearer(member)))["results"]

    assert [bot["id"] for bot in bots] == ["legacy-1"]
    assert (detail["id"], detail["organizationId"]) == ("legacy-1", "7")
    assert [(run["id"], run["bot"]["slug"]) for run in requests] == [("42", "legacy")]
    assert client.get("/v1/requests/42/", headers=bearer(member)).status_code == 404
