"""An app served over real HTTP in a thread, for clients that cannot use the test client (a
browser, a generated client)."""

import contextlib
import threading

from werkzeug.serving import make_server


@contextlib.contextmanager
def served(app):
    """Yields the base URL; the server stops with the block."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
