"""A small OTLP/HTTP trace receiver, for `make bench` (tracing on against off) and the tests
(tests/deployment/test_tracing.py): what a collector such as Jaeger or the OpenTelemetry
Collector would receive, decoded with `opentelemetry-proto`.

It answers `POST /v1/traces` (protobuf, optionally gzip) with an empty success; `hold()` makes
it stop answering until `release()`, as a collector that hangs would.
"""

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class OtlpReceiver:
    def __init__(self):
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver._open.wait()
                with receiver._lock:
                    receiver.bodies.append(body)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "OtlpReceiver":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._open.set()
        self._server.shutdown()
        self._server.server_close()

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def spans(self) -> list[tuple[dict, object]]:
        """(resource attributes, span) of every span received so far."""
        found = []
        with self._lock:
            bodies = list(self.bodies)
        for body in bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    found += [(resource, span) for span in scope_spans.spans]
        return found

    def wait_for(self, condition, timeout: float = 30.0) -> list:
        """The spans, once `condition(spans)` holds; fails the test after `timeout`."""
        deadline = time.monotonic() + timeout
        while not condition(spans := self.spans()):
            assert time.monotonic() < deadline, f"the spans never came: {len(spans)} received"
            time.sleep(0.1)
        return spans


def attributes(values) -> dict:
    """An OTLP attribute list as a dict of plain values."""
    found = {}
    for value in values:
        kind = value.value.WhichOneof("value")
        found[value.key] = getattr(value.value, kind) if kind else None
    return found
