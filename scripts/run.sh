#!/usr/bin/env bash
# `make run`: the demo on http://127.0.0.1:${PORT:-8000} with a real Celery worker beside it.
# The worker runs beat embedded (-B): periodic tasks such as the lapsed-lease sweep (settings'
# CELERY_BEAT_SCHEDULE) need no third process here; docker-compose runs beat as its own service.
#
# SQLite (var/db.sqlite3) and a file-system broker unless DATABASE_URL / REDIS_URL are set.
# The web server is Django's runserver: a local, single-user run wants DEBUG pages and static files
# without a collectstatic step, and --noreload keeps it to one process we can supervise (the
# autoreloader would fork a child that outlives a signal to its parent). It stays threaded, so the
# player's range requests do not queue behind page loads. Production uses gunicorn (Dockerfile).
# Both processes run in their own sessions: this script alone decides how they stop, so Ctrl-C
# stops the web server and lets the worker finish its shutdown instead of killing its pool mid-task.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${PORT:-8000}"
HOST=127.0.0.1
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
  echo "run: PORT must be a number from 1 to 65535, got '$PORT'" >&2
  exit 2
fi
export DJANGO_SETTINGS_MODULE=config.settings.base
export DJANGO_DEBUG="${DJANGO_DEBUG:-1}"
export PYTHONUNBUFFERED=1
VAR_DIR="${VIDQA_VAR_DIR:-$PWD/var}"
LOG_DIR="$VAR_DIR/log"
PY=.venv/bin/python

say() { printf 'run: %s\n' "$*"; }

worker_pid=""
web_pid=""
stopping=""
first_signal_us=""
hurry=""

# Stop one process group: SIGTERM, wait up to $3 seconds (2 s once hurried), then SIGKILL whatever
# is left of it.
stop_group() {
  local pid="$1" name="$2" grace="$3" i
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    kill -0 -- "-$pid" 2>/dev/null || break
    [ -n "$hurry" ] && ((i >= 20)) && break
    # A signal to our process group kills this sleep too: that must not end the script (set -e).
    sleep 0.1 || true
  done
  if kill -0 -- "-$pid" 2>/dev/null; then
    say "$name did not stop in time; killing it"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# A signal during the clean-up only hurries it: the script must live until both groups are gone,
# since the web server and the worker run in sessions of their own and no signal to our process
# group reaches them. GNU make forwards its own SIGTERM, so one `kill` of `make run`'s group
# arrives twice: a repeat within half a second of the first is the same request.
on_signal_again() {
  local now="${EPOCHREALTIME//[!0-9]/}"
  [ -n "$hurry" ] && return 0
  if [ -z "$first_signal_us" ] || ((now - first_signal_us > 500000)); then
    hurry=1
    say "stopping faster: anything still running after 2 s is killed"
  fi
}

stop_all() {
  trap on_signal_again INT TERM
  trap - EXIT
  local pid
  # The worker's warm shutdown lets running tasks finish; 20 s, then its whole pool is killed.
  stop_group "$web_pid" "the web server" 5
  web_pid=""
  stop_group "$worker_pid" "the worker" 20
  worker_pid=""
  # A job started just before the signal whose pid was not yet recorded.
  for pid in $(jobs -pr); do
    stop_group "$pid" "process $pid" 5
  done
}

on_signal() {
  trap on_signal_again INT TERM
  [ -n "$stopping" ] && return 0
  stopping=1
  first_signal_us="${EPOCHREALTIME//[!0-9]/}"
  echo
  say "stopping the web server and the worker …"
  stop_all
  say "stopped."
  exit "$1"
}

# Set before anything starts, so a signal at any point of the start-up goes through the same stop.
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'stop_all' EXIT

bash scripts/bootstrap.sh run
mkdir -p "$LOG_DIR"

port_free() {
  "$PY" - "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as runserver does: TIME_WAIT is not "taken"
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
}
if ! port_free "$PORT"; then
  echo "run: port $PORT on $HOST is already in use (another \`make run\`?)." >&2
  echo "run: stop whatever listens there, or pick another port: PORT=$((PORT + 1)) make run" >&2
  exit 1
fi

say "preparing the database"
"$PY" manage.py migrate --noinput -v 0
"$PY" manage.py load_demo
case "${DJANGO_DEBUG,,}" in
  1|true|yes|on) ;;  # runserver serves static files itself
  *) say "DJANGO_DEBUG is off: collecting static files for whitenoise"
     "$PY" manage.py collectstatic --noinput -v 0 ;;
