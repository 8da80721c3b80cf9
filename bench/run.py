"""`make bench`: the API under load beside the floor of its own database work.

Generates (or reuses) the data set in the embedded database (or `MONGODB_URI`), creates the
indexes, serves the app with gunicorn on a free loopback port and drives each endpoint kind
with `wrk`; beside each, the *floor*: the same repository calls made directly with pymongo
(no HTTP, no serialization), at the same concurrency, in the same run. Then what
authenticating costs each request, which the floors leave out: the caller's lookup (the
token with its user or organization, one aggregation), timed the same way: a request makes
it unless its worker's token cache holds the caller (on by default, kept exact by a change
stream). Then
the rows that the exact caches serve (bot rows, and the request rows, whose callers and
summaries they hold) once more, with the caches off; and each bot row's answer served by
Eve over the same data (bench/eve.py), the anchor the bot rows are held to; and a cached bot
by slug against a bare Flask app returning its bytes (bench/bare.py); and a bot by slug and
one request as the MCP tool call that makes the same GET (POST /mcp). One bot row,
"bots list under load", is measured on every side while BUSY_CONNECTIONS read an
organization's requests from the service without pause: uncached work that keeps the
database busy, under which the caches must stay on. Then the cost of
serializing a page of 100 bot requests, and exports of the heavy organization's last 30 and
365 days against one pymongo cursor over the same requests (bench/exports.py). Then the
live feeds of one worker (bench/feeds.py): events per second, write to event, and the other
endpoints with every feed slot held.
Results go to bench/results/latest.json (bench/results/partial.json with BENCH_ONLY).

Environment: BENCH_SCALE (1 = 200 organizations, 2,000 users, 5,000 bots, 200,000 requests),
BENCH_REQUESTS (the number of requests alone), BENCH_SECONDS per endpoint and side (3, or
four times one request when that is longer), BENCH_CONNECTIONS (4; 1 for an endpoint that
takes more than 0.25 s alone; each worker gets one thread more than this, so that its
database permits never refuse the benchmark's own connections), BENCH_GUNICORN (extra
gunicorn flags, e.g. "--workers 4"), BENCH_ONLY (comma-separated endpoint names; `export`
for the export rows, `feed` for the live feeds'), MONGODB_URI. gunicorn inherits the environment, so
`DATABASE_PERMITS=0 make bench` measures without admission control.
"""

import contextlib
import datetime as dt
import functools
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import pymongo

from access import policy
from access.callers import caller_for
from bench import dataset, eve, exports, feeds, otlp_receiver, servers
from repositories import change_images
from repositories.bot_requests import BotRequestListQuery, BotRequestRepository
from repositories.bots import BotListQuery, BotRepository
from repositories.bson_order import WALK, Position, Resume, sort_order
from repositories.indexes import ensure_indexes
from repositories.summaries import Summaries
from repositories.tokens import TokenRepository
from repositories.usage import pipeline as usage_pipeline
from runtime.bearer_tokens import hash_token
from runtime.config import settings_from_env
from runtime.exact_cache import ExactCache
from schemas import cursors
from schemas.bot_requests import BotRequestSchema
from schemas.bots import BotSchema
from schemas.queries import OrganizationBotRequestListQuerySchema
from schemas.selection import stored_paths

RESULTS = servers.ROOT / "bench" / "results"
VAR = servers.ROOT / "var" / "bench"
DATASET_VERSION = 2
SLOW = 0.25  # seconds: an endpoint slower than this alone is driven by one connection
# Measured again with the caches off: every bot row, and the request rows (callers, summaries).
CACHED_ROWS = ("bots list", "bots by name", "bots by tags", "bots by service", "bot by slug",
               "user's requests", "organization's requests", "one request",
               "bots list under load")  # fmt: skip
