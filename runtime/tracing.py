"""OpenTelemetry tracing: a server span per request, a child span per MongoDB command it sends.

Configured by OpenTelemetry's own `OTEL_*` variables alone (docs/deployment.md#tracing), read
by the SDK: the exporter's endpoint, headers and timeout, the service name, the sampler, the
batch queue. Off, with nothing imported or started, unless an OTLP endpoint is set
(`runtime/config.py`, `TRACING`).

Each process sets up its own provider, when its first app is built: a gunicorn worker after
the fork (the master builds its app with tracing off, gunicorn.conf.py), since the batch
exporter's thread does not survive a fork. The pymongo listener is registered before the app's
clients exist, because a MongoClient copies the listeners registered when it is made.

Spans go to the collector from a background thread in batches, dropped when its bounded queue
is full: a collector that is down or slow changes no answer and holds up no request.

What a span holds is chosen so that nothing secret leaves: the server span's URL attributes
lose their query string (filters are values, `web/request_log.py` keeps only their names),
command spans carry the command's name and collection and never its document, and a database
command that no request sent (the change streams', a probe's ping) starts no trace of its own.
"""

import functools
import logging

from flask import Flask
from opentelemetry import trace

# The attributes of a server span that may carry the request's query string.
_URL_ATTRIBUTES = ("http.target", "http.url", "url.full", "url.query")
# Probes are asked every few seconds by every orchestrator; a trace of each is noise.
_UNTRACED_PATHS = "healthz,readyz"


class TraceFilter(logging.Filter):
    """On the log handler (runtime/logs.py): a record made inside a traced request gets the
    ids of its span, so a log line leads to its trace and back."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            record.trace_id = trace.format_trace_id(context.trace_id)
            record.span_id = trace.format_span_id(context.span_id)
        return True


@functools.cache
def _provider():
    """This process's provider and its pymongo listener, once."""
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
    provider = TracerProvider(resource=resource, sampler=RequestsOnly(configured))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    PymongoInstrumentor().instrument(tracer_provider=provider)
    return provider


def _without_query(span, status: str, headers) -> None:
    """The Flask instrumentation's response hook, the last word on the server span's
    attributes (its request hook comes before they are set): the URLs without their query."""
    if not span.is_recording():
        return
    for key in _URL_ATTRIBUTES:
        value = span.attributes.get(key)
        if isinstance(value, str) and (key == "url.query" or "?" in value):
            span.set_attribute(key, "" if key == "url.query" else value.split("?", 1)[0])


def init_app(app: Flask) -> None:
    """Before the app's database clients are made (`runtime.database`, `runtime.changes`)."""
    if not app.config["TRACING"]:
        return
    from opentelemetry.instrumentation.flask import FlaskInstrumentor

    FlaskInstrumentor.instrument_app(
        app,
        tracer_provider=_provider(),
        excluded_urls=_UNTRACED_PATHS,
        response_hook=_without_query,
        enable_commenter=False,  # comments for SQL drivers; MongoDB has none
    )
