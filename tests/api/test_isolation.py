"""Tenant isolation, proven exhaustively (OWASP API1, broken object level authorization).

A world of organizations, members, non-members, admins and organization tokens is built;
for every caller × endpoint × object, the expected answer is computed here from the rules of
docs/api.md (Who sees what) alone — independently of access/policy.py — and compared with
what the API returns.
Any extra id, any missing id and any wrong status is a failure.
"""

import json
import threading
import time
from dataclasses import dataclass, field

from bson import ObjectId
from prometheus_client import REGISTRY

from tests.conftest import TEST_SETTINGS
from tests.support.factories import World, bearer
from tests.support.mcp_calls import ToolsAsHttp

ORGS = ("A", "B", "C")
# name: (memberships, admin)
USERS = {
    "alice": (("A",), False),
    "bob": (("A", "B"), False),
    "carol": ((), False),
    "dave": (("C",), True),
    "erin": ((), True),
}
# slug: (owning organization or None, isPublic)
BOTS = {
    "pub-none": (None, True),
    "priv-none": (None, False),
    **{f"{kind}-{org.lower()}": (org, kind == "pub") for org in ORGS for kind in ("pub", "priv")},
}
# (creator, organization or None, bot slug)
REQUESTS = (
    ("alice", "A", "priv-a"),
    ("alice", None, "pub-none"),
    ("alice", "B", "pub-b"),
    ("bob", "A", "pub-a"),
    ("bob", "B", "priv-b"),
    ("bob", None, "priv-none"),
    ("carol", None, "pub-none"),
    ("carol", "A", "pub-a"),
    ("dave", "C", "priv-c"),
    ("dave", "A", "pub-a"),
    ("erin", None, "pub-c"),
)


@dataclass(frozen=True)
class Who:
    """A caller as docs/api.md describes it: a user, or an organization's token."""

    label: str
    user: str | None = None
    organization: str | None = None

    @property
    def memberships(self) -> frozenset[str]:
        return frozenset(USERS[self.user][0]) if self.user else frozenset()

    @property
    def admin(self) -> bool:
        return bool(self.user) and USERS[self.user][1]

    def represents(self, org: str | None) -> bool:
        """A member of org, or org's own token."""
        return org is not None and (org in self.memberships or org == self.organization)


CALLERS = [Who(name, user=name) for name in USERS] + [
    Who(f"token-{org}", organization=org) for org in ORGS
]


def expected_bot_list(who: Who, custom: bool) -> set[str]:
    if custom:
        mine = who.memberships | ({who.organization} if who.organization else set())
        return {slug for slug, (org, _) in BOTS.items() if org in mine}
    if who.admin:
        return set(BOTS)
    if who.user:
        return {slug for slug, (org, public) in BOTS.items() if public or org in who.memberships}
    return {slug for slug, (_, public) in BOTS.items() if public}


def expected_bot(who: Who, slug: str) -> int:
    org, public = BOTS[slug]
    if who.admin or public or who.represents(org):
        return 200
    return 404


def expected_request_list(who: Who) -> tuple[int, set[int]]:
    if not who.user:
        return 403, set()
    return 200, {
        index
        for index, (creator, org, _) in enumerate(REQUESTS)
        if creator == who.user or org in who.memberships
    }


def expected_org_request(who: Who, org: str, index: int) -> int:
    creator, request_org, _ = REQUESTS[index]
    if not who.user and who.organization != org:
        return 403
    if request_org != org:
        return 404
    if who.represents(org) or creator == who.user:
        return 200
    return 404


@dataclass
class Built:
    orgs: dict[str, ObjectId] = field(default_factory=dict)
    users: dict[str, ObjectId] = field(default_factory=dict)
    bots: dict[str, ObjectId] = field(default_factory=dict)
    requests: list[ObjectId] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)


def build(world) -> Built:
    built = build_callers(world)
    for creator, org, slug in REQUESTS:
        built.requests.append(
            world.bot_request(
                bot=built.bots[slug],
                created_by=built.users[creator],
                organization=built.orgs.get(org),
            )
        )
    return built


def build_callers(world) -> Built:
    """Everything but the requests."""
    built = Built()
    for org in ORGS:
        built.orgs[org] = world.organization(f"Org {org}")
    for name, (memberships, admin) in USERS.items():
        built.users[name] = world.user(
            name.title(),
            organizations=[built.orgs[org] for org in memberships],
            role="admin" if admin else "user",
        )
    for slug, (org, public) in BOTS.items():
        built.bots[slug] = world.bot(slug, organization=built.orgs.get(org), is_public=public)
    for who in CALLERS:
        if who.user:
            built.tokens[who.label] = world.token(user=built.users[who.user])
        else:
            built.tokens[who.label] = world.token(organization=built.orgs[who.organization])
    return built


