"""OpenTelemetry tracing through gunicorn with 2 workers, received by an OTLP/HTTP receiver
the test starts (tests/support/otlp_receiver.py), decoded with opentelemetry-proto: what a
collector gets, how it nests, and what it never holds (docs/deployment.md#tracing)."""

import datetime as dt
import json
import os
import secrets
import subprocess
import sys
import time

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from bench.otlp_receiver import OtlpReceiver, attributes
from tests.support import ROOT
from tests.support.factories import World, bearer
from tests.support.mcp_calls import HEADERS

FILTER_VALUE = "Zanzibar-filter-value"
# The batch goes out every 200 ms rather than 5 s, so that the test waits less.
QUICK_BATCHES = {"OTEL_BSP_SCHEDULE_DELAY": "200"}
STREAM_ROUNDS = 2.5
# Far below the exporter's timeout (10 s), which a request would wait out were it to wait.
PROMPT = 2.0
# A filtered list, a page of requests (its summaries read side by side) and a streamed export.
PATHS = (
    f"/v1/bots/?name={FILTER_VALUE}",
    "/v1/requests/",
    "/v1/requests/export?createdFrom=2026-01-01&createdTo=2026-02-01&format=csv",
)


def _traceparent() -> tuple[str, str, str]:
    """(header, trace id, span id) of a caller's own span, in hexadecimal."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


@pytest.fixture
def receiver():
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture
def scene(wire_db):
    world = World(wire_db)
    acme = world.organization()
    ada = world.user("Ada", organizations=[acme])
    bot = world.bot("writer", organization=acme)
    for day in range(1, 4):
        world.bot_request(
            bot=bot, created_by=ada, organization=acme, createdAt=dt.datetime(2026, 1, day)
        )
    return {"token": world.token(user=ada), "acme": acme}


def test_each_request_is_a_server_span_over_its_database_commands(
    gunicorn, receiver, scene, open_connections
):
    server = gunicorn({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, **QUICK_BATCHES})
    connections = open_connections(server)
    token, sent = scene["token"], {}
    for number, connection in enumerate(connections):
        for index, path in enumerate(PATHS):
            header, trace_id, span_id = _traceparent()
            headers = {**bearer(token), "traceparent": header, "X-Request-ID": f"w{number}-{index}"}
            status, _, _ = server.request("GET", path, headers, connection)
            assert status == 200
            sent[trace_id] = (span_id, f"w{number}-{index}")

    def complete(spans) -> bool:
        servers = {span.trace_id.hex() for _, span in spans if span.kind == Span.SPAN_KIND_SERVER}
        return servers >= set(sent)

    spans = [span for _, span in receiver.wait_for(complete)]
    for trace_id, (caller_span, _) in sent.items():
        in_trace = [span for span in spans if span.trace_id.hex() == trace_id]
        [root] = [span for span in in_trace if span.kind == Span.SPAN_KIND_SERVER]
        assert root.parent_span_id.hex() == caller_span
        commands = [span for span in in_trace if span.kind == Span.SPAN_KIND_CLIENT]
        assert commands, trace_id
        assert {span.parent_span_id for span in commands} == {root.span_id}
        for command in commands:
            assert attributes(command.attributes)["db.system"] == "mongodb"
            assert root.start_time_unix_nano <= command.start_time_unix_nano
            assert command.end_time_unix_nano <= root.end_time_unix_nano
    lines = server.log().splitlines()
    logged = [json.loads(line) for line in lines if line.startswith("{") and "trace_id" in line]
    by_request = {line["requestId"]: line for line in logged if "requestId" in line}
    processes = set()
    for trace_id, (_, request_id) in sent.items():
        line = by_request[request_id]
        assert line["trace_id"] == trace_id and len(line["span_id"]) == 16
        processes.add(line["process"])
    assert len(processes) == 2, "each worker traces its own requests"
    assert "Failed to detach context" not in server.log()


def test_no_token_query_value_or_stray_trace_reaches_the_collector(
    gunicorn, receiver, scene, open_connections
):
    """The change streams' commands, the probes' and each second's `getMore` start no trace of
    their own; no attribute holds the token or a filter's value."""
    server = gunicorn({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, **QUICK_BATCHES})
    header, trace_id, _ = _traceparent()
    for path in (f"/v1/bots/?name={FILTER_VALUE}", "/readyz", "/healthz"):
        headers = {**bearer(scene["token"]), "traceparent": header}
        assert server.request("GET", path, headers)[0] == 200
    receiver.wait_for(lambda spans: any(s.kind == Span.SPAN_KIND_SERVER for _, s in spans))
    # Time for the change streams of both workers to ask again (each second), and for the
    # batches after that to leave.
    time.sleep(STREAM_ROUNDS)
    spans = receiver.spans()

    assert {span.trace_id.hex() for _, span in spans} == {trace_id}
    assert [span.name for _, span in spans if span.kind == Span.SPAN_KIND_SERVER] == [
        "GET /v1/bots/"
    ]
    received = b"".join(receiver.bodies)
    assert scene["token"].encode() not in received
    assert FILTER_VALUE.encode() not in received
    for resource, span in spans:
        assert resource["service.name"] == "bot-catalogue"
        for value in attributes(span.attributes).values():
            assert FILTER_VALUE not in str(value) and "Bearer" not in str(value)