CACHES_OFF = {"TOKEN_CACHE_SECONDS": "0", "CATALOGUE_CACHE_SIZE": "0", "SUMMARY_CACHE_SIZE": "0"}
# The rows measured again with tracing on, in alternating rounds (docs/performance.md#tracing).
TRACED_ROWS = ("bot by slug", "one request")
TRACING_ROUNDS = 5
STALLED = 0.7  # a round below this share of its side's best ran during a stall
# The samplers tracing is measured with: OpenTelemetry's default, every trace; and one in ten.
TRACING_SAMPLERS = {
    "every": {},
    "tenth": {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"},
}
BUSY_CONNECTIONS = 4
# The rows measured against a bare Flask app returning the same bytes (bench/bare.py), in
# alternating rounds (docs/performance.md#the-framework-under-it).
BARE_ROWS = ("bot by slug",)
BARE_ROUNDS = 4
# The rows measured again as the MCP tool call that makes the same GET (blueprints/agents.py),
# in alternating rounds: the tool and the argument the path's last segment is.
MCP_ROWS = {"bot by slug": ("get_bot", "slug"), "one request": ("get_bot_request", "botRequestId")}
MCP_ROUNDS = 3
# Measured on one worker with none and with every feed slot held (docs/performance.md#live-feeds).
HELD_ROWS = ("bot by slug", "one request")
FEED_ROUNDS = 2


@dataclass
class Endpoint:
    name: str
    path: str
    token: str
    floor: Callable[[], object]
    eve: str | None = None  # the same answer's URL on the Eve anchor (bench/eve.py)
    # (path, token) that BUSY_CONNECTIONS ask of the service without pause while this row is
    # measured, on every server and on its floor alike: uncached work that keeps the database
    # busy, under which the exact caches must stay on (docs/performance.md#under-load).
    busy: tuple[str, str] | None = None
    body: str | None = None  # a POST body (an MCP tool call), sent instead of a GET


def env_number(name: str, default: float) -> float:
    return float(os.environ.get(name) or default)


def prepare(db, scale: dataset.Scale) -> float:
    """The data set and indexes, generated only when the stored one differs; seconds spent."""
    started = time.perf_counter()
    wanted = {"_id": "dataset", "version": DATASET_VERSION, **vars(scale)}
    if db.bench_meta.find_one({"_id": "dataset"}) != wanted:
        print(f"generating {scale} ...", flush=True)
        db.bench_meta.drop()
        dataset.generate(db, scale)
        db.bench_meta.insert_one(wanted)
    ensure_indexes(db)
    change_images.keep(db)  # for the feed rows, as `flask db init`
    return time.perf_counter() - started


def data_set(stack: contextlib.ExitStack, scale: dataset.Scale):
    """(URI, database) of the data set at `scale`, prepared: in MONGODB_URI's server, else in
    the embedded database, started here and stopped with `stack`."""
    uri = os.environ.get("MONGODB_URI") or stack.enter_context(servers.embedded_database(VAR))
    client = pymongo.MongoClient(uri, datetime_conversion="DATETIME_AUTO")
    stack.callback(client.close)
    db = client[f"bench_{scale.requests}"]
    prepare(db, scale)
    return uri, db


def caller(db, token: str):
    document = TokenRepository(db).find(hash_token(token))
    return caller_for(document, dataset.START + dataset.SPAN)


def endpoints(db) -> list[Endpoint]:
    """One typical call per endpoint kind, with the repository work it stands for."""
    user_token = dataset.user_token(0)
    user = caller(db, user_token)
    typical, heavy = dataset.object_id(1, 1), dataset.object_id(1, 0)
    typical_requests = f"/v1/organizations/{typical}/requests/"
    bots, requests = BotRepository(db), BotRequestRepository(db, uncached_summaries(db))
    tag = db.tags.find_one(sort=[("_id", 1)])["_id"]
    public_bot = db.bots.find_one({"isPublic": True}, sort=[("_id", 1)])["slug"]
    anchor = eve.paths(tag, dataset.object_id(3, 3), public_bot)  # service 3, by id
    one_request = db.botrequests.find_one({"createdBy": user.id}, sort=[("_id", 1)])["_id"]
    public_view = stored_paths(BotSchema, None)
    by_name = BotListQuery(sort=[("name", 1)], page=1, limit=10, reads=public_view)
    newest = BotRequestListQuery(
        sort=[("createdAt", -1)], page=1, limit=10, reads=stored_paths(BotRequestSchema, None)
    )
    visible_bots = policy.bots(user, False)
    mine = policy.bot_requests(user)
    heavy_requests = policy.organization(caller(db, dataset.organization_token(0)), heavy)
    # The data set's last 30 days: the heavy organization's usage over the default period.
    end = dataset.START + dataset.SPAN
    start = end - dt.timedelta(days=30)
    period = f"from={start:%Y-%m-%d}&to={end:%Y-%m-%d}"

    def usage(group_by: str) -> Endpoint:
        """Beside the endpoint, its one aggregation run directly."""
        stages = usage_pipeline(heavy_requests, start, end, group_by)
        return Endpoint(
            f"usage by {group_by} (30 days)",
            f"/v1/organizations/{heavy}/usage/?{period}&groupBy={group_by}",
            dataset.organization_token(0),
            lambda: list(db.botrequests.aggregate(stages)),
        )

    return [
        Endpoint("bots list", "/v1/bots/", user_token,
                 lambda: bots.find_page(visible_bots, by_name), anchor["bots list"]),
        Endpoint("bots by name", "/v1/bots/?name=ember", user_token,
                 lambda: bots.find_page(visible_bots, replace(by_name, name="ember")),
                 anchor["bots by name"]),
        Endpoint("bots by tags", f"/v1/bots/?tags={tag}", user_token,
                 lambda: bots.find_page(visible_bots, replace(by_name, tags=[tag])),
                 anchor["bots by tags"]),
        Endpoint("bots by service", "/v1/bots/?service=service%203", user_token,
                 lambda: bots.find_page(visible_bots, replace(by_name, service_name="service 3")),
                 anchor["bots by service"]),
        Endpoint("bot by slug", f"/v1/bots/{public_bot}/", user_token,
                 lambda: bots.get(policy.bot_access(user), public_bot, public_view),
                 anchor["bot by slug"]),
        Endpoint("user's requests", "/v1/requests/", user_token,
                 lambda: requests.find_page(mine, newest)),
        Endpoint("user's requests (count=none)", "/v1/requests/?count=none", user_token,
                 lambda: requests.find_page(mine, replace(newest, count="none"))),
        Endpoint("organization's requests", typical_requests, dataset.organization_token(1),
                 lambda: requests.find_page(policy.organization(
                     caller(db, dataset.organization_token(1)), typical), newest)),
        Endpoint("bots list under load", "/v1/bots/", user_token,
                 lambda: bots.find_page(visible_bots, by_name), anchor["bots list"],
                 busy=(typical_requests, dataset.organization_token(1))),
        Endpoint("one request", f"/v1/requests/{one_request}/", user_token,
                 lambda: requests.get(mine, one_request, newest.reads)),
        Endpoint("deep page (5000)", f"/v1/organizations/{heavy}/requests/?page=5000",
                 dataset.organization_token(0),
                 lambda: requests.find_page(policy.organization(
                     caller(db, dataset.organization_token(0)), heavy),
                     replace(newest, page=5000))),
        usage("bot"),
        usage("day"),
        *depth_rows(db, heavy, newest),
    ]  # fmt: skip


DEEP_PAGE = 5000  # the offset row's page: (5000 - 1) * 10 items into the heavy organization


def depth_rows(db, heavy, newest: BotRequestListQuery) -> list[Endpoint]:
    """The heavy organization's requests read deep: keyset page 1 and a keyset page as deep as
    the offset row's, beside it; and page 1 with and without its count."""
    token = dataset.organization_token(0)
    visibility = policy.organization(caller(db, token), heavy)
    requests = BotRequestRepository(db, uncached_summaries(db))
    path = f"/v1/organizations/{heavy}/requests/"
    total = db.botrequests.count_documents({"organization": heavy})
    # Not the walk's last page, which also reads the tail.
    depth = max(1, min((DEEP_PAGE - 1) * newest.limit, total - 10 * newest.limit))
    keyset = replace(newest, pagination="keyset")
    resume, cursor = deep_cursor(db, keyset, visibility, depth)
    deep = replace(keyset, cursor=resume)

    def row(name: str, query: str, paging: BotRequestListQuery) -> Endpoint:
        return Endpoint(name, f"{path}?{query}", token,
                        lambda: requests.find_page(visibility, paging))  # fmt: skip

    return [
        row("keyset page 1", "pagination=keyset", keyset),
        row(
            f"keyset deep ({depth} in)", f"cursor={cursor}" if cursor else "pagination=keyset", deep
        ),
        row("heavy page 1 (count=exact)", "count=exact", replace(newest, count="exact")),
        row("heavy page 1 (count=none)", "count=none", replace(newest, count="none")),
    ]


def uncached_summaries(db) -> Summaries:
    """The summaries of the repository's floor, read from the database every time: what the
    service does with its caches off."""
    return Summaries(ExactCache("floor", (), 0), lambda: db)


def deep_cursor(db, keyset, visibility, depth: int):
    """The resume position after the `depth`-th item, and its cursor as the API makes it;
    (None, None), page 1, in a data set too small to hold one."""
    order = sort_order(keyset.sort)
    items = list(db.botrequests.find(
        visibility.as_filter(), dict.fromkeys(order, 1), sort=list(order.items()),
        skip=depth - 1, limit=1,
    ))  # fmt: skip
    if not items:
        return None, None
    resume = Resume(WALK, Position.of(items[0], order))
    scope = OrganizationBotRequestListQuerySchema.cursor_scope
    return resume, cursors.encode(resume, keyset.sort, scope)


def authentication(db, seconds: float, connections: int) -> dict:
    """The lookup behind every request's caller, by token kind, as `floor` measures work."""
    tokens = TokenRepository(db)
    kinds = {
        "user token": dataset.user_token(0),
        "organization token": dataset.organization_token(1),
    }
    return {
        kind: floor(functools.partial(tokens.find, hash_token(token)), seconds, connections)
        for kind, token in kinds.items()
    }


def asked(base: str, endpoint: Endpoint) -> urllib.request.Request:
    """The request `endpoint` stands for: its GET, or its POST (a tool call) as wrk sends it
    (bench/report.lua)."""
    headers = {"Authorization": f"Bearer {endpoint.token}"}
    if endpoint.body is None:
        return urllib.request.Request(base + endpoint.path, headers=headers)
    headers.update({"Content-Type": "application/json", "Accept": "application/json",
                    "MCP-Protocol-Version": "2025-11-25"})  # fmt: skip
    return urllib.request.Request(base + endpoint.path, endpoint.body.encode(), headers)


def probe(base: str, endpoint: Endpoint) -> float:
    """Seconds of one warm request, alone."""
    request = asked(base, endpoint)
    timings = []
    for _ in range(2):
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
        timings.append(time.perf_counter() - started)
    return timings[-1]


@contextlib.contextmanager
def busy(base: str, endpoint: Endpoint):
    """While the block runs, BUSY_CONNECTIONS ask `endpoint.busy` of the service at `base`
    without pause (a second `wrk`), if the row has such a load."""
    if endpoint.busy is None:
        yield
        return
    path, token = endpoint.busy
    process = subprocess.Popen(
        servers.wrk(base + path, BUSY_CONNECTIONS, "1h", timeout="60s"),
        env={**os.environ, "BENCH_TOKEN": token},
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(1)  # every connection has a request under way
        yield
    finally:
        process.terminate()
        process.wait()


def load(base: str, endpoint: Endpoint, seconds: int, connections: int) -> dict:
    """`wrk` on one URL; requests/s, p50 and p99 in milliseconds."""
    output = subprocess.run(
        servers.wrk(base + endpoint.path, connections, f"{seconds}s", latency=True),
        env={**os.environ, "BENCH_TOKEN": endpoint.token,
             **({"BENCH_BODY": endpoint.body} if endpoint.body else {})},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    report = json.loads(output.strip().splitlines()[-1])
    return {
        "requests_per_s": report["requests"] / (report["duration_us"] / 1e6),
        "p50_ms": report["p50_us"] / 1000,
        "p99_ms": report["p99_us"] / 1000,
        "requests": report["requests"],
        "errors": report["socket_errors"] + report["non_2xx"],
    }


def measure_caches_off(
    db, base: str, service: str, endpoint: Endpoint, rows: list, seconds, connections
) -> None:
    """The row of `endpoint` gets its figures with the caches off, and on against off; a
    row's busy load is asked of the `service`, as when it was measured there. Then its floor
    with the caller's lookup, which a request makes with the token cache off, and the
    caches-off rate against it."""
    row = _row(rows, endpoint)
    with busy(service, endpoint):
        row["caches_off"] = _again(base, endpoint, "caches off", seconds, connections)
    row["ratio_caches_on_off"] = _rate(row["http"]) / _rate(row["caches_off"])
    tokens, token_hash = TokenRepository(db), hash_token(endpoint.token)

    def looked_up() -> None:
        tokens.find(token_hash)
        endpoint.floor()

    with busy(service, endpoint):
        row["floor_caches_off"] = floor(looked_up, row["seconds"], row["caches_off"]["connections"])
    row["ratio_caches_off_floor"] = _rate(row["caches_off"]) / _rate(row["floor_caches_off"])
    print(f" caches on / off {row['ratio_caches_on_off']:.2f}, off / floor with the lookup "
          f"{row['ratio_caches_off_floor']:.2f}", flush=True)  # fmt: skip


def measure_eve(
    base: str, service: str, endpoint: Endpoint, rows: list, seconds, connections
) -> None:
    """The row of `endpoint` gets Eve's figures for the same answer, and the service's rate
    (caches on, and off) against Eve's; a row's busy load is asked of the `service`."""
    row = _row(rows, endpoint)
    at_eve = replace(endpoint, path=endpoint.eve)
    with busy(service, endpoint):
        eve_figures = _again(base, at_eve, "Eve", seconds, connections)
    row["eve"] = {**eve_figures, "path": endpoint.eve}
    row["ratio_eve"] = _rate(row["http"]) / _rate(row["eve"])
    if "caches_off" in row:
        row["ratio_eve_caches_off"] = _rate(row["caches_off"]) / _rate(row["eve"])
    print(f" service / Eve {row['ratio_eve']:.2f}", flush=True)


def full_speed(rates) -> float:
    """The median of the rounds that ran at full speed. The embedded engine stalls for
    seconds now and then, and the caches go off meanwhile: a round it falls in runs at about
    half its rate, whichever side it is. The best round alone would take a fast outlier."""
    rates = list(rates)
    return statistics.median(rate for rate in rates if rate >= STALLED * max(rates))


def measure_tracing(
    base: str, traced: dict, endpoint: Endpoint, rows: list, seconds, connections
) -> None:
    """The row of `endpoint` gets its figures with tracing on (`traced`: a server per
    sampler, exporting to a receiver that listens), in rounds alternating with the same
    server with it off (`base`), so that every side sees the same machine; and each side's
    rate against off."""
    row = _row(rows, endpoint)
    servers_ = {"off": base, **traced}
    rounds = {side: [] for side in servers_}
    for side, server in traced.items():  # a traced server starts cold: warmed first
        _again(server, endpoint, f"tracing {side}, warming", 1, connections)
    for _ in range(TRACING_ROUNDS):
        for side, server in servers_.items():
            with busy(base, endpoint):
                rounds[side].append(
                    _again(server, endpoint, f"tracing {side}", seconds, connections)
                )
    rates = {side: full_speed(map(_rate, figures)) for side, figures in rounds.items()}
    row["tracing"] = {"rounds": rounds, "requests_per_s": rates}
    for side in traced:
        row[f"ratio_tracing_{side}_off"] = rates[side] / rates["off"]
        print(f" tracing {side} / off {rates[side] / rates['off']:.2f}", flush=True)


def measure_bare(
    uri: str, db, base: str, settings: dict, endpoint: Endpoint, rows: list, seconds, connections
) -> None:
    """The row of `endpoint` gets the figures of a bare Flask app returning the bytes the
    service returns for it (bench/bare.py), in rounds alternating with the service, and the
    service's rate against it."""
    row = _row(rows, endpoint)
    request = urllib.request.Request(
        base + endpoint.path, headers={"Authorization": f"Bearer {endpoint.token}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = VAR / "bare-body.json"
        body.write_bytes(response.read())
    env = {"BARE_BODY": str(body), "BARE_TOKEN": endpoint.token}
    with servers.gunicorn(
        uri,
        db.name,
        settings,
        (endpoint.path, endpoint.token),
        VAR / "bare.log",
        env=env,
        app="bench.bare:create_app()",
    ) as bare:
        rounds = {"service": [], "bare": []}
        for _ in range(BARE_ROUNDS):
            for side, server in (("service", base), ("bare", bare)):
                rounds[side].append(_again(server, endpoint, side, seconds, connections))
    rates = {side: full_speed(map(_rate, figures)) for side, figures in rounds.items()}
    row["bare"] = {"rounds": rounds, "requests_per_s": rates}
    row["ratio_bare"] = rates["service"] / rates["bare"]
    print(f" service / bare Flask {row['ratio_bare']:.2f}", flush=True)


def measure_mcp(base: str, endpoint: Endpoint, rows: list, seconds, connections) -> None:
    """The row of `endpoint` gets the figures of the MCP tool call that makes its GET, in
    rounds alternating with the GET itself, and the tool call's rate against the GET's."""
    row = _row(rows, endpoint)
    tool, argument = MCP_ROWS[endpoint.name]
    value = endpoint.path.rstrip("/").rpartition("/")[2]
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": tool, "arguments": {argument: value}}}  # fmt: skip
    called = replace(endpoint, path="/mcp", body=json.dumps(message))
    with urllib.request.urlopen(asked(base, called), timeout=30) as response:
        if json.load(response)["result"]["isError"]:  # a refusal is a 200 too: not measured
            raise SystemExit(f"{endpoint.name}: the tool call {tool} was refused")
    rounds = {"http": [], "mcp": []}
    for _ in range(MCP_ROUNDS):
        for side, measured in (("http", endpoint), ("mcp", called)):
            rounds[side].append(_again(base, measured, f"MCP {side}", seconds, connections))
    rates = {side: full_speed(map(_rate, figures)) for side, figures in rounds.items()}
    row["mcp"] = {"tool": tool, "rounds": rounds, "requests_per_s": rates}
    row["ratio_mcp"] = rates["mcp"] / rates["http"]
    print(f" MCP tool call / GET {row['ratio_mcp']:.2f}", flush=True)


def measure_feeds(uri: str, db, settings: dict, kinds: list[Endpoint], seconds, connections):
    """The feed rows (bench/feeds.py) on a gunicorn of one worker with feeds.SLOTS feed
    slots, each a thread besides those of ordinary requests, as gunicorn.conf.py gives them.
    Then HELD_ROWS and /healthz on that worker with every slot held against none, in
    alternating rounds."""
    one_worker = {**settings, "workers": "1",
                  "threads": str(int(settings["threads"]) + feeds.SLOTS)}  # fmt: skip
    env = {"FEED_CONNECTIONS": str(feeds.SLOTS), "GUNICORN_THREADS": settings["threads"]}
    healthz = Endpoint("healthz", "/healthz", "", floor=lambda: None)
    held_rows = [endpoint for endpoint in kinds if endpoint.name in HELD_ROWS] + [healthz]
    with servers.gunicorn(
        uri, db.name, one_worker, ("/healthz", ""), VAR / "gunicorn-feeds.log", env=env
    ) as base:
        # First, while the worker has created no thread for a feed yet: what one costs.
        before = feeds.worker_memory(base)
        with feeds.held(base, feeds.SLOTS):
            time.sleep(1)
            during = feeds.worker_memory(base)
        memory = {"worker_rss_mb": round(before / 2**20, 1),
                  "per_feed_kb": round((during - before) / feeds.SLOTS / 1024, 1)}  # fmt: skip
        print(f"{'feed, memory':26s} worker {memory['worker_rss_mb']} MB, "
              f"{memory['per_feed_kb']} kB more per feed held", flush=True)  # fmt: skip
        delivered = []
        for clients in feeds.CLIENTS:
            row = feeds.events(base, db, clients, seconds)
            delivered.append(row)
            print(
                f"{'feed, ' + str(clients) + ' clients':26s} {row['events_per_s']:8.1f} events/s "
                f"({row['events_per_s_per_client']:.1f} each, {row['missed']} missed) | write "
                f"to event p50 {row['latency_p50_ms']} p99 {row['latency_p99_ms']} ms",
                flush=True,
            )
        held = []
        for endpoint in held_rows:
            rounds = {"none": [], "held": []}
            for _ in range(FEED_ROUNDS):
                rounds["none"].append(_again(base, endpoint, "no feeds", seconds, connections))
                with feeds.held(base, feeds.SLOTS):
                    label = f"{feeds.SLOTS} feeds held"
                    rounds["held"].append(_again(base, endpoint, label, seconds, connections))
                print(flush=True)
            rates = {side: statistics.mean(map(_rate, figures)) for side, figures in rounds.items()}
            ratio = rates["held"] / rates["none"]
            held.append({"endpoint": endpoint.name, "rounds": rounds, "requests_per_s": rates,
                         "ratio_held_none": ratio})  # fmt: skip
            print(f"{endpoint.name:26s} feeds held / none {ratio:.2f}", flush=True)
    return {"slots": feeds.SLOTS, "writes_per_s": feeds.WRITES_PER_S, "events": delivered,
            "memory": memory, "held": held}  # fmt: skip


def _row(rows: list, endpoint: Endpoint) -> dict:
    return next(row for row in rows if row["endpoint"] == endpoint.name)


def _rate(http: dict) -> float:
    return http["requests_per_s"]


def _again(base: str, endpoint: Endpoint, server: str, seconds, connections) -> dict:
    """A row measured again on another server, driven as the first time was."""
    driven = drive(base, endpoint, f"{endpoint.name} ({server})", seconds, connections)
    return {**driven.http, "connections": driven.clients}


class Driven(NamedTuple):
    http: dict
    clients: int
    duration: int
    latency: float


def drive(base: str, endpoint: Endpoint, label: str, seconds, connections) -> Driven:
    """`endpoint` under load, its figures printed on a line left open for what follows.

    A slow endpoint gets one connection and time for a few requests: a queue of unanswered
    requests would measure the queue and spill into the floor's time."""
    latency = probe(base, endpoint)
    clients = connections if latency < SLOW else 1
    duration = max(seconds, math.ceil(4 * latency))
    http = load(base, endpoint, duration, clients)
    check_answers(label, http)
    print(
        f"{label:26s} http {http['requests_per_s']:8.1f}/s "
        f"p50 {http['p50_ms']:8.1f} p99 {http['p99_ms']:8.1f} ms |",
        end="",
    )
    return Driven(http, clients, duration, latency)


def check_answers(name: str, http: dict) -> None:
    """Failed requests are fast, so a row that counts them measures the failure: stop."""
    if http["errors"]:
        raise SystemExit(
            f"{name}: {http['errors']} of {http['requests']} requests failed or were not 2xx; "
            f"see {VAR / 'gunicorn.log'}"
        )


def floor(work: Callable[[], object], seconds: float, connections: int) -> dict:
    """The same database work from `connections` threads for `seconds`."""
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def drive():
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            work()
            with lock:
                latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    threads = [threading.Thread(target=drive) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    return {
        "requests_per_s": len(latencies) / elapsed,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "requests": len(latencies),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def machine() -> dict:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return {
        "date": dt.date.today().isoformat(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(memory_kb / 2**20, 1),
        "python": platform.python_version(),
        "pymongo": pymongo.version,
        "kernel": platform.release(),
    }


def main() -> None:
    scale = dataset.Scale.of(
        env_number("BENCH_SCALE", 1),
        int(os.environ["BENCH_REQUESTS"]) if os.environ.get("BENCH_REQUESTS") else None,
    )
    seconds = int(env_number("BENCH_SECONDS", 3))
    connections = int(env_number("BENCH_CONNECTIONS", 4))
    gunicorn_settings = servers.settings_for(connections)  # a row with errors stops the run
    extra = shlex.split(os.environ.get("BENCH_GUNICORN", ""))
    gunicorn_settings.update(
        zip((flag.removeprefix("--") for flag in extra[::2]), extra[1::2], strict=True)
    )
    only = {name.strip() for name in os.environ.get("BENCH_ONLY", "").split(",") if name.strip()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    VAR.mkdir(parents=True, exist_ok=True)

    with contextlib.ExitStack() as stack:
        uri = os.environ.get("MONGODB_URI")
        engine = "MONGODB_URI" if uri else "SecantusDB (embedded, secantusd-py)"
        if not uri:
            uri = stack.enter_context(servers.embedded_database(VAR))
        client = pymongo.MongoClient(uri, datetime_conversion="DATETIME_AUTO")
        stack.callback(client.close)
        db = client[f"bench_{scale.requests}"]
        preparation = prepare(db, scale)
        kinds = [e for e in endpoints(db) if not only or e.name in only]
        base = stack.enter_context(
            servers.gunicorn(uri, db.name, gunicorn_settings,
                             (kinds[0].path, kinds[0].token) if kinds else ("/healthz", ""),
                             VAR / "gunicorn.log")
        )  # fmt: skip
        rows = []
        for endpoint in kinds:
            with busy(base, endpoint):
                http, clients, duration, latency = drive(
                    base, endpoint, endpoint.name, seconds, connections
                )
            time.sleep(latency * clients)
            with busy(base, endpoint):
                direct = floor(endpoint.floor, duration, clients)
            row = {"endpoint": endpoint.name, "path": endpoint.path, "connections": clients,
                   "seconds": duration, "http": http, "floor": direct}  # fmt: skip
            row["ratio_requests_per_s"] = http["requests_per_s"] / direct["requests_per_s"]
            row["ratio_p50"] = http["p50_ms"] / direct["p50_ms"]
            rows.append(row)
            print(
                f" floor {direct['requests_per_s']:8.1f}/s p50 {direct['p50_ms']:8.1f} "
                f"p99 {direct['p99_ms']:8.1f} ms | ratio {row['ratio_requests_per_s']:.2f}",
                flush=True,
            )
        uncached = [endpoint for endpoint in kinds if endpoint.name in CACHED_ROWS]
        if uncached:
            probe_off = (uncached[0].path, uncached[0].token)
            log_off = VAR / "gunicorn-uncached.log"
            with servers.gunicorn(
                uri, db.name, gunicorn_settings, probe_off, log_off, env=CACHES_OFF
            ) as off:
                for endpoint in uncached:
                    measure_caches_off(db, off, base, endpoint, rows, seconds, connections)
        traced = [endpoint for endpoint in kinds if endpoint.name in TRACED_ROWS]
        if traced:
            receiver = stack.enter_context(otlp_receiver.OtlpReceiver())
            traced_servers = {}
            for side, sampler in TRACING_SAMPLERS.items():
                traced_servers[side] = stack.enter_context(
                    servers.gunicorn(
                        uri,
                        db.name,
                        gunicorn_settings,
                        (traced[0].path, traced[0].token),
                        VAR / f"gunicorn-traced-{side}.log",
                        env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, **sampler},
                    )
                )
            for endpoint in traced:
                measure_tracing(base, traced_servers, endpoint, rows, seconds, connections)
            print(f" the receiver got {len(receiver.spans())} spans", flush=True)
        for endpoint in [endpoint for endpoint in kinds if endpoint.name in BARE_ROWS]:
            measure_bare(uri, db, base, gunicorn_settings, endpoint, rows, seconds, connections)
        for endpoint in [endpoint for endpoint in kinds if endpoint.name in MCP_ROWS]:
            measure_mcp(base, endpoint, rows, seconds, connections)
        anchored = [endpoint for endpoint in kinds if endpoint.eve]
        if anchored:
            probe_eve = (anchored[0].eve, anchored[0].token)
            with servers.gunicorn(
                uri,
                db.name,
                gunicorn_settings,
                probe_eve,
                VAR / "eve.log",
                app="bench.eve:create_app()",
            ) as anchor:
                for endpoint in anchored:
                    measure_eve(anchor, base, endpoint, rows, seconds, connections)
        feed_rows = (
            measure_feeds(uri, db, gunicorn_settings, endpoints(db), seconds, connections)
            if not only or "feed" in only
            else None
        )
        measured = not only or "export" in only
        export_rows = [exports.measure(base, db, days) for days in (30, 365)] if measured else []
        for row in export_rows:
            http, direct = row["http"], row["floor"]
            print(
                f"{row['endpoint']:26s} http {http['rows_per_s']:8.1f} rows/s, first bytes "
                f"{http['first_bytes_s']:.2f} s | floor {direct['rows_per_s']:8.1f} rows/s | "
                f"ratio {row['ratio_rows_per_s']:.2f} ({http['rows']} rows)",
                flush=True,
            )
        lookups = authentication(db, seconds, connections)
        for kind, direct in lookups.items():
            print(
                f"{'auth: ' + kind:26s}{'':45s} | floor "
                f"{direct['requests_per_s']:8.1f}/s p50 {direct['p50_ms']:8.1f} "
                f"p99 {direct['p99_ms']:8.1f} ms",
                flush=True,
            )

    from bench.serialization import measure

    app_settings = settings_from_env(
        {**os.environ, "GUNICORN_THREADS": gunicorn_settings["threads"]}
    )

    results = {
        "machine": machine(),
        "engine": engine,
        "scale": vars(scale),
        "preparation_s": round(preparation, 1),
        "seconds_per_side": seconds,
        "connections": connections,
        "gunicorn": gunicorn_settings,
        "token_cache_seconds": app_settings["TOKEN_CACHE_SECONDS"],
        "catalogue_cache_size": app_settings["CATALOGUE_CACHE_SIZE"],
        "database_permits": app_settings["DATABASE_PERMITS"],
        "endpoints": rows,
        "exports": export_rows,
        "feeds": feed_rows,
        "authentication": lookups,
        "serialization": measure(),
        "median_ratio": statistics.median(row["ratio_requests_per_s"] for row in rows)
        if rows
        else None,
    }
    # A run of some rows (BENCH_ONLY) must not replace the whole run the docs quote.
    written = RESULTS / ("partial.json" if only else "latest.json")
    written.write_text(json.dumps(results, indent=2) + "\n")
    print(f"serialization of 100 requests: {results['serialization']['median_ms']:.2f} ms")
    print(f"wrote {written}")


if __name__ == "__main__":
    sys.exit(main())
