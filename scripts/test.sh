#!/usr/bin/env bash
# `make test`: the whole suite against real PostgreSQL, Redis, a Celery worker, ffmpeg and Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test
exec .venv/bin/python -m scripts.test_harness "$@"