esac

[ -f "$LOG_DIR/worker.log" ] && mv -f "$LOG_DIR/worker.log" "$LOG_DIR/worker.log.1"
[ -f "$LOG_DIR/web.log" ] && mv -f "$LOG_DIR/web.log" "$LOG_DIR/web.log.1"

say "starting the Celery worker with its periodic tasks (log: $LOG_DIR/worker.log)"
setsid .venv/bin/celery -A config worker --loglevel INFO --concurrency 2 \
  -B --schedule "$VAR_DIR/celerybeat-schedule" \
  </dev/null >"$LOG_DIR/worker.log" 2>&1 &
worker_pid=$!

say "starting the web server on http://$HOST:$PORT/ (log: $LOG_DIR/web.log)"
# The log goes to the terminal and to a file; tee ignores Ctrl-C so the last lines still arrive.
setsid "$PY" manage.py runserver --noreload "$HOST:$PORT" \
  </dev/null > >(trap '' INT; exec tee "$LOG_DIR/web.log") 2>&1 &
web_pid=$!

died() {
  local name="$1" pid="$2" log="$3" code=0
  wait "$pid" 2>/dev/null || code=$?
  # Its leader is gone, so nothing is left to shut down warmly: kill what remains of its group
  # (e.g. the worker's pool processes) at once instead of waiting out the grace period.
  kill -KILL -- "-$pid" 2>/dev/null || true
  if [ "$pid" = "$web_pid" ]; then web_pid=""; else worker_pid=""; fi
  echo >&2
  echo "run: the $name stopped unexpectedly (exit code $code). Last lines of $log:" >&2
  tail -n 30 "$log" >&2 || true
  stop_all
  exit 1
}

# Is this background job of ours still running? Asks bash's job table, not the process table.
running() {
  local pid
  for pid in $(jobs -rp); do
    [ "$pid" = "$1" ] && return 0
  done
  return 1
}

check_alive() {
  running "$web_pid" || died "web server" "$web_pid" "$LOG_DIR/web.log"
  running "$worker_pid" || died "worker" "$worker_pid" "$LOG_DIR/worker.log"
}

# Wait until the web server answers and the worker says it is ready.
ready=""
for ((i = 0; i < 900; i++)); do
  check_alive
  if [ -z "$ready" ] && (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then ready=web; fi
  if [ "$ready" = web ] && grep -q " ready\.$" "$LOG_DIR/worker.log" 2>/dev/null; then ready=both; break; fi
  sleep 0.2
done
if [ "$ready" != both ]; then
  echo "run: the web server and the worker did not both start within 3 minutes; see $LOG_DIR/web.log and $LOG_DIR/worker.log" >&2
  exit 1
fi

db="SQLite ($VAR_DIR/db.sqlite3)"
[ -n "${DATABASE_URL:-}" ] && db="${DATABASE_URL%%://*} (DATABASE_URL)"
broker="file system ($VAR_DIR/broker)"
[ -n "${REDIS_URL:-}" ] && broker="Redis (REDIS_URL)"
"$PY" - "http://$HOST:$PORT" "$db" "$broker" "$LOG_DIR" <<'EOF'
import sys

from demo.storyboard import DEMO_LOGINS, PROJECT_SLUG

url, db, broker, logs = sys.argv[1:]
lines = [
    f"VidQA Studio is running at {url}/",
    f"Demo project:  {url}/p/{PROJECT_SLUG}/",
    f"Admin site:    {url}/admin/",
    "",
    "Logins (user / password):",
    *(f"  {user:<10} / {password:<15} {role}" for user, password, role in DEMO_LOGINS),
    "",
    f"Database: {db}",
    f"Broker:   {broker}; Celery worker (with beat) log: {logs}/worker.log",
    "Press Ctrl-C to stop the web server and the worker.",
]
width = max(len(line) for line in lines)
print("", "+" + "-" * (width + 2) + "+", *(f"| {line:<{width}} |" for line in lines), "+" + "-" * (width + 2) + "+", "",
      sep="\n", flush=True)
EOF

# Both stay in the foreground: if either stops, stop the other and report. Polling bash's own job
# table: `wait -n` can miss a child reaped between two calls and then block forever, and `kill -0`
# can be fooled by a reused process id.
while true; do
  check_alive
  sleep 0.2
done
