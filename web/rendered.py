"""Answers of the exact caches kept as the bytes they were sent as, with their ETag: a cached
bot is dumped and encoded once per worker, not once per request, and a request that
revalidates it (`If-None-Match`) gets its 304 without a body being built
(docs/api.md#conditional-requests).

The exact cache hands out the same object for as long as its entry holds
(runtime/exact_cache.py), and a change replaces the entry, so the object's identity, with
the path and query string that select what of it is shown, names the bytes: a kept answer is
found by both, and only while it still holds that very object. Whatever else shapes an
answer (the caller's view of a bot) is part of the cache's key, hence of the object.
"""

import threading
from collections.abc import Callable

from cachetools import LRUCache
from flask import Flask, Response, current_app, request
from werkzeug.http import generate_etag


class _Kept:
    __slots__ = ("answer", "body", "etag")

    def __init__(self, answer, body: bytes):
        self.answer, self.body, self.etag = answer, body, generate_etag(body)


class RenderedAnswers:
    """At most `size` encoded answers, the least recently sent dropped first."""

    def __init__(self, size: int):
        self._kept = LRUCache(maxsize=max(size, 1))
        self._lock = threading.Lock()

    def response(self, app: Flask, answer, dump: Callable[[], object]) -> Response:
        """The 200 of `answer` as `dump()` shows it, encoded as `jsonify` would, with its
        ETag; `dump` runs only when no bytes are kept for this answer and URL."""
        key = (id(answer), request._get_current_object().full_path)  # not through the proxy
        with self._lock:
            kept = self._kept.get(key)
        if kept is None or kept.answer is not answer:
            kept = _Kept(answer, app.json.response(dump()).get_data())
            with self._lock:
                self._kept[key] = kept
        response = Response(kept.body, mimetype=app.json.mimetype)
        response.set_etag(kept.etag)
        return response


def init_app(app: Flask) -> None:
    app.extensions["rendered_answers"] = RenderedAnswers(app.config["CATALOGUE_CACHE_SIZE"])


def rendered(answer, dump: Callable[[], object]) -> Response:
    app = current_app._get_current_object()  # once: each read through the proxy costs more
    return app.extensions["rendered_answers"].response(app, answer, dump)
