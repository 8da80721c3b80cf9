"""The sampler that keeps a trace to what a request did (runtime/tracing.py).

A database command sent outside any request (a change stream's `getMore` every second, the
ping of `/readyz`, which is not traced) would otherwise be the root of a trace of its own:
noise at the collector, a stray trace per second per worker. A client span without a parent
is dropped; everything else is the configured sampler's to decide.
"""

from opentelemetry import trace
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import SpanKind


class RequestsOnly(Sampler):
    def __init__(self, configured: Sampler):
        self._configured = configured

    def should_sample(
        self, parent_context, trace_id, name, kind=None, attributes=None, links=None,
        trace_state=None,
    ) -> SamplingResult:  # fmt: skip
        parent = trace.get_current_span(parent_context).get_span_context()
        if kind == SpanKind.CLIENT and not parent.is_valid:
            return SamplingResult(Decision.DROP)
        return self._configured.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )

    def get_description(self) -> str:
        return f"RequestsOnly{{{self._configured.get_description()}}}"
