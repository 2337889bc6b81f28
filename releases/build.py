"""Build a dataset release: select the items, split by video, write every format, validate, and record
the manifest, statistics and a zip archive.

`release_build` is idempotent: it clears the release's folder (`releases/<project slug>/<version>/`)
and writes everything again from the same inputs, so a second run (a task delivered twice, a retry
after a crash) gives the same bytes. A ready or deleted release is never touched.

What a release holds (docs/release_formats.md has the whole layout):
- items with status `accepted` unless `filters["statuses"]` names others; `filters` may also narrow
  by `categories`, `video_ids`, `accepted_from` / `accepted_to` (the same selection the release form
  previews, `releases.selectors.matching_items`);
- `filters["include_media"]` (default true) copies the videos records refer to under `videos/`;
  false writes the text only (paths still name where the files would be);
- `filters["clip_files"]` (default false) also cuts every released chain's clip into
  `clips/<video>/<clip index>.mp4` with ffmpeg (frame-accurate, re-encoded);
- `filters["lmms_eval"]` (default false) also writes an `lmms_eval/` folder of lmms-eval tasks over the
  release's MCQ files (writers/lmms_tasks.py; docs/evaluation_lmms_eval.md).

Memory stays flat: videos are handled in chunks of CHUNK_VIDEOS (one query per table per chunk),
each writer writes a video's files as soon as it has them, long files are spooled to disk, and
comments stream straight from the database cursor.

Same inputs, same bytes: everything is read in an explicit order, JSON text is fixed
(writers.common.dumps), paths are seeded per video, splits are kept on the videos, and the only
times in the release are the items' own (accepted_at) and, in the manifest, the release row's
created_at. Two releases of the same data therefore differ only in the manifest's identity fields
(release_id, version, created_by, created_at) and in the archive's top folder name.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import posixpath
import tempfile
import zipfile
from collections import defaultdict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotator.models import MCQ, ChainPair, ItemStatus, MCQVideo, QAChain, QAPair, ReferredMoment, Relation
from annotator.versions import LINK_FIELDS, MCQ_FIELDS, TURN_FIELDS
from audits.gate import release_gate
from projects.models import ProjectKind
from projects.refusals import Refused
from videos.models import SubtitleCue, Video

from .models import DatasetRelease, ReleaseStatus
from .splits import duration_group, splits_assign, splits_save
from .statistics import FormatTally, ReleaseStatistics
from .validation import schema_errors
from .writers import WRITERS
from .writers.common import (
    FORMATS,
    SCHEMA_VERSIONS,
    BuildContext,
    ChainData,
    ChainPairData,
    CueData,
    MCQData,
    MCQVideoData,
    MomentData,
    PairData,
    Problems,
    RelationData,
    ReleaseFiles,
    VideoBundle,
    VideoInfo,
)
from .writers.lmms_tasks import FOLDER as LMMS_EVAL_FOLDER
from .writers.lmms_tasks import lmms_eval_tasks_write
from .writers.media import ClipCutError, cut_clip_into

logger = logging.getLogger(__name__)

CHUNK_VIDEOS = 100
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry: no build time in the archive
ZIP_LEVEL = 1
READ_AHEAD = 32
READ_AHEAD_THREADS = 4
READ_AHEAD_MAX_BYTES = 8 * 1024 * 1024
STORED_SUFFIXES = (".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".ts", ".flv", ".mpg", ".mpeg")
MANIFEST = "manifest.json"

Progress = Callable[[int, int, str], None]


class ReleaseNotBuildable(Refused):
    """The release is ready or deleted: its files never change."""

    status, code = 409, "release_not_buildable"


def release_build(*, release: DatasetRelease, progress: Progress | None = None) -> DatasetRelease:
    """Write the release's files, manifest, statistics and archive; mark it ready, or failed with the
    problems validation found (see the module doc)."""
    release = _claim(release)
    try:
        return _build(release, progress or (lambda done, total, message: None))
    except Exception as exc:
        logger.exception("release %s of %s could not be built", release.version, release.project.slug)
        DatasetRelease.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING).update(
            status=ReleaseStatus.FAILED,
            finished_at=timezone.now(),
            validation_errors=[
                {
                    "format": "",
                    "file": "",
                    "item": "release",
                    "message": f"The build stopped: {exc or type(exc).__name__}",
                }
            ],
        )
        raise


def _claim(release: DatasetRelease) -> DatasetRelease:
    with transaction.atomic():
        locked = (
            DatasetRelease.objects.select_for_update(of=("self",))
            .select_related("project", "created_by")
            .get(pk=release.pk)
        )
        if locked.status in (ReleaseStatus.READY, ReleaseStatus.DELETED):
            raise ReleaseNotBuildable(
                f"Release {locked.version} is {locked.get_status_display().lower()}; its files never change. "
                "Cut a new version instead."
            )
        locked.status = ReleaseStatus.BUILDING
        locked.validation_errors = []
        locked.save(update_fields=["status", "validation_errors"])
    return locked


def _storage_walk(storage, folder: str):
    try:
        dirs, files = storage.listdir(folder)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return
    for name in sorted(files):
        yield posixpath.join(folder, name)
    for name in sorted(dirs):
        yield from _storage_walk(storage, posixpath.join(folder, name))


def storage_clear(storage, prefix: str) -> int:
    """Delete every stored file under `prefix`; returns how many."""
    names = list(_storage_walk(storage, prefix.rstrip("/")))
    for name in names:
        storage.delete(name)
    return len(names)


# --- selection ------------------------------------------------------------------------------------------


def _file_name(name: str, original: str, original_filename: str) -> str:
    suffix = PurePosixPath(original or original_filename or "").suffix.lower()
    return f"{name}{suffix or '.mp4'}"


def mcq_family(*, project, video_count: int, category: str, lvb_codes: set) -> str:
    """Which benchmark file an MCQ belongs in: several videos → MVPBench; a LongVideoBench category (or
    a LongVideoBench project) → LongVideoBench; otherwise a LiViBench task."""
    if video_count > 1 or project.kind == ProjectKind.MVPBENCH:
        return "mvpbench"
    if project.kind == ProjectKind.LIVIBENCH:
        return "livibench"
    if project.kind == ProjectKind.LONGVIDEOBENCH or category in lvb_codes:
        return "longvideobench"
    return "livibench"


def _draft(row: dict) -> dict | None:
    if not row["draft_call__model"]:
        return None
    return {
        "model": row["draft_call__model"],
        "template": row["draft_call__template_key"],
        "template_version": row["draft_call__template_version"],
        "step": row["draft_call__step"],
    }


def _utc_iso(moment) -> str | None:
    if moment is None:
        return None
    return (moment if moment.utcoffset() == dt.timedelta(0) else moment.astimezone(dt.UTC)).isoformat()


def _meta(row: dict) -> dict:
    accepted = row["accepted_at"]
    return {
        "status": row["status"],
        "version": row["version"],
        "provenance": {
            "origin": row["origin"],
            "human_edited": row["human_edited"],
            "author": row["author__username"],
            "accepted_at": _utc_iso(accepted),
            "draft": _draft(row),
        },
    }


ITEM_FIELDS = (
    "status",
    "version",
    "origin",
    "human_edited",
    "author__username",
    "accepted_at",
    "draft_call__model",
    "draft_call__template_key",
    "draft_call__template_version",
    "draft_call__step",
)


class _Selection:
    """Ids of the released items and which video each belongs to (ints only: small at any scale)."""

    def __init__(self, project, filters: dict, problems: Problems):
        from .selectors import matching_items

        self.chains_by_video: dict[int, list[int]] = defaultdict(list)
        for pk, video_id in matching_items(project=project, kind="qa_chain", filters=filters).values_list(
            "pk", "clip__video_id"
        ):
            self.chains_by_video[video_id].append(pk)
        self.pairs_by_video: dict[int, list[int]] = defaultdict(list)
        for pk, video_id in matching_items(project=project, kind="chain_pair", filters=filters).values_list(
            "pk", "video_id"
        ):
            self.pairs_by_video[video_id].append(pk)
        mcq_ids = list(matching_items(project=project, kind="mcq", filters=filters).values_list("pk", flat=True))
        self.mcq_videos: dict[int, list[tuple]] = defaultdict(list)
        for row in (
            MCQVideo.objects.filter(mcq_id__in=mcq_ids)
            .order_by("mcq_id", "order", "pk")
            .values_list("mcq_id", "video_id", "role", "order")
        ):
            self.mcq_videos[row[0]].append(row[1:])
        self.mcqs_by_video: dict[int, list[int]] = defaultdict(list)
        for pk in sorted(mcq_ids):
            links = self.mcq_videos.get(pk)
            if not links:
                problems.add("", "", f"mcq {pk}", "The MCQ has no video, so no format can hold it; it was left out.")
                continue
            self.mcqs_by_video[links[0][0]].append(pk)
        self.release_video_ids = set(self.chains_by_video) | set(self.pairs_by_video) | set(self.mcqs_by_video)
        self.all_video_ids = self.release_video_ids | {
            link[0] for pk in self.mcq_videos for link in self.mcq_videos[pk]
        }
        self.chain_query = matching_items(project=project, kind="qa_chain", filters=filters)


# --- the build ------------------------------------------------------------------------------------------


def _build(release: DatasetRelease, progress: Progress) -> DatasetRelease:
    project = release.project
    unknown = sorted(set(release.formats or []) - set(FORMATS))
    if unknown or not release.formats:
        raise ValueError(f"unknown or no formats: {', '.join(unknown) or 'none chosen'}")
    formats = [f for f in FORMATS if f in release.formats]
    filters = dict(release.filters or {})
    include_media = filters.get("include_media", True) is not False
    clip_files = bool(filters.get("clip_files", False))
    storage = default_storage
    prefix = release.storage_prefix or f"releases/{project.slug}/{release.version}/"
    if not prefix.endswith("/"):
        prefix += "/"
    storage_clear(storage, prefix)
    if release.archive and release.archive.name and not release.archive.name.startswith(prefix):
        storage.delete(release.archive.name)

    problems = Problems()
    files = ReleaseFiles(storage, prefix)
    try:
        progress(0, 1, "Selecting items")
        selection = _Selection(project, filters, problems)

        groups = project.taxonomy("duration_groups")
        videos: dict[int, VideoInfo] = {}
        for row in Video.objects.filter(pk__in=selection.all_video_ids).values(
            "pk",
            "name",
            "original",
            "original_filename",
            "duration_s",
            "fps",
            "frame_count",
            "topic_category",
            "view_count",
            "has_audio",
            "language",
            "split",
            "source_url",
            "width",
            "height",
        ):
            videos[row["pk"]] = VideoInfo(
                id=row["pk"],
                name=row["name"],
                file_name=_file_name(row["name"], row["original"], row["original_filename"]),
                original=row["original"],
                duration_s=row["duration_s"],
                fps=row["fps"],
                frame_count=row["frame_count"],
                topic_category=row["topic_category"],
                view_count=row["view_count"],
                has_audio=row["has_audio"],
                language=row["language"],
                split=row["split"],
                duration_group=duration_group(row["duration_s"], groups),
                source_url=row["source_url"],
                width=row["width"],
                height=row["height"],
            )
        for v in videos.values():
            if "/" in v.name or "\\" in v.name or v.name.startswith("."):
                problems.add(
                    "",
                    "",
                    f"video {v.name}",
                    "The video's name cannot be a file name (it has a slash or starts with a dot).",
                )

        splits = splits_assign(
            project=project,
            videos=Video.objects.filter(pk__in=selection.release_video_ids).only(
                "pk", "name", "split", "topic_category", "duration_s"
            ),
            config=release.split_config or {},
            seed=release.seed,
            save=False,  # saved below once the release is ready
        )
        for video_id, split in splits.items():
            videos[video_id].split = split

        primary = (project.primary_language or "en").split("-")[0].upper()
        languages = [primary]
        if "svbench" in formats and (
            QAPair.objects.filter(chain__in=selection.chain_query.values("pk"))
            .exclude(question_translation="")
            .exists()
        ):
            languages.append("ZH" if primary == "EN" else "EN")

        copied: set[int] = set()

        def copy_media(video: VideoInfo) -> None:
            if video.id in copied:
                return
            copied.add(video.id)
            try:
                files.copy_from_storage(f"videos/{video.file_name}", video.original)
            except (FileNotFoundError, OSError) as exc:
                problems.add(
                    "",
                    f"videos/{video.file_name}",
                    f"video {video.name}",
                    f"The original file could not be copied: {exc}",
                )

        ctx = BuildContext(
            project=project,
            release=release,
            files=files,
            problems=problems,
            test_style=release.test_style,
            include_media=include_media,
            seed=release.seed,
            path_p=project.path_jump_probability,
            primary_language=primary,
            languages=languages,
            lvb_levels={c["code"]: c["level"] for c in project.taxonomy("question_categories")},
            tasks={t["task"]: t["group"] for t in project.taxonomy("tasks")},
            relation_labels={r["code"]: r.get("label") or r["code"] for r in project.taxonomy("relation_types")},
            videos=videos,
            media_copier=copy_media,
        )
        writers = [WRITERS[f](ctx) for f in formats]
        for writer in writers:
            writer.begin()
        cue_families = {w.format for w in writers if w.needs_cues}
        stats = ReleaseStatistics()
        tally = FormatTally(formats)
        ordered = sorted((videos[i] for i in selection.release_video_ids), key=lambda v: v.name)
        total = len(ordered) + 1
        lvb_codes = set(ctx.lvb_levels)
        for start in range(0, len(ordered), CHUNK_VIDEOS):
            chunk = ordered[start : start + CHUNK_VIDEOS]
            bundles = list(_load_chunk(chunk, selection, ctx, lvb_codes=lvb_codes, cue_families=cue_families))
            for writer in writers:
                writer.chunk(bundles)
            for bundle in bundles:
                stats.add(bundle)
                tally.add(bundle)
                for writer in writers:
                    writer.video(bundle)
                if clip_files:
                    _write_clips(bundle, ctx, storage)
            done = start + len(chunk)
            progress(done, total, f"Wrote {done} of {len(ordered)} videos")
        for writer in writers:
            writer.finish()
        lmms_tasks = lmms_eval_tasks_write(ctx) if filters.get("lmms_eval") else None

        manifest = _manifest(release, formats, filters, include_media, stats, files)
        if lmms_tasks:
            manifest["lmms_eval"] = {
                "folder": f"{LMMS_EVAL_FOLDER}/",
                "tasks": [t["task"] for t in lmms_tasks],
                "tags": sorted({t["tag"] for t in lmms_tasks}),
            }
        manifest["per_format"] = tally.as_dict()  # counts per format, and why an item is not in one
        if ctx.record_items:
            manifest["items"] = {file: ctx.record_items[file] for file in sorted(ctx.record_items)}
        released_mcqs = [pk for ids in selection.mcqs_by_video.values() for pk in ids]
        if released_mcqs:
            gate = release_gate(project=project, mcq_ids=released_mcqs)
            manifest["audit"] = gate.manifest()
            if gate.refuses:  # the items changed since the release was asked for
                for message in gate.messages():
                    problems.add("", "", "release", f"The project's release gate refuses this release: {message}")
        problems.extend("manifest", MANIFEST, "release", schema_errors("manifest", manifest))
        files.write_text(MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")

        release.files = files.listing()
        release.manifest = manifest
        release.statistics = stats.as_dict()
        release.validation_errors = problems.as_list()
        release.storage_prefix = prefix
        if not problems.total:
            moved = splits_save(project=project, splits=splits)
            if moved:
                names = ", ".join(sorted(videos[pk].name for pk in moved)[:10])
                problems.add(
                    "",
                    "",
                    "release",
                    f"Another release gave {len(moved)} video(s) a split while this one was built ({names}); "
                    "build this release again so its files use the splits the videos keep.",
                )
                release.validation_errors = problems.as_list()
        if problems.total:
            release.status = ReleaseStatus.FAILED
            release.archive = ""
        else:
            progress(total - 1, total, "Writing the archive")
            release.archive.name = _write_archive(release, files, storage, prefix)
            release.status = ReleaseStatus.READY
        release.finished_at = timezone.now()
        release.save(
            update_fields=[
                "files",
                "manifest",
                "statistics",
                "validation_errors",
                "storage_prefix",
                "archive",
                "status",
                "finished_at",
            ]
        )
        progress(total, total, f"Release {release.version} is {release.status}")
        logger.info(
            "release %s of %s: %s, %d files, %d problems",
            release.version,
            project.slug,
            release.status,
            len(release.files),
            problems.total,
        )
        return release
    finally:
        files.close()


def _manifest(release, formats, filters, include_media, stats, files) -> dict:
    project = release.project
    created = release.created_at.astimezone(dt.UTC).isoformat() if release.created_at else None
    return {
        "manifest_version": SCHEMA_VERSIONS["manifest"],
        "project": {"slug": project.slug, "name": project.name, "kind": project.kind},
        "release_id": release.pk,
        "version": release.version,
        "formats": formats,
        "filters": filters,
        "include_media": include_media,
        "split": {
            "config": release.split_config or {},
            "seed": release.seed,
            "by": "video",
            "stratified_by": ["topic_category", "duration_group"],
        },
        "test_style": release.test_style,
        "schema_versions": {f: SCHEMA_VERSIONS[f] for f in ("manifest", *formats)},
        "app_version": getattr(settings, "APP_VERSION", ""),
        "created_by": release.created_by.get_username() if release.created_by else None,
        "created_at": created,
        "counts": stats.counts(),
        "files": files.listing(),
    }


def _write_clips(bundle: VideoBundle, ctx: BuildContext, storage) -> None:
    v = bundle.video
    for chain in bundle.chains:
        path = f"clips/{v.name}/{chain.clip_index:04d}.mp4"
        try:
            cut_clip_into(
                ctx.files,
                path,
                storage=storage,
                original=v.original,
                start_s=chain.start_s,
                end_s=chain.end_s,
                audio=v.has_audio,
            )
        except (ClipCutError, FileNotFoundError, OSError) as exc:
            ctx.problems.add("", path, f"chain {chain.id}", f"The clip file could not be cut: {exc}")


def archive_name(release: DatasetRelease, prefix: str) -> str:
    return f"{prefix}{release.project.slug}-{release.version}.zip"


def _write_archive(release: DatasetRelease, files: ReleaseFiles, storage, prefix: str) -> str:
    """A zip of every file in path order, each entry dated 1980-01-01 with fixed attributes, so the same
    files give the same archive bytes. Entries sit under `<slug>-<version>/`. Text is deflated at
    level 1 (JSON still shrinks about fivefold; higher levels cost several times the time for a few
    per cent); media files are stored as they are. Small files are read ahead by a few threads
    (opening thousands of files is what a busy disk is slowest at)."""
    top = f"{release.project.slug}-{release.version}"
    name = archive_name(release, prefix)
    listing = files.listing()

    def read(record):
        if record["bytes"] > READ_AHEAD_MAX_BYTES:
            return None  # streamed below instead of held in memory
        with storage.open(files.name(record["path"]), "rb") as src:
            return src.read()

    with tempfile.TemporaryFile() as tmp, ThreadPoolExecutor(max_workers=READ_AHEAD_THREADS) as pool:
        with zipfile.ZipFile(tmp, "w", allowZip64=True) as zf:
            ahead: deque = deque()
            records = iter(listing)
            for record in records:
                ahead.append((record, pool.submit(read, record)))
                if len(ahead) >= READ_AHEAD:
                    break
            while ahead:
                record, future = ahead.popleft()
                nxt = next(records, None)
                if nxt is not None:
                    ahead.append((nxt, pool.submit(read, nxt)))
                info = zipfile.ZipInfo(f"{top}/{record['path']}", date_time=ZIP_EPOCH)
                stored = record["path"].lower().endswith(STORED_SUFFIXES)
                info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
                info._compresslevel = None if stored else ZIP_LEVEL
                info.create_system = 3
                info.external_attr = 0o100644 << 16
                info.file_size = record["bytes"]
                data = future.result()
                if data is not None:
                    zf.writestr(info, data)
                    continue
                with storage.open(files.name(record["path"]), "rb") as src, zf.open(info, "w") as dst:
                    while chunk := src.read(1024 * 1024):
                        dst.write(chunk)
        tmp.seek(0)
        if storage.exists(name):
            storage.delete(name)
        saved = storage.save(name, File(tmp, name=posixpath.basename(name)))
    return saved


# --- one chunk of videos --------------------------------------------------------------------------------


def _load_chunk(chunk: list[VideoInfo], selection: _Selection, ctx: BuildContext, *, lvb_codes, cue_families):
    ids = [v.id for v in chunk]
    chain_ids = [c for i in ids for c in selection.chains_by_video.get(i, ())]
    pair_ids = [c for i in ids for c in selection.pairs_by_video.get(i, ())]
    mcq_ids = [m for i in ids for m in selection.mcqs_by_video.get(i, ())]

    chains: dict[int, list[ChainData]] = defaultdict(list)
    by_id: dict[int, ChainData] = {}
    if chain_ids:
        for row in (
            QAChain.objects.filter(pk__in=chain_ids)
            .order_by("clip__video_id", "clip__index")
            .values("pk", "clip__video_id", "clip__index", "clip__start_s", "clip__end_s", *ITEM_FIELDS)
        ):
            chain = ChainData(
                id=row["pk"],
                clip_index=row["clip__index"],
                start_s=float(row["clip__start_s"]),
                end_s=float(row["clip__end_s"]),
                pairs=[],
                meta=_meta(row),
            )
            chains[row["clip__video_id"]].append(chain)
            by_id[chain.id] = chain
        for row in (
            QAPair.objects.filter(chain_id__in=chain_ids)
            .order_by("chain_id", "index", "pk")
            .values("chain_id", "pk", "index", *TURN_FIELDS)
        ):
            by_id[row["chain_id"]].pairs.append(
                PairData(id=row["pk"], index=row["index"], **{f: row[f] for f in TURN_FIELDS})
            )

    chain_pairs: dict[int, list[ChainPairData]] = defaultdict(list)
    cp_by_id: dict[int, ChainPairData] = {}
    if pair_ids:
        for row in (
            ChainPair.objects.filter(pk__in=pair_ids)
            .order_by("video_id", "before_index")
            .values("pk", "video_id", "before_index", "chain_before_id", "chain_after_id", *ITEM_FIELDS)
        ):
            cp = ChainPairData(
                id=row["pk"],
                before_index=row["before_index"],
                chain_before_id=row["chain_before_id"],
                chain_after_id=row["chain_after_id"],
                relations=[],
                meta=_meta(row),
            )
            chain_pairs[row["video_id"]].append(cp)
            cp_by_id[cp.id] = cp
        for row in (
            Relation.objects.filter(chain_pair_id__in=pair_ids)
            .exclude(decision="rejected")
            .order_by("chain_pair_id", "from_pair__index", "to_pair__index", "pk")
            .values("chain_pair_id", "pk", "from_pair__index", "to_pair__index", *LINK_FIELDS)
        ):
            cp = cp_by_id[row["chain_pair_id"]]
            decision = row["decision"]
            # A candidate link is released only from a chain pair that is itself not yet accepted (a
            # release that asked for unreviewed items); an accepted pair releases its accepted links.
            if decision == "accepted" or (decision == "candidate" and cp.meta["status"] != ItemStatus.ACCEPTED):
                cp.relations.append(
                    RelationData(
                        id=row["pk"],
                        from_index=row["from_pair__index"],
                        to_index=row["to_pair__index"],
                        **{f: row[f] for f in LINK_FIELDS},
                    )
                )

    mcqs: dict[int, list[MCQData]] = defaultdict(list)
    if mcq_ids:
        moments: dict[int, list[MomentData]] = defaultdict(list)
        for row in (
            ReferredMoment.objects.filter(mcq_id__in=mcq_ids)
            .order_by("mcq_id", "order", "time_s", "pk")
            .values_list("mcq_id", "video_id", "time_s", "frame_index", "order", "note")
        ):
            moments[row[0]].append(MomentData(*row[1:]))
        for row in MCQ.objects.filter(pk__in=mcq_ids).order_by("pk").values("pk", *MCQ_FIELDS, *ITEM_FIELDS):
            links = [
                MCQVideoData(
                    video_id=video_id,
                    name=ctx.videos[video_id].name,
                    file_name=ctx.videos[video_id].file_name,
                    role=role,
                    order=order,
                )
                for video_id, role, order in selection.mcq_videos[row["pk"]]
            ]
            mcq = MCQData(
                id=row["pk"],
                family=mcq_family(
                    project=ctx.project, video_count=len(links), category=row["category"], lvb_codes=lvb_codes
                ),
                **{**{f: row[f] for f in MCQ_FIELDS}, "options": list(row["options"] or [])},
                videos=links,
                moments=moments.get(row["pk"], []),
                meta=_meta(row),
            )
            mcqs[links[0].video_id].append(mcq)

    cue_videos = [i for i in ids if any(m.family in cue_families for m in mcqs.get(i, ()))]
    cues: dict[int, list[CueData]] = defaultdict(list)
    if cue_videos:
        for row in (
            SubtitleCue.objects.filter(video_id__in=cue_videos)
            .order_by("video_id", "start_s", "pk")
            .values_list("video_id", "start_s", "end_s", "text", "source", "language")
        ):
            cues[row[0]].append(CueData(float(row[1]), float(row[2]), *row[3:]))

    for v in chunk:
        yield VideoBundle(
            video=v,
            chains=chains.get(v.id, []),
            chain_pairs=chain_pairs.get(v.id, []),
            mcqs=mcqs.get(v.id, []),
            cues=cues.get(v.id, []) if v.id in cues or v.id in cue_videos else None,
        )
