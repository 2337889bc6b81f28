#!/usr/bin/env bash
# `make lmms-eval-check`: lmms-eval itself runs the demo release's lmms_eval/ tasks against the fake OpenAI
# server, and its accuracy must equal a hand computation and our own scoring (tests/releases/test_lmms_eval_run.py).
# Opt-in, not part of `make test`: lmms-eval needs torch (gigabytes). Give either
#   LMMS_EVAL=<path of an lmms-eval executable>   (its environment needs decord or torchcodec for video), or
#   LMMS_EVAL_VENV=<folder>   to install lmms-eval 0.7.3 and decord into a virtualenv there first (once).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${LMMS_EVAL:-}" ] && [ -n "${LMMS_EVAL_VENV:-}" ]; then
  if [ ! -x "$LMMS_EVAL_VENV/bin/lmms-eval" ]; then
    .venv/bin/python -m venv "$LMMS_EVAL_VENV"
    "$LMMS_EVAL_VENV/bin/pip" install "lmms-eval==0.7.3" decord
  fi
  LMMS_EVAL="$LMMS_EVAL_VENV/bin/lmms-eval"
fi
if [ -z "${LMMS_EVAL:-}" ] || [ ! -x "$LMMS_EVAL" ]; then
  echo "lmms-eval-check: set LMMS_EVAL=<lmms-eval executable> or LMMS_EVAL_VENV=<folder to install it in>" >&2
  exit 2
fi
export LMMS_EVAL
exec bash scripts/test.sh tests/releases/test_lmms_eval_run.py -q -s
