#!/usr/bin/env bash
# `make bench [ONLY=name,...]`: fill a throw-away PostgreSQL to benchmark scale, measure, write bench/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh bench
exec .venv/bin/python -m bench.run "$@"
