"""gunicorn settings for `make serve` and production (`gunicorn wsgi:app` reads this file).

Each worker process builds its own app and MongoClient after the fork (no preloading), as
pymongo requires. Threads serve concurrent requests while others wait on the database.
"""

import os

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '5000')}"
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_class = "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 10
keepalive = 5
# gunicorn 27's control socket has one default path per user: several instances on a host
# (workers of other projects, benchmarks) would contend for it.
control_socket_disable = True
# Forwarded headers are the app's to read, as TRUSTED_PROXIES says (Werkzeug's ProxyFix);
# gunicorn would otherwise believe X-Forwarded-Proto and its kin from any local peer.
forwarded_allow_ips = ""
