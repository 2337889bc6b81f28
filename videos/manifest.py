"""Bulk import from a server folder or a manifest (CSV/JSONL of paths or URLs with metadata).

Each row is imported on its own: one bad row is reported with its reason and the others go on.
"""

import csv
import io
import json
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext as _

from jobs.models import BackgroundJob
from jobs.services import job_create
from projects.models import Project
from projects.refusals import Refused
from projects.services import project_refuse_if_archived

from .ingest import ImportRefused, video_import
from .safe_fetch import FetchError, fetch_to_file
from .text_encoding import TextDecodeError, decode_bytes

VIDEO_SUFFIXES = {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".ts", ".flv", ".mpg", ".mpeg", ".wmv", ".3gp"}
LOCATION_KEYS = ("path", "file", "url", "video_path", "location", "source")
DOWNLOAD_TIMEOUT_S = 60
MANIFEST_IMPORT_TASK = "videos.import_manifest"
# A manifest lists paths or URLs, not videos: a few MB is already tens of thousands of rows.
MANIFEST_MAX_BYTES = 20 * 1024 * 1024


class ManifestError(Refused, ValueError):
    """The manifest itself cannot be read; nothing was imported."""

    status, code = 400, "manifest_invalid"


@dataclass(frozen=True)
class ManifestRow:
    line: int
    location: str
    metadata: dict


@dataclass
class RowOutcome:
    line: int
    location: str
    ok: bool
    message: str
    video_id: int | None = None


@dataclass
class BulkImport:
    outcomes: list[RowOutcome] = field(default_factory=list)

    @property
    def imported(self) -> int:
        return sum(1 for o in self.outcomes if o.ok)

    @property
    def refused(self) -> int:
        return sum(1 for o in self.outcomes if not o.ok)


@dataclass
class ManifestImportStarted:
    rows: int  # rows found in the manifest
    job: BackgroundJob  # the job that imports them


def manifest_import_start(*, project: Project, upload, user=None) -> ManifestImportStarted:
    """Read an uploaded manifest and import its rows in the background, one by one.

    Raises ManifestError when the manifest is too large or cannot be read (nothing is queued), and
    jobs.services.JobAlreadyRunning while another manifest import of the project is under way,
    projects.services.ProjectArchived when the project is archived.
    """
    project_refuse_if_archived(project=project)
    if upload.size > MANIFEST_MAX_BYTES:
        limit_mb = MANIFEST_MAX_BYTES // 1024 // 1024
        raise ManifestError(
            _("%(name)s is larger than %(limit_mb)s MB; split the manifest.")
            % {"name": upload.name, "limit_mb": limit_mb}
        )
    rows = parse_manifest(upload.read(), upload.name)
    job = job_create(
        project=project,
        kind=MANIFEST_IMPORT_TASK,
        user=user,
        params={"rows": stage_rows_json(rows), "filename": upload.name},
    )
    return ManifestImportStarted(rows=len(rows), job=job)


def parse_manifest(data: bytes, filename: str) -> list[ManifestRow]:
    try:
        text, _encoding = decode_bytes(data)
    except TextDecodeError as exc:
        raise ManifestError(_("%(filename)s: not a text file (%(exc)s)") % {"filename": filename, "exc": exc}) from exc
    stripped = text.lstrip()
    rows = _jsonl_rows(text, filename) if stripped.startswith("{") else _csv_rows(text, filename)
    if not rows:
        raise ManifestError(_("%(filename)s: no rows found.") % {"filename": filename})
    return rows


def _location(record: dict, line: int, filename: str) -> tuple[str, dict]:
    lowered = {str(k).strip().lower(): v for k, v in record.items()}
    for key in LOCATION_KEYS:
        value = lowered.pop(key, None)
        if value not in (None, ""):
            return str(value).strip(), lowered
    raise ManifestError(
        _("%(filename)s line %(line)s: no path or url (columns: %(value)s).")
        % {"filename": filename, "line": line, "value": ", ".join(LOCATION_KEYS)}
    )


def _csv_rows(text: str, filename: str) -> list[ManifestRow]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or not any(str(f).strip().lower() in LOCATION_KEYS for f in reader.fieldnames):
        raise ManifestError(
            _("%(filename)s: the header needs a path or url column (one of %(value)s).")
            % {"filename": filename, "value": ", ".join(LOCATION_KEYS)}
        )
    rows = []
    for line, record in enumerate(reader, start=2):
        if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
            continue
        location, metadata = _location({k: v for k, v in record.items() if k is not None}, line, filename)
        rows.append(ManifestRow(line, location, {k: v for k, v in metadata.items() if v not in (None, "")}))
    return rows