class Checker:
    def __init__(self, client, built: Built):
        self.client = client
        self.built = built
        self.problems: list[str] = []
        self.slug_of = {bot_id: slug for slug, bot_id in built.bots.items()}
        self.index_of = {request_id: i for i, request_id in enumerate(built.requests)}

    def get(self, who: Who, path: str):
        return self.client.get(path, headers=bearer(self.built.tokens[who.label]))

    def expect_status(self, who: Who, path: str, status: int):
        response = self.get(who, path)
        if response.status_code != status:
            self.problems.append(
                f"{who.label} GET {path}: {response.status_code}, expected {status}"
            )
        return response

    def expect_list(self, who: Who, path: str, status: int, ids: set, key):
        response = self.expect_status(who, path, status)
        if status != 200 or response.status_code != 200:
            return
        body = response.get_json()
        got = {key(item["id"]) for item in body["results"]}
        if got != ids or body["totalResults"] != len(ids):
            extra, missing = sorted(map(str, got - ids)), sorted(map(str, ids - got))
            self.problems.append(f"{who.label} GET {path}: extra {extra}, missing {missing}")

    def bot_key(self, bot_id: str) -> str:
        return self.slug_of.get(ObjectId(bot_id), bot_id)

    def request_key(self, request_id: str) -> int | str:
        return self.index_of.get(ObjectId(request_id), request_id)


def test_every_caller_sees_exactly_what_the_contract_allows(client, world):
    assert problems(client, build(world)) == []


def test_with_the_caches_on_every_caller_still_sees_exactly_what_the_contract_allows(
    cached_app, wire_db
):
    """Twice: once filling the token and catalogue caches, once answered from them."""
    built = build(World(wire_db))
    client = cached_app().test_client()
    assert problems(client, built) == []
    before = _lookups()

    assert problems(client, built) == []

    counted = {key: value - before[key] for key, value in _lookups().items()}
    assert counted["tokens", "miss"] == 0, "every caller was cached"
    assert counted["tokens", "hit"] > counted["tokens", "off"], counted
    assert counted["catalogue", "hit"] > counted["catalogue", "miss"], counted


def _lookups() -> dict[tuple[str, str], float]:
    """This process's cache lookups, by cache and result (runtime/exact_cache.py)."""
    return {
        (cache, result): REGISTRY.get_sample_value(
            "botcatalogue_cache_lookups_total", {"cache": cache, "result": result}
        )
        for cache in ("tokens", "catalogue")
        for result in ("hit", "miss", "off")
    }


def problems(client, built: Built) -> list[str]:
    """Every caller × endpoint × object; what differs from the contract, one line each."""
    check = Checker(client, built)
    unknown_org = ObjectId()

    for who in CALLERS:
        for custom in (False, True):
            path = f"/v1/bots/?limit=100&custom={str(custom).lower()}"
            check.expect_list(who, path, 200, expected_bot_list(who, custom), check.bot_key)

        for slug in BOTS:
            response = check.expect_status(who, f"/v1/bots/{slug}/", expected_bot(who, slug))
            if response.status_code == 200:
                body = response.get_json()
                if body["id"] != str(built.bots[slug]):
                    check.problems.append(f"{who.label} /v1/bots/{slug}/: wrong bot {body['id']}")
                if ("isPublic" in body) != who.admin:
                    check.problems.append(
                        f"{who.label} /v1/bots/{slug}/: wrong view {sorted(body)}"
                    )

        status, indexes = expected_request_list(who)
        check.expect_list(who, "/v1/requests/?limit=100", status, indexes, check.request_key)
        for index, request_id in enumerate(built.requests):
            single = 200 if index in indexes else (403 if status == 403 else 404)
            check.expect_status(who, f"/v1/requests/{request_id}/", single)

        for org, org_id in [*built.orgs.items(), ("unknown", unknown_org)]:
            allowed = who.represents(org)
            base = f"/v1/organizations/{org_id}"
            org_bots = {slug for slug, (owner, _) in BOTS.items() if owner == org}
            check.expect_list(
                who, f"{base}/bots/?limit=100", 200 if allowed else 403, org_bots, check.bot_key
            )
            for slug in BOTS:
                status_8 = 403 if not allowed else (200 if slug in org_bots else 404)
                check.expect_status(who, f"{base}/bots/{slug}/", status_8)
            org_requests = {i for i, (_, owner, _) in enumerate(REQUESTS) if owner == org}
            check.expect_list(
                who,
                f"{base}/requests/?limit=100",
                200 if allowed else 403,
                org_requests,
                check.request_key,
            )
            for index, request_id in enumerate(built.requests):
                check.expect_status(
                    who, f"{base}/requests/{request_id}/", expected_org_request(who, org, index)
                )
    return check.problems


