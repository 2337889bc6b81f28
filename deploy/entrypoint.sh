#!/usr/bin/env bash
# Container entrypoint: checks the environment for the known roles, then runs the command.
#
#   gunicorn ...   the web server (the image's default command)
#   worker [...]   the Celery worker; concurrency from CELERY_CONCURRENCY, extra celery options after it
#   beat [...]     Celery beat, which sends the periodic tasks (settings' CELERY_BEAT_SCHEDULE); run ONE
#   migrate [...]  apply database migrations and exit (docker-compose's one-shot "migrate" service)
#   anything else  run as given, e.g. `python manage.py createsuperuser` or `bash`
set -euo pipefail

fail() {
  echo "entrypoint: $*" >&2
  exit 78  # EX_CONFIG: the container is misconfigured, restarting will not help
}

check_environment() {
  if [ "${DJANGO_SETTINGS_MODULE:-}" = config.settings.production ]; then
    [ -n "${DJANGO_SECRET_KEY:-}" ] || fail "DJANGO_SECRET_KEY is not set (see deploy/env.example)"
    [ -n "${DATABASE_URL:-}" ] || fail "DATABASE_URL is not set (see deploy/env.example)"
    # Without it the settings fall back to a file-system broker inside this container, which the
    # worker container cannot see: tasks would wait forever instead of failing loudly here.
    [ -n "${REDIS_URL:-}" ] || fail "REDIS_URL is not set: the web and worker containers share Celery tasks through Redis"
  fi
}

prepare_media() {
  local media="${DJANGO_MEDIA_ROOT:-/app/var/media}"
  [ -d "$media" ] && [ -w "$media" ] \
    || fail "$media must be a directory writable by uid $(id -u); a bind mount needs: chown -R $(id -u):$(id -g) <host dir>"
  if [ -n "${TMPDIR:-}" ]; then
    mkdir -p "$TMPDIR" || fail "cannot create TMPDIR=$TMPDIR"
    # Leftovers of uploads cut off mid-way. A day is far above the longest task (3 h) or upload.
    find "$TMPDIR" -mindepth 1 -mmin +1440 -delete 2>/dev/null || true
  fi
}

case "${1:-}" in
  gunicorn)
    check_environment
    prepare_media
    exec "$@"
    ;;
  worker)
    shift
    check_environment
    prepare_media
    exec celery -A config worker \
      --loglevel="${CELERY_LOG_LEVEL:-INFO}" \
      --concurrency="${CELERY_CONCURRENCY:-2}" \
      --max-tasks-per-child="${CELERY_MAX_TASKS_PER_CHILD:-100}" \
      "$@"
    ;;
  beat)
    shift
    check_environment
    # Its schedule file (when each task last ran) lives in VIDQA_VAR_DIR; losing it only means the
    # periodic tasks run once more at start. No media access needed.
    exec celery -A config beat \
      --loglevel="${CELERY_LOG_LEVEL:-INFO}" \
      --schedule="${VIDQA_VAR_DIR:-/app/var}/celerybeat-schedule" \
      "$@"
    ;;
  migrate)
    shift
    check_environment
    exec python manage.py migrate --noinput "$@"
    ;;
  *)
    exec "$@"
    ;;
esac
