"""Gunicorn settings for the container, from the environment (deploy/env.example lists them).

Only nginx talks to gunicorn; it streams uploads through without buffering them, so one request
can hold a thread for as long as a multi-gigabyte upload takes.
"""

import os

# Inside the container; the port is reachable only on the compose network, where nginx is the client.
bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"

# Threads, not sync workers: a long upload occupies one thread while the others serve, and the
# worker's heartbeat keeps beating, so `timeout` below never cuts off a slow upload or download.
worker_class = "gthread"
workers = int(os.environ.get("GUNICORN_WORKERS", "3"))
threads = int(os.environ.get("GUNICORN_THREADS", "8"))

# With gthread this is how long a worker may stay unresponsive as a whole (not one request), so a
# wedged process is replaced; request length is bounded by nginx's proxy timeouts (one hour).
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "300"))
# On `docker compose stop`/redeploy, requests in flight (uploads) get this long to finish.
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "90"))
keepalive = 5

# Recycle workers now and then so a slow leak cannot grow for ever; jitter keeps them from restarting together.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = max_requests // 10

# The heartbeat file on tmpfs: on the overlay file system its fchmod can stall the worker.
worker_tmp_dir = "/dev/shm"  # noqa: S108
# No runtime control socket: nothing uses it and it would need a writable $HOME.
control_socket_disable = True

accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# The client address nginx forwards, then the usual fields and the duration in seconds.
access_log_format = '%({x-forwarded-for}i)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s %(L)ss "%(f)s" "%(a)s"'
