"""HTTP caching: a strong ETag on every 200, a 304 for a matching If-None-Match.

Every response is personal (it depends on the caller's token), so shared caches must not
keep it and a client must revalidate before reuse: `private, no-cache`. Revalidation is
cheap for the client (an empty 304), not for us: the body is still built to compute its hash.
"""

from flask import Flask, Response, request

CACHE_CONTROL = "private, no-cache"


def _conditional(response: Response) -> Response:
    """A streamed body (a download) has no tag: it would have to be read whole first."""
    if (
        request.method in ("GET", "HEAD")
        and response.status_code == 200
        and not response.is_streamed
    ):
        response.add_etag()
        response.make_conditional(request)
    response.headers["Cache-Control"] = CACHE_CONTROL
    return response


def init_app(app: Flask) -> None:
    app.after_request(_conditional)
