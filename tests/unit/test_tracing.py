"""The pieces of runtime/tracing.py that need no server: what a failed command's span says,
and which spans the sampler keeps (the rest is tests/deployment/test_tracing.py)."""

from types import SimpleNamespace

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Decision
from opentelemetry.trace import SpanKind, Status, StatusCode

from runtime.trace_sampling import RequestsOnly
from runtime.tracing import _failure_code_only


def test_a_failed_command_says_its_code_name_not_its_message():
    tracer = TracerProvider(shutdown_on_exit=False).get_tracer(__name__)
    span = tracer.start_span("botcatalogue.find", kind=SpanKind.CLIENT)
    span.set_status(Status(StatusCode.ERROR, "bad value: 'the-secret-filter'"))
    failure = {"errmsg": "bad value: 'the-secret-filter'", "codeName": "BadValue", "code": 2}

    _failure_code_only(span, SimpleNamespace(failure=failure))

    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "BadValue"


def test_a_command_outside_any_request_starts_no_trace():
    sampler = RequestsOnly(ALWAYS_ON)
    tracer = TracerProvider(sampler=sampler, shutdown_on_exit=False).get_tracer(__name__)
    request = tracer.start_span("GET /v1/bots/", kind=SpanKind.SERVER)
    within = trace.set_span_in_context(request)

    assert not tracer.start_span("botcatalogue.getMore", kind=SpanKind.CLIENT).is_recording()
    assert tracer.start_span("botcatalogue.find", within, kind=SpanKind.CLIENT).is_recording()
    assert request.is_recording()
    assert sampler.should_sample(None, 1, "x", SpanKind.CLIENT).decision is Decision.DROP
    assert "AlwaysOnSampler" in sampler.get_description()