def test_every_feed_sends_exactly_what_its_caller_may_see(wire_db, make_app):
    """The live feeds (docs/api.md#live-feed), on the wire server, which runs change streams:
    every caller's feed and every organization's is opened first (or refused, as its list
    is), then the matrix's requests are written, then one closing request per user and per
    organization. Each feed is read up to its own closing request: what came is exactly what
    the caller may see of everything written until then, in the order written."""
    world = World(wire_db)
    built = build_callers(world)
    app = make_app(
        {**TEST_SETTINGS, "MONGODB_DB": wire_db.name, "FEED_CONNECTIONS": 64}, wire_db.client
    )
    rows = [*REQUESTS, *((user, None, "pub-none") for user in USERS),
            *((None, org, "pub-none") for org in ORGS)]  # fmt: skip
    written: list[str] = []
    all_written = threading.Event()
    readers = []
    for who in CALLERS:
        paths = {"mine": "/v1/requests/feed"} | {
            org: f"/v1/organizations/{org_id}/requests/feed" for org, org_id in built.orgs.items()
        }
        for scope, path in paths.items():
            allowed = bool(who.user) if scope == "mine" else who.represents(scope)
            reader = _FeedReader(app, path, built.tokens[who.label], written, all_written)
            readers.append((who, scope, allowed, reader))
            reader.start()
    for *_, reader in readers:
        reader.opened.wait(10)
    for creator, org, slug in rows:
        request_id = world.bot_request(
            bot=built.bots[slug],
            created_by=built.users.get(creator),
            organization=built.orgs.get(org),
        )
        written.append(str(request_id))
    for who, scope, allowed, reader in readers:
        reader.closing = written[_closing(who, scope)] if allowed else None
    all_written.set()
    for *_, reader in readers:
        reader.join(30)

    statuses = [
        f"{who.label} {scope}: {reader.status}"
        for who, scope, allowed, reader in readers
        if reader.status != (200 if allowed else 403)
    ]
    assert statuses == []
    for who, scope, allowed, reader in readers:
        if not allowed:
            continue
        expected = [
            written[index]
            for index, (creator, org, _) in enumerate(rows[: _closing(who, scope) + 1])
            if (org == scope if scope != "mine" else creator == who.user or org in who.memberships)
        ]
        assert reader.ids == expected, (who.label, scope, reader.failure)


def _closing(who: Who, scope: str) -> int:
    """Where a feed's closing request is among those written: after the matrix's, the
    users' (for a caller's own feed), then the organizations'."""
    if scope == "mine":
        return len(REQUESTS) + list(USERS).index(who.user)
    return len(REQUESTS) + len(USERS) + ORGS.index(scope)


class _FeedReader(threading.Thread):
    """One feed, opened and read in a thread of its own, as gunicorn serves it: a stream
    holds its request's context for as long as it runs. Its first part is read at once (the
    feed answered and follows the stream); then, once every request is written, the ids its
    events bring, up to its `closing` request."""

    def __init__(self, app, path: str, token: str, written: list, all_written: threading.Event):
        super().__init__(daemon=True)
        self._client = app.test_client()
        self._path, self._token = path, token
        self._all_written = all_written
        self.opened = threading.Event()
        self.status: int | None = None
        self.closing: str | None = None
        self.ids: list[str] = []
        self.failure: str | None = None

    def run(self) -> None:
        response = self._client.get(self._path, headers=bearer(self._token), buffered=False)
        self.status = response.status_code
        try:
            if self.status == 200:
                assert next(response.response) == b"retry: 1000\n\n"
            self.opened.set()
            if self.status == 200 and self._all_written.wait(30):
                self._read(response)
        except Exception as error:  # told by the test's assertion on `ids`
            self.failure = repr(error)
        finally:
            self.opened.set()
            response.close()

    def _read(self, response) -> None:
        """Up to `closing`, or, if it never comes, until a keep-alive after 20 s."""
        deadline = time.monotonic() + 20
        for chunk in response.response:
            for line in chunk.decode().splitlines():
                if line.startswith("data: "):
                    self.ids.append(json.loads(line[len("data: ") :])["id"])
            if (self.ids and self.ids[-1] == self.closing) or time.monotonic() > deadline:
                return


def test_through_the_mcp_tools_every_caller_sees_exactly_what_the_contract_allows(client, world):
    """The same callers, objects and expectations, each GET made as the tool call that stands
    for it (blueprints/agents.py): the same items and the same refusals."""
    assert problems(ToolsAsHttp(client), build(world)) == []
