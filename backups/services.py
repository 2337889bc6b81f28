"""A backup is a folder: the database as Django fixtures read in one snapshot, the media files with their
checksums, and a manifest that counts every table, so a restore can prove it got everything back.

Fixtures rather than `pg_dump`: the same backup restores into PostgreSQL or SQLite (what `make run`
uses), and a client of another major version than the server cannot break it. Content types,
permissions and sessions are left out: `migrate` makes the first two, and people log in again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.files.storage import FileSystemStorage, default_storage
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from projects.models import Project

FORMAT = "vidqa-backup/1"
DATABASE_FILE = "database.json.gz"
MANIFEST_FILE = "backup.json"
MEDIA_DIR = "media"
# Recreated by `migrate` (content types, permissions) or not worth keeping (sessions, login attempts).
EXCLUDED_APPS = ("contenttypes", "sessions", "axes")
EXCLUDED_MODELS = ("auth.permission",)


class BackupRefused(Exception):
    """The backup or restore cannot go ahead; the message says why in plain words."""


@dataclass(frozen=True)
class MediaFile:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class BackupResult:
    folder: Path
    counts: dict[str, int]
    media: list[MediaFile]
    media_copied: bool


@dataclass(frozen=True)
class RestoreResult:
    counts: dict[str, int]
    media_restored: int


def _kept(model) -> bool:
    label = model._meta.label_lower
    return model._meta.app_label not in EXCLUDED_APPS and label not in EXCLUDED_MODELS


def table_counts() -> dict[str, int]:
    """Rows per table of every model a backup keeps, many-to-many tables included."""
    tables: dict[str, object] = {}
    for model in apps.get_models(include_auto_created=True):
        if _kept(model) and model._meta.managed and not model._meta.proxy:
            tables.setdefault(model._meta.db_table, model)
    return {table: model._base_manager.count() for table, model in sorted(tables.items())}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _local_media_root() -> Path | None:
    if isinstance(default_storage, FileSystemStorage):
        return Path(default_storage.location)
    return None


def media_files() -> list[MediaFile]:
    """Every file under the media folder, in name order, with its size and sha256."""
    root = _local_media_root()
    if root is None or not root.exists():
        return []
    files = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        files.append(MediaFile(name=path.relative_to(root).as_posix(), size=path.stat().st_size, sha256=_sha256(path)))
    return files


def _excludes() -> list[str]:
    installed = {c.label for c in apps.get_app_configs()}
    return [a for a in EXCLUDED_APPS if a in installed] + list(EXCLUDED_MODELS)


def _applied_migrations() -> dict[str, str]:
    latest: dict[str, str] = {}
    for app, name in MigrationRecorder(connection).applied_migrations():
        if name > latest.get(app, ""):
            latest[app] = name
    return dict(sorted(latest.items()))


def backup_create(*, folder: Path, media: bool = True) -> BackupResult:
    """Write a backup into `folder` (new or empty). With `media`, local media files are copied too."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise BackupRefused(f"{folder} is not empty: a backup goes into a new or empty folder.")
    folder.mkdir(parents=True, exist_ok=True)

    # One snapshot for the dump and the counts, so they agree even while people keep working.
    outer = connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and not outer:
            # Only the first statement of a transaction may set its level; inside an outer transaction
            # (a test's, say) the snapshot is the outer one's. SQLite reads one snapshot anyway.
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        call_command(
            "dumpdata",
            exclude=_excludes(),
            use_natural_foreign_keys=True,
            output=str(folder / DATABASE_FILE),
            verbosity=0,
        )
        counts = table_counts()
        migrations = _applied_migrations()

    files = media_files()
    root = _local_media_root()
    copied = bool(media and root is not None)
    if copied:
        for f in files:
            target = folder / MEDIA_DIR / f.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / f.name, target)
            if _sha256(target) != f.sha256:
                raise BackupRefused(f"The media file {f.name} changed while it was copied; run the backup again.")

    manifest = {
        "format": FORMAT,
        "created_at": timezone.now().isoformat(),
        "database": {"vendor": connection.vendor, "file": DATABASE_FILE, "migrations": migrations},
        "tables": counts,
        "media": {
            "storage": type(default_storage).__name__,
            "copied": copied,
            "files": [{"name": f.name, "size": f.size, "sha256": f.sha256} for f in files],
        },
    }
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return BackupResult(folder=folder, counts=counts, media=files, media_copied=copied)


def manifest_read(*, folder: Path) -> dict:
    path = Path(folder) / MANIFEST_FILE
    if not path.exists():
        raise BackupRefused(f"{folder} holds no {MANIFEST_FILE}: it is not a backup made by `manage.py backup`.")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise BackupRefused(f"{path} is a {manifest.get('format')!r} backup; this version reads {FORMAT!r}.")
    return manifest


def backup_restore(*, folder: Path) -> RestoreResult:
    """Restore a backup into an empty database and media folder, and check that everything came back."""
    folder = Path(folder)
    manifest = manifest_read(folder=folder)
    call_command("migrate", interactive=False, verbosity=0)
    used = {m._meta.db_table: m._base_manager.count() for m in (get_user_model(), Project)}
    used = {table: n for table, n in used.items() if n}
    if used:
        sample = ", ".join(f"{n} rows in {t}" for t, n in used.items())
        raise BackupRefused(f"The database is not empty ({sample}): restore into an empty database.")
    root = _local_media_root()
    wanted = manifest["media"]["files"]
    if manifest["media"]["copied"]:
        if root is None:
            raise BackupRefused("This backup holds media files, but the media storage here is not a local folder.")
        clashes = [f["name"] for f in wanted if (root / f["name"]).exists()]
        if clashes:
            raise BackupRefused(
                f"The media folder already holds {clashes[0]} (and {len(clashes) - 1} more): "
                "restore into an empty media folder."
            )

    # What data migrations wrote (prompt templates, say) is in the backup too, perhaps edited since:
    # start from no rows at all. `flush` brings back the content types and permissions.
    call_command("flush", interactive=False, verbosity=0)
    call_command("loaddata", str(folder / DATABASE_FILE), verbosity=0)

    restored = 0
    if manifest["media"]["copied"]:
        for f in wanted:
            target = root / f["name"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / MEDIA_DIR / f["name"], target)
            if _sha256(target) != f["sha256"]:
                raise BackupRefused(f"The media file {f['name']} in the backup does not match its checksum.")
            restored += 1

    counts = table_counts()
    differ = {t: (n, counts.get(t)) for t, n in manifest["tables"].items() if counts.get(t) != n}
    if differ:
        lines = ", ".join(f"{t}: {want} in the backup, {got} restored" for t, (want, got) in list(differ.items())[:5])
        raise BackupRefused(f"The restored database differs from the backup: {lines}.")
    return RestoreResult(counts=counts, media_restored=restored)
