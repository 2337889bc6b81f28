"""Import a video file into a project, then process it in the background.

Import is synchronous and all-or-nothing: a file that is empty, too large, a duplicate, or not a
decodable video is refused with a clear reason and leaves nothing behind (no row, no stored file).
Processing (decode check, scenes, poster, proxy, clips, curation) runs as a job with progress; a
failure there marks the video failed with the reason, and a retry runs the whole step again safely.
"""

import logging
import re
import unicodedata
from contextlib import nullcontext
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from jobs.models import BackgroundJob
from jobs.services import job_create, job_progress
from projects.models import Project
from projects.refusals import Refused
from projects.services import archived_refusal

from .models import Video, VideoStatus
from .names import InvalidVideoName, video_name_check, video_name_from_filename
from .probe import ProbeError, apply_probe, probe_file, sha256_file
from .storage_files import local_path, store_file

logger = logging.getLogger(__name__)

PROCESS_TASK = "videos.process"


class ImportRefused(Refused):
    """The file cannot become a video of this project; the message says why, for the user."""

    status, code = 422, "import_refused"
    code_statuses = {"project_archived": 409}


class DuplicateVideo(ImportRefused):
    status, code = 409, "duplicate_video"

    def __init__(self, message: str, existing: Video):
        super().__init__(message)
        self.existing = existing

    @property
    def details(self) -> dict:
        return {"existing_video_id": self.existing.pk, "existing_video_name": self.existing.name}


def _safe_filename(filename: str) -> str:
    base = Path(filename).name or "video"
    base = unicodedata.normalize("NFKC", base)
    base = re.sub(r"[^\w.\-]+", "_", base).strip("._") or "video"
    return base[:150]


def _unique_name(project: Project, wanted: str) -> str:
    stem = wanted[:200] or "video"
    name, n = stem, 2
    while Video.objects.filter(project=project, name=name).exists():
        name, n = f"{stem}_{n}", n + 1
    return name


def video_import(
    *,
    project: Project,
    source: Path,
    filename: str,
    user=None,
    sha256: str | None = None,
    name: str | None = None,
    metadata: dict | None = None,
    process: bool = True,
) -> Video:
    """Check, store and record one video file; queue its processing. Raises ImportRefused."""
    if project.is_archived:
        raise ImportRefused(archived_refusal(project), code="project_archived")
    source = Path(source)
    try:
        # The name becomes a path in releases: a bad one is refused before anything is stored.
        wanted = video_name_check(str(name)) if name not in (None, "") else video_name_from_filename(filename)
    except InvalidVideoName as exc:
        raise ImportRefused(str(exc)) from exc
    size = source.stat().st_size
    if size == 0:
        raise ImportRefused(_("%(filename)s: the file is empty (0 bytes).") % {"filename": filename})
    if size > settings.VIDEO_MAX_BYTES:
        raise ImportRefused(
            f"{filename}: {size / 1e9:.1f} GB is larger than the limit of {settings.VIDEO_MAX_BYTES / 1e9:.0f} GB."
        )
    digest = sha256 or sha256_file(source)
    existing = Video.objects.filter(project=project, sha256=digest).first()
    if existing is not None:
        raise DuplicateVideo(f"{filename}: the same file is already in this project as “{existing.name}”.", existing)
    try:
        probed = probe_file(source)
    except ProbeError as exc:
        raise ImportRefused(_("%(filename)s: %(reason)s") % {"filename": filename, "reason": exc.reason}) from exc

    metadata = dict(metadata or {})
    stored = store_file(source, f"projects/{project.pk}/videos/{digest[:2]}/{digest}/{_safe_filename(filename)}")
    try:
        with transaction.atomic():
            video = Video(
                project=project,
                name=_unique_name(project, wanted),
                original=stored,
                original_filename=Path(filename).name[:255],
                sha256=digest,
                size_bytes=size,
                status=VideoStatus.PROCESSING if process else VideoStatus.UPLOADED,
                created_by=user if user is not None and getattr(user, "is_authenticated", False) else None,
                topic_category=str(metadata.pop("topic_category", metadata.pop("category", "")) or "")[:20],
                view_count=_int_or_none(metadata.pop("view_count", None)),
                source_url=str(metadata.pop("source_url", metadata.pop("url", "")) or "")[:1000],
                language=str(metadata.pop("language", "") or "")[:10],
                metadata=metadata,
            )
            apply_probe(video, probed)
            video.save()
            if process:
                job_create(project=project, kind=PROCESS_TASK, target=video, user=user)
    except IntegrityError as exc:
        default_storage.delete(stored)
        existing = Video.objects.filter(project=project, sha256=digest).first()
        if existing is not None:  # the same file arrived twice at once (a double click)
            raise DuplicateVideo(
                f"{filename}: the same file is already in this project as “{existing.name}”.", existing
            ) from exc
        raise
    except BaseException:
        default_storage.delete(stored)
        raise
    return video