def test_a_collector_that_hangs_holds_up_no_request_and_its_queue_stays_bounded(
    gunicorn, receiver, scene
):
    """The spans wait in each worker's queue of 8 and the rest are dropped; the requests do
    not wait for them. (Were spans sent as each request ends, each would wait out the
    exporter's timeout, 10 s.)"""
    receiver.hold()
    bounded = {"OTEL_BSP_MAX_QUEUE_SIZE": "8", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "8"}
    server = gunicorn(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, **QUICK_BATCHES, **bounded}
    )
    answers = []
    for _ in range(30):
        started = time.monotonic()
        status = server.request("GET", "/v1/bots/", bearer(scene["token"]))[0]
        answers.append((status, time.monotonic() - started < PROMPT))
    receiver.release()
    time.sleep(STREAM_ROUNDS)

    assert answers == [(200, True)] * 30
    received = [s for _, s in receiver.spans() if s.kind == Span.SPAN_KIND_SERVER]
    assert len(received) < 30, "a full queue drops spans"


def test_a_collector_that_is_down_changes_no_answer_and_holds_up_no_exit(gunicorn, scene):
    """The spans left at exit get a second to leave (runtime/tracing.py), not the exporter's
    10 s, which would outlast gunicorn's graceful timeout."""
    server = gunicorn({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9/", **QUICK_BATCHES})
    statuses = [server.request("GET", "/v1/bots/", bearer(scene["token"]))[0] for _ in range(10)]
    started = time.monotonic()
    server.stop()
    stopping = time.monotonic() - started

    assert statuses == [200] * 10
    assert stopping < 5, f"gunicorn took {stopping:.1f} s to stop"
    assert "Traceback" not in server.log()


@pytest.mark.parametrize(
    "environment",
    [{}, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9/", "OTEL_SDK_DISABLED": "true"}],
)
def test_without_an_endpoint_nothing_of_the_sdk_is_loaded(environment):
    """Off costs nothing: no provider, no exporter, no instrumentation imported."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    program = (
        "import sys, mongomock\n"
        "from app import create_app\n"
        "create_app({'TESTING': True}, mongo_client=mongomock.MongoClient())\n"
        "print(sorted(name for name in sys.modules if name.startswith('opentelemetry.sdk')"
        " or name.startswith('opentelemetry.instrumentation')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env={**clean, **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_an_mcp_tool_call_is_traced_as_the_get_it_makes_inside_the_mcp_request(
    gunicorn, receiver, scene
):
    """blueprints/agents.py: the tool's GET is a server span of its own, in the trace of the
    `POST /mcp` the caller sent, below it; its commands below the GET."""
    server = gunicorn({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, **QUICK_BATCHES})
    header, trace_id, span_id = _traceparent()
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "list_bot_requests", "arguments": {"limit": 2}}}  # fmt: skip
    headers = {**bearer(scene["token"]), **HEADERS, "traceparent": header}
    connection = server.connection()
    connection.request("POST", "/mcp", body=json.dumps(message), headers=headers)
    answer = connection.getresponse()
    assert answer.status == 200 and json.load(answer)["result"]["isError"] is False
    connection.close()

    def complete(spans) -> bool:
        names = {span.name for _, span in spans if span.trace_id.hex() == trace_id}
        return {"POST /mcp", "GET /v1/requests/"} <= names

    in_trace = [span for _, span in receiver.wait_for(complete) if span.trace_id.hex() == trace_id]
    by_id = {span.span_id: span for span in in_trace}
    [outer] = [span for span in in_trace if span.name == "POST /mcp"]
    [inner] = [span for span in in_trace if span.name == "GET /v1/requests/"]
    assert outer.parent_span_id.hex() == span_id
    ancestor = inner
    while ancestor.parent_span_id in by_id and ancestor is not outer:
        ancestor = by_id[ancestor.parent_span_id]
    assert ancestor is outer, "the GET is below the POST /mcp"
    commands = [span for span in in_trace if span.kind == Span.SPAN_KIND_CLIENT]
    assert commands and {span.parent_span_id for span in commands} <= {inner.span_id, outer.span_id}
