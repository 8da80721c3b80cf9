"""The threads that run the independent queries of one request side by side."""

import contextvars
import os
from concurrent.futures import Future, ThreadPoolExecutor
from threading import Lock

POOL_THREADS = 8

_pool: ThreadPoolExecutor | None = None
_pool_lock = Lock()


def _forget_pool() -> None:
    """A forked worker inherits the pool object but not its threads."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def submit(function, *args) -> Future:
    """Run independent queries of one request side by side; pymongo clients are thread-safe.

    Each runs in a copy of the caller's context, which carries the request's deadline
    (`pymongo.timeout` keeps it in a context variable, which a pool thread does not inherit).
    """
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="query")
        return _pool.submit(contextvars.copy_context().run, function, *args)
