"""gunicorn settings for `make serve` and production (`gunicorn wsgi:app` reads this file).

Each worker process builds its own app and MongoClient after the fork (no preloading), as
pymongo requires. Threads serve concurrent requests while others wait on the database; the
app lets one fewer than GUNICORN_THREADS wait on it, so that a stalled database never
holds up /healthz (DATABASE_PERMITS, runtime/admission.py).

The master first builds the app once, as each worker will, and throws it away: a setting
that cannot be used stops gunicorn here with one line, instead of workers failing to boot
one after another with a traceback each. It also asks the database, once, whether it runs
change streams, and warns if not (runtime/changes.py).
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

from runtime.config import ConfigError, optional_port, server_settings_from_env

_METRICS_DIR_PREFIX = "bot-catalogue-metrics-"

try:
    # gunicorn is how production runs: without MONGODB_URI it would serve the embedded
    # database's address, healthy-looking and empty. `make serve`, the tests and the benchmark
    # set it themselves.
    if not os.environ.get("MONGODB_URI"):
        raise ConfigError("MONGODB_URI", "must be set to run under gunicorn (docs/deployment.md).")
    server_settings = server_settings_from_env(os.environ)
    host = server_settings["HOST"]
    metrics_port = optional_port(os.environ, "METRICS_PORT")
    # Workers write their figures to files there, for the master to sum (web/metrics.py).
    # Set before the app is imported: prometheus_client picks its storage on import. Kept when
    # already set, as it is when the master reads this file again on SIGHUP.
    if metrics_port and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix=_METRICS_DIR_PREFIX)
    from app import create_app
    from runtime import changes, logs
    from web import metrics

    # Tracing starts in each worker, after the fork (runtime/tracing.py).
    checked = create_app({"TRACING": False})
    changes.warn_if_refused(checked)
    checked.extensions["mongo"].close()
    metrics_host = checked.config["METRICS_HOST"]
    bind = f"{host}:{server_settings['PORT']}"
    workers = server_settings["GUNICORN_WORKERS"]
    # A thread for each live feed a worker serves, besides those of ordinary requests
    # (runtime/request_feeds.py).
    threads = server_settings["GUNICORN_THREADS"] + server_settings["FEED_CONNECTIONS"]
    timeout = server_settings["GUNICORN_TIMEOUT"]
except ConfigError as error:
    sys.exit(f"Error: {error.format_message()}")
# gunicorn's own lines (start, workers, stop, its errors) as JSON, like the app's.
logconfig_dict = logs.CONFIG
logger_class = "web.gunicorn_worker.Logger"
# gthread, with the errors gunicorn answers itself (414, 431, 400) in the JSON error body.
worker_class = "web.gunicorn_worker.JSONErrorWorker"
# The longest request line gunicorn serves (its default is 4,094 octets): HTTP asks servers
# to serve at least 8,000, as a long query string of ids may need.
limit_request_line = 8190
graceful_timeout = 10
keepalive = 5
# gunicorn 27's control socket has one default path per user: several instances on a host
# (workers of other projects, benchmarks) would contend for it.
control_socket_disable = True
# Forwarded headers are the app's to read, as TRUSTED_PROXIES says (Werkzeug's ProxyFix);
# gunicorn would otherwise believe X-Forwarded-Proto and its kin from any local peer.
forwarded_allow_ips = ""


def when_ready(server) -> None:
    """The master alone holds the metrics port; workers only write their figures."""
    if metrics_port:
        try:
            metrics.serve_workers(metrics_port, metrics_host)
        except ConfigError as error:
            sys.exit(f"Error: {error.format_message()}")


def on_exit(server) -> None:
    """The figures of a stopped server are gone with it: the next start begins at zero."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory and Path(directory).name.startswith(_METRICS_DIR_PREFIX):
        shutil.rmtree(directory, ignore_errors=True)
