# VidQA Studio images. Stages:
#   builder  compilers and headers; builds the virtualenv in /opt/venv
#   runtime  slim Python + ffmpeg, the venv, the code and the collected static files (no compilers)
#   nginx    the official nginx image + deploy/nginx.conf + the same collected static files
#   app      runtime as the non-root user with gunicorn as the command (the default target)
#
#   docker build -t vidqa-studio .                       # the app (web, worker, migrate)
#   docker build --target nginx -t vidqa-studio-nginx .  # the front server
# docker-compose.yml builds both; deploy/README.md explains the set-up. No `# syntax=` line on
# purpose: the build needs no Dockerfile front end fetched from a registry, so it also runs offline.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG NGINX_IMAGE=nginx:1.28-alpine
# The app user; the media volume must be writable by this uid.
ARG APP_UID=10001
ARG APP_GID=10001


FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# Wheels cover today's requirements; the toolchain is here so a package that only ships an sdist
# still builds, and it never reaches the runtime image.
# Debian package versions are not pinned: the base image fixes the release (bookworm), and exact
# pins would break the build at every security update.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential libpq-dev \
    && rm -rf /var/lib/apt/lists/*

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

# Requirements alone first, so a code change does not reinstall every package. The runtime set
# only: the tests' tools (requirements-dev.txt) never reach the image.
COPY requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt


FROM ${PYTHON_IMAGE} AS runtime

ARG APP_UID
ARG APP_GID

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    VIDQA_VAR_DIR=/app/var \
    DJANGO_STATIC_ROOT=/app/var/static \
    DJANGO_MEDIA_ROOT=/app/var/media \
    PORT=8000

# ffmpeg/ffprobe from Debian. scenedetect-headless brings the headless OpenCV, whose wheel carries
# its own libraries: cv2 needs no libGL or GLib (the import check below fails the build otherwise).
# tini reaps ffmpeg children and forwards signals.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ffmpeg tini \
    && rm -rf /var/lib/apt/lists/*

# --no-log-init: a high uid would otherwise grow a huge sparse /var/log/lastlog.
RUN groupadd --gid "${APP_GID}" app \
    && useradd --uid "${APP_UID}" --gid app --no-log-init --create-home --home-dir /home/app \
       --shell /usr/sbin/nologin app

COPY --from=builder /opt/venv /opt/venv

WORKDIR /app
COPY . .

# collectstatic needs importable settings but no real secret, database or broker: the dummy values
# below exist for this one command only and do not persist in the image. Base settings, because
# production refuses to load without the real variables.
RUN DJANGO_SETTINGS_MODULE=config.settings.base \
    DJANGO_SECRET_KEY=collectstatic-at-build-time-only \
    DATABASE_URL=sqlite:////tmp/collectstatic.sqlite3 \
    REDIS_URL='' \
    VIDQA_VAR_DIR=/tmp/collectstatic-var \
    python manage.py collectstatic --noinput \
    && rm -rf /tmp/collectstatic-var /tmp/collectstatic.sqlite3 \
    && python -m compileall -q /app \
    && chmod 0755 deploy/entrypoint.sh \
    && mkdir -p /app/var/media/.tmp \
    && chown "${APP_UID}:${APP_GID}" /app/var /app/var/media /app/var/media/.tmp

# Fail the build, not the first request, if a native dependency or a binary is missing.
RUN python -c "import cv2, psycopg2" \
    && ffmpeg -hide_banner -version >/dev/null \
    && ffprobe -hide_banner -version >/dev/null


FROM ${NGINX_IMAGE} AS nginx

# Static files come from the app build, so nginx always serves the files of the same version.
COPY deploy/nginx.conf /etc/nginx/conf.d/default.conf
COPY --from=runtime /app/var/static /srv/static
# Writes the resolver from this container's /etc/resolv.conf before nginx starts, so the image
# works under Docker, podman and Kubernetes alike; then hands over to the base image's entrypoint.
# Run through sh: POSIX shell only (the alpine image has no bash), and no executable bit needed.
COPY deploy/nginx-entrypoint.sh /usr/local/bin/vidqa-nginx-entrypoint.sh
ENTRYPOINT ["/bin/sh", "/usr/local/bin/vidqa-nginx-entrypoint.sh"]
CMD ["nginx", "-g", "daemon off;"]


FROM runtime AS app

ARG APP_UID
ARG APP_GID

# Temporary files (uploads being received, ffmpeg work files) on the media volume: the upload is
# then renamed into place instead of copied, and big files never fill the container's own layer.
ENV TMPDIR=/app/var/media/.tmp

USER ${APP_UID}:${APP_GID}
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "/app/deploy/healthcheck.py"]

ENTRYPOINT ["/usr/bin/tini", "--", "/app/deploy/entrypoint.sh"]
CMD ["gunicorn", "--config", "/app/deploy/gunicorn.conf.py", "config.wsgi:application"]
