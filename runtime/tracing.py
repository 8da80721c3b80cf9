"""OpenTelemetry tracing: a server span per request, a child span per MongoDB command it sends.

Configured by OpenTelemetry's own `OTEL_*` variables alone (docs/deployment.md#tracing), read
by the SDK: the exporter's endpoint, headers and timeout, the service name, the sampler, the
batch queue. Off, with nothing of the SDK imported or started, unless an OTLP endpoint is set
(`runtime/config.py`, `TRACING`).

Each process sets up its own provider when its first app is built: a gunicorn worker after
the fork (the master builds its app with tracing off, gunicorn.conf.py), since the batch
exporter's thread does not survive a fork. The pymongo listener is registered before the app's
clients exist, because a MongoClient copies the listeners registered when it is made.

Spans go to the collector from a background thread in batches, dropped when its bounded queue
is full: a collector that is down or slow changes no answer and holds up no request.

The server span is ours, on OpenTelemetry's API, rather than opentelemetry-instrumentation-
flask's: that one cost a request twice the time (docs/performance.md#tracing) and writes the
query string, whose values may be secrets, into attributes that its hooks cannot take back
before they are set. Ours holds the method, route, path and status, never a query value or
a header; the command spans carry a command's name and collection, never its document; and
a database command that no request sent (the change streams', a probe's ping) starts no trace
of its own (`runtime/trace_sampling.py`).
"""

import atexit
import functools
import logging
import threading

from flask import Flask, Response, g, request
from opentelemetry import context, propagate, trace

EXIT_FLUSH_SECONDS = 1.0
# Probes are asked every few seconds by every orchestrator; a trace of each is noise.
_UNTRACED_PATHS = {"/healthz", "/readyz"}


class TraceFilter(logging.Filter):
    """On the log handler (runtime/logs.py): a record made inside a traced request gets the
    ids of its span, so a log line leads to its trace and back."""

    def filter(self, record: logging.LogRecord) -> bool:
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            record.trace_id = trace.format_trace_id(span.trace_id)
            record.span_id = trace.format_span_id(span.span_id)
        return True


@functools.cache
def _tracer() -> trace.Tracer:
    """This process's provider, its exporter and its pymongo listener, once."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.pymongo import PymongoInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from runtime.trace_sampling import RequestsOnly

    resource = Resource.create()
    if resource.attributes.get(SERVICE_NAME, "").startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "bot-catalogue"}))
    # The sampler OTEL_TRACES_SAMPLER names, as the SDK reads it, kept to requests' spans.
    configured = TracerProvider(resource=resource, shutdown_on_exit=False).sampler
    sampler = RequestsOnly(configured)
    provider = TracerProvider(resource=resource, sampler=sampler, shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    atexit.register(_flush_briefly, provider)
    PymongoInstrumentor().instrument(tracer_provider=provider, failed_hook=_failure_code_only)
    return provider.get_tracer(__name__)


def _flush_briefly(provider) -> None:
    """At exit, what the queue holds gets a second to leave. The SDK's own shutdown, and its
    flush, whatever timeout it is given, wait out the exporter's timeout (10 s) for a collector
    that is down, which would hold up every worker's restart past gunicorn's graceful timeout;
    a daemon thread that is still sending does not hold up the exit."""
    flushing = threading.Thread(target=provider.force_flush, name="trace-flush", daemon=True)
    flushing.start()
    flushing.join(EXIT_FLUSH_SECONDS)


def _failure_code_only(span, event) -> None:
    """A failed command's status says its error's code name (`BadValue`), not its message,
    which may quote what was asked."""
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, event.failure.get("codeName", "UnknownError")))


def _start_span() -> None:
    """The request's server span, current until the request ends (a streamed export's
    batches included), the caller's `traceparent` and `tracestate` its parent.

    Every sampled request pays for it, so it reads the request once and asks the
    propagators only when a header of theirs came."""
    asked = request._get_current_object()
    path = asked.path
    if path.rstrip("/") in _UNTRACED_PATHS:
        return
    method, rule = asked.method, asked.url_rule
    attributes = {"http.request.method": method, "url.path": path, "url.scheme": asked.scheme}
    if rule is not None:
        attributes["http.route"] = rule.rule
    propagator = propagate.get_global_textmap()
    headers = asked.headers
    parent = (
        propagator.extract(headers) if any(map(headers.__contains__, propagator.fields)) else None
    )
    span = _tracer().start_span(
        f"{method} {rule.rule}" if rule is not None else method,
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes=attributes,
    )
    g.trace = (span, context.attach(trace.set_span_in_context(span)))


def _record_status(response: Response) -> Response:
    span, _ = g.get("trace", (None, None))
    if span is not None:
        span.set_attribute("http.response.status_code", response.status_code)
        if response.status_code >= 500:
            span.set_status(trace.StatusCode.ERROR)
    return response


def _end_span(error: BaseException | None) -> None:
    span, token = g.pop("trace", (None, None))
    if span is not None:
        context.detach(token)
        span.end()


def init_app(app: Flask) -> None:
    """Before the app's database clients are made (`runtime.database`, `runtime.changes`),
    and before the app's other hooks, so that the span holds all they do: its status is
    recorded after theirs (Flask runs `after_request` hooks in reverse)."""
    if not app.config["TRACING"]:
        return
    _tracer()
    app.before_request(_start_span)
    app.after_request(_record_status)
    app.teardown_request(_end_span)
