#!/usr/bin/env bash
# Installs what is missing, and only that: Debian packages (when root), the venv, Python packages.
# Usage: scripts/bootstrap.sh run|test|bench
set -euo pipefail
cd "$(dirname "$0")/.."
purpose="${1:-run}"

debs=()
command -v ffmpeg >/dev/null 2>&1 || debs+=(ffmpeg)
command -v ffprobe >/dev/null 2>&1 || debs+=(ffmpeg)
if [ "$purpose" != run ]; then
  command -v redis-server >/dev/null 2>&1 || debs+=(redis-server)
  { command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || debs+=(postgresql)
  command -v psql >/dev/null 2>&1 || debs+=(postgresql-client)
fi
if [ "$purpose" = test ]; then
  [ -x /usr/bin/chromium ] || debs+=(chromium fonts-dejavu-core)
fi
if [ ${#debs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "bootstrap: installing Debian packages: ${debs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null
  else
    echo "bootstrap: missing Debian packages (${debs[*]}); run as root or install them: apt-get install ${debs[*]}" >&2
    exit 1
  fi
fi

PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv with $PY"
  "$PY" -m venv .venv
fi
# A local checkout gets the runtime packages and the tools (requirements-dev.txt includes
# requirements.txt); the image installs requirements.txt alone. The stamp hashes both files, so an
# edit to either reinstalls.
stamp=.venv/.requirements.sha256
want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing Python packages (requirements-dev.txt, with requirements.txt)"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi
