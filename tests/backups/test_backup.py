"""`manage.py backup` and `restore`: the demo project backed up and restored into an empty database and
media folder gives every table the same row count and every media file the same checksum."""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg2
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from backups.services import DATABASE_FILE, MANIFEST_FILE, BackupRefused, backup_restore
from demo.services import demo_project_load
from scripts.loopback_services import REPO

_NOT_INHERITED = {
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_MEDIA_ROOT",
    "DJANGO_STATIC_ROOT",
    "DJANGO_SETTINGS_MODULE",
    "VIDQA_VAR_DIR",
}


def manage(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def checksums(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def pg_counts(cursor) -> dict[str, int]:
    cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
    tables = [t for (t,) in cursor.fetchall()]
    counts = {}
    for table in tables:
        cursor.execute(f'SELECT count(*) FROM "{table}"')  # noqa: S608 - names from the catalogue
        counts[table] = cursor.fetchone()[0]
    return counts


@pytest.fixture
def demo(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir(exist_ok=True)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return demo_project_load(force=True).project


@pytest.fixture
def empty_database():
    """A new, empty PostgreSQL database on the test server, dropped afterwards."""
    s = connection.settings_dict
    name = f"restore_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(dbname="postgres", user=s["USER"], password=s["PASSWORD"], host=s["HOST"], port=s["PORT"])
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    url = f"postgres://{s['USER']}:{s['PASSWORD'] or ''}@{s['HOST']}:{s['PORT']}/{name}"
    try:
        yield name, url
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.mark.django_db
def test_the_demo_restored_into_an_empty_database_has_every_row_and_file(demo, settings, tmp_path, empty_database):
    folder = tmp_path / "backup"
    call_command("backup", str(folder))
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert (folder / DATABASE_FILE).stat().st_size > 0
    assert manifest["tables"]["annotator_qachain"] > 0
    assert manifest["media"]["copied"] and manifest["media"]["files"]

    name, url = empty_database
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    env.update(DATABASE_URL=url, VIDQA_VAR_DIR=str(tmp_path / "var2"), DJANGO_MEDIA_ROOT=str(tmp_path / "media2"))
    done = manage(env, "restore", str(folder))
    assert done.returncode == 0, done.stderr + done.stdout
    assert "every count as in the backup" in done.stdout

    with connection.cursor() as cur:
        before = pg_counts(cur)
    s = connection.settings_dict
    restored = psycopg2.connect(dbname=name, user=s["USER"], password=s["PASSWORD"], host=s["HOST"], port=s["PORT"])
    try:
        with restored.cursor() as cur:
            after = pg_counts(cur)
    finally:
        restored.close()
    before.pop("django_session", None)
    after.pop("django_session", None)
    assert after == before
    assert sum(before.values()) > 100  # the demo is really there
    assert checksums(tmp_path / "media2") == checksums(settings.MEDIA_ROOT)
    assert len(checksums(settings.MEDIA_ROOT)) == len(manifest["media"]["files"])


@pytest.mark.django_db
def test_restore_refuses_a_database_that_is_not_empty(demo, tmp_path):
    folder = tmp_path / "backup"
    call_command("backup", str(folder), "--no-media")
    with pytest.raises(BackupRefused, match="not empty"):
        backup_restore(folder=folder)


@pytest.mark.django_db
def test_backup_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "old.txt").write_text("x")
    with pytest.raises(CommandError, match="not empty"):
        call_command("backup", str(tmp_path))


def test_restore_refuses_a_folder_that_is_not_a_backup(tmp_path):
    with pytest.raises(BackupRefused, match="not a backup"):
        backup_restore(folder=tmp_path)


def sqlite_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}  # noqa: S608


def test_a_backup_made_on_sqlite_restores_on_sqlite(tmp_path):
    """`make run`'s default database: migrate, load the demo, back up, restore into a new folder."""
    base = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    first = {**base, "VIDQA_VAR_DIR": str(tmp_path / "one")}
    for step in (("migrate", "--verbosity", "0"), ("load_demo",), ("backup", str(tmp_path / "backup"))):
        done = manage(first, *step)
        assert done.returncode == 0, done.stderr
    second = {**base, "VIDQA_VAR_DIR": str(tmp_path / "two")}
    done = manage(second, "restore", str(tmp_path / "backup"))
    assert done.returncode == 0, done.stderr

    before = sqlite_counts(tmp_path / "one" / "db.sqlite3")
    after = sqlite_counts(tmp_path / "two" / "db.sqlite3")
    for counts in (before, after):
        counts.pop("django_session", None)
    assert after == before
    assert checksums(tmp_path / "two" / "media") == checksums(tmp_path / "one" / "media")
