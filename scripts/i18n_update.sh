#!/usr/bin/env bash
# Regenerates the message catalogues from the code: templates and Python (domain "django") and the
# page modules in static/js (domain "djangojs"), for every language under locale/. New strings come
# in untranslated (msgstr ""), changed ones come in fuzzy: translate them, remove the fuzzy flags,
# then compile (this script does that last step too). tests/i18n fails while any entry is
# untranslated or fuzzy, or while a marked string is missing from a catalogue.
# Needs GNU gettext (msgfmt, xgettext, msgmerge): apt-get install gettext.
# Usage: scripts/i18n_update.sh [--compile-only]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
command -v msgfmt >/dev/null 2>&1 || { echo "i18n_update: GNU gettext is missing: apt-get install gettext" >&2; exit 1; }
# The code the catalogues cover: not the virtualenv, run-time data, tests, the API (it stays
# English) or benchmark fixtures.
ignore=(--ignore=var --ignore=tests --ignore=api --ignore=bench --ignore=docs --ignore=deploy --ignore=charts/fixtures
        --ignore=backups/fixtures --ignore=node_modules)
if [ "${1:-}" != --compile-only ]; then
  "$PY" manage.py makemessages --locale=zh_Hans --no-location --no-obsolete "${ignore[@]}"
  "$PY" manage.py makemessages --locale=zh_Hans --domain=djangojs --no-location --no-obsolete "${ignore[@]}" --ignore=var/static
  # Sorted by msgid, so catalogues merged from several branches differ only where strings do.
  for po in locale/*/LC_MESSAGES/*.po; do msgcat --sort-output --output-file="$po" "$po"; done
fi
"$PY" manage.py compilemessages --locale=zh_Hans --ignore=.venv --ignore=var
# What is left to translate: "N translated messages" alone means the catalogue is complete.
for po in locale/*/LC_MESSAGES/*.po; do printf '%s: ' "$po"; msgfmt --statistics --output-file=/dev/null "$po"; done