def _int_or_none(value) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def video_process_start(*, video: Video, user=None) -> BackgroundJob:
    """Queue (re)processing; refuses a second one while the first runs."""
    with transaction.atomic():
        # The job first: replacing one whose worker died fails the video, which this run then revives.
        job = job_create(project=video.project, kind=PROCESS_TASK, target=video, user=user)
        Video.objects.filter(pk=video.pk).update(status=VideoStatus.PROCESSING, status_reason="")
    return job


def video_process(*, video_id: int, job: BackgroundJob) -> None:
    """Run every processing step; safe to run again after a failure or a crash."""
    from .clips import ClipsLocked, clips_rebuild
    from .curation import video_curate
    from .proxy import make_poster, make_proxy, needs_proxy
    from .scene_split import detect_scenes

    video = Video.objects.select_related("project").get(pk=video_id)
    project = video.project
    try:
        with local_path(video.original.name) as path:
            job_progress(job, done=0, total=100, message="Probing")
            probed = probe_file(path)
            apply_probe(video, probed)

            wanted, reason = needs_proxy(probed)
            if wanted:
                job_progress(job, done=2, message=f"Making a browser-playable copy ({reason})")
                if video.proxy:
                    default_storage.delete(video.proxy.name)
                video.proxy = _derived(
                    video,
                    path,
                    "proxy.mp4",
                    lambda dst: make_proxy(
                        path, dst, result=probed, progress=lambda f: job_progress(job, done=2 + int(48 * f))
                    ),
                )
            elif video.proxy:  # the original plays now (e.g. re-imported settings): drop the old copy
                default_storage.delete(video.proxy.name)
                video.proxy = ""

            # Scenes from the constant-frame-rate proxy when there is one, so cut times do not drift.
            with local_path(video.proxy.name) if video.proxy else nullcontext(path) as scene_source:
                base = 50 if wanted else 5
                job_progress(job, done=base, message="Detecting scenes")
                scenes = detect_scenes(
                    scene_source,
                    threshold=project.scene_threshold,
                    progress=lambda fraction: job_progress(job, done=base + int((90 - base) * fraction)),
                )
            video.scenes = [[round(s, 3), round(e, 3)] for s, e in scenes]

            job_progress(job, done=90, message="Making the poster")
            if video.poster:
                default_storage.delete(video.poster.name)
            video.poster = _derived(
                video,
                path,
                "poster.jpg",
                lambda dst: make_poster(path, dst, at_s=min(1.0, (video.duration_s or 0) / 2)),
            )
            video.status_reason = ""
            video.save()

        job_progress(job, done=95, message="Cutting clips")
        try:
            clip_count, clips_note = clips_rebuild(video=video).clip_count, ""
        except ClipsLocked as exc:
            # The video is still usable with its current clips; say why they were not replaced.
            clip_count, clips_note = video.clips.count(), f" {exc}"
        video_curate(video=video)
        Video.objects.filter(pk=video.pk).update(status=VideoStatus.READY, status_reason="")
        job.result = {"scenes": len(video.scenes or []), "clips": clip_count, "proxy": bool(video.proxy)}
        job.message = (
            f"Ready: {len(video.scenes or [])} scenes, {clip_count} clips"
            + (" (proxy made)." if video.proxy else ".")
            + clips_note
        )[:500]
    except Exception as exc:
        reason = exc.reason if isinstance(exc, ProbeError) else str(exc)
        Video.objects.filter(pk=video.pk).update(status=VideoStatus.FAILED, status_reason=reason[:2000])
        raise


def _derived(video: Video, source: Path, filename: str, make) -> str:
    """Make a derived file in a temporary folder and store it; returns the stored name."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / filename
        make(dst)
        return store_file(dst, f"projects/{video.project_id}/derived/{video.sha256[:2]}/{video.sha256}/{filename}")
