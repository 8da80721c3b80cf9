"""HTTP caching: a strong ETag on every 200, a 304 for a matching If-None-Match.

Every response is personal (it depends on the caller's token), so shared caches must not
keep it and a client must revalidate before reuse: `private, no-cache`. A 304 spends none of
the caller's rate limit (web/rate_limits.py), and for a cached bot, whose bytes and tag are
kept (web/rendered.py), builds no body; elsewhere the body is built to compute its hash.

`Date` is the server's to write, as gunicorn and Flask's development server both do on every
answer: gunicorn drops an app's own, and the development server would send it twice.
"""

from flask import Flask, Response, request

CACHE_CONTROL = "private, no-cache"


# What makes a request conditional (RFC 9110, 13.1), as WSGI names the headers; only such a
# request is compared.
_CONDITIONS = (
    "HTTP_IF_NONE_MATCH", "HTTP_IF_MATCH", "HTTP_IF_MODIFIED_SINCE", "HTTP_IF_UNMODIFIED_SINCE"
)  # fmt: skip


def _conditional(response: Response) -> Response:
    """A streamed body (a download) has no tag: it would have to be read whole first."""
    served = request._get_current_object()  # once: each read through the proxy costs more
    if (
        served.method in ("GET", "HEAD")
        and response.status_code == 200
        and not response.is_streamed
    ):
        response.add_etag()
        if any(condition in served.environ for condition in _CONDITIONS):
            response.make_conditional(served)
            del response.headers["Date"]  # which `make_conditional` adds
    response.headers["Cache-Control"] = CACHE_CONTROL
    return response


def init_app(app: Flask) -> None:
    app.after_request(_conditional)
