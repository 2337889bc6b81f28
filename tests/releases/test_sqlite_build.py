"""The `make run` default is SQLite: the demo released in every format there, through the management command.

The rest of the suite runs on PostgreSQL, so SQL that only PostgreSQL understands (a collation, a
function) would otherwise first break on a new user's machine. This runs manage.py in a subprocess
with the defaults `make run` uses (no DATABASE_URL, no REDIS_URL, a fresh VIDQA_VAR_DIR).
"""

import os
import subprocess
import sys

from scripts.loopback_services import REPO

_NOT_INHERITED = {
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_MEDIA_ROOT",
    "DJANGO_STATIC_ROOT",
    "DJANGO_SETTINGS_MODULE",
    "VIDQA_VAR_DIR",
}
STATUSES = ["annotating", "submitted", "scored", "flagged", "accepted"]


def manage(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_demo_releases_in_every_format_on_sqlite(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    env["VIDQA_VAR_DIR"] = str(tmp_path / "var")
    for step in (("migrate", "--verbosity", "0"), ("load_demo",)):
        done = manage(env, *step)
        assert done.returncode == 0, done.stderr
    formats = [
        arg for f in ("svbench", "longvideobench", "mvpbench", "livibench", "generic") for arg in ("--format", f)
    ]
    statuses = [arg for s in STATUSES for arg in ("--status", s)]
    done = manage(
        env,
        "release",
        "create",
        "demo",
        "v1",
        *formats,
        *statuses,
        "--ratios",
        "train=0.5,test=0.5",
        "--sync",
        "--by",
        "admin",
    )
    assert done.returncode == 0, done.stderr + done.stdout
    shown = manage(env, "release", "show", "demo", "v1")
    assert shown.returncode == 0 and "Release v1 of demo: ready" in shown.stdout, shown.stdout + shown.stderr
    comments = tmp_path / "var" / "media" / "releases" / "demo" / "v1" / "livibench" / "comments"
    assert [p.name for p in comments.iterdir()] == ["kitchen_stream.jsonl"]
    assert len((comments / "kitchen_stream.jsonl").read_text().splitlines()) == 300