def _jsonl_rows(text: str, filename: str) -> list[ManifestRow]:
    rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ManifestError(
                _("%(filename)s line %(line)s: not JSON (%(msg)s).")
                % {"filename": filename, "line": line, "msg": exc.msg}
            ) from exc
        if not isinstance(record, dict):
            raise ManifestError(
                _("%(filename)s line %(line)s: each line must be a JSON object.") % {"filename": filename, "line": line}
            )
        location, metadata = _location(record, line, filename)
        rows.append(ManifestRow(line, location, metadata))
    return rows


def folder_rows(folder: Path) -> list[ManifestRow]:
    folder = Path(folder)
    if not folder.is_dir():
        raise ManifestError(_("%(folder)s is not a folder.") % {"folder": folder})
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
    return [ManifestRow(i, str(p), {}) for i, p in enumerate(files, start=1)]


def _allowed_local(path: Path) -> bool:
    roots = [Path(r).resolve() for r in settings.VIDEO_IMPORT_ROOTS]
    resolved = path.resolve()
    return any(resolved == root or root in resolved.parents for root in roots)


def _download(url: str, dest: Path) -> None:
    """Fetch `url` to `dest` through safe_fetch: never a local or private address unless allowed by setting."""
    try:
        fetch_to_file(
            url,
            dest,
            max_bytes=settings.VIDEO_MAX_BYTES,
            timeout=DOWNLOAD_TIMEOUT_S,
            too_large=lambda u: _("%(url)s: larger than the limit of %(gb).0f GB.")
            % {"url": u, "gb": settings.VIDEO_MAX_BYTES / 1e9},
        )
    except FetchError as exc:
        raise ImportRefused(str(exc)) from exc


def import_rows(
    *,
    project: Project,
    rows: list[ManifestRow],
    user=None,
    base_dir: Path | None = None,
    check_roots: bool = True,
    progress: Callable[[int, int, RowOutcome], None] | None = None,
) -> BulkImport:
    """Import every row; `check_roots` limits local paths to settings.VIDEO_IMPORT_ROOTS (API, browser)."""
    result = BulkImport()
    for done, row in enumerate(rows, start=1):
        outcome = _import_row(project=project, row=row, user=user, base_dir=base_dir, check_roots=check_roots)
        result.outcomes.append(outcome)
        if progress:
            progress(done, len(rows), outcome)
    return result


def _import_row(*, project, row: ManifestRow, user, base_dir, check_roots) -> RowOutcome:
    scheme = urllib.parse.urlsplit(row.location).scheme.lower()
    metadata = dict(row.metadata)
    name = metadata.pop("name", None) or metadata.pop("video_name", None) or metadata.pop("video_id", None)
    try:
        if scheme in ("http", "https"):
            filename = Path(urllib.parse.urlsplit(row.location).path).name or "video.mp4"
            metadata.setdefault("source_url", row.location)
            with tempfile.TemporaryDirectory() as tmp:
                local = Path(tmp) / filename
                _download(row.location, local)
                video = video_import(
                    project=project, source=local, filename=filename, user=user, name=name, metadata=metadata
                )
        elif scheme in ("", "file"):
            path = Path(urllib.parse.urlsplit(row.location).path if scheme == "file" else row.location)
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            if check_roots and not _allowed_local(path):
                raise ImportRefused(
                    _("%(path)s: not inside a folder the server allows imports from (VIDEO_IMPORT_ROOTS).")
                    % {"path": path}
                )
            if not path.is_file():
                raise ImportRefused(_("%(path)s: no such file.") % {"path": path})
            video = video_import(
                project=project, source=path, filename=path.name, user=user, name=name, metadata=metadata
            )
        else:
            raise ImportRefused(
                _("%(location)s: only local paths and http(s) URLs can be imported.") % {"location": row.location}
            )
    except ImportRefused as exc:
        return RowOutcome(row.line, row.location, False, str(exc))
    except OSError as exc:  # unreadable files; a URL's low-level error would say which port answered
        reason = "could not fetch." if scheme in ("http", "https") else str(exc)
        return RowOutcome(row.line, row.location, False, f"{row.location}: {reason}")
    return RowOutcome(row.line, row.location, True, f"imported as {video.name}", video.pk)


def stage_rows_json(rows: list[ManifestRow]) -> list[dict]:
    return [{"line": r.line, "location": r.location, "metadata": r.metadata} for r in rows]


def rows_from_json(data: list[dict]) -> Iterator[ManifestRow]:
    for item in data:
        yield ManifestRow(item["line"], item["location"], item.get("metadata") or {})
