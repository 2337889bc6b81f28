"""Import existing benchmark files into a project as items with provenance "imported".

`benchmark_import` reads the files with the format's reader (one module per format beside this one),
matches every video they name against the project's videos (by name, i.e. the file name without its
extension, or by the original file name), imports the missing ones from the import's `videos/`
folder, and writes every item in ONE transaction: when any record, field or video is wrong, nothing
is written (no item, no cue, no video: the files of videos stored in the run are deleted again) and
the report lists the problems, each naming the file, the record and the field.

Each item keeps where it came from (`ImportedRecord`: file, record index and id, the file's sha256)
under one `BenchmarkImport` row, gets the status chosen (default: examining), origin "imported", and a
review event from nothing to that status. Items are created in file order, so a writer that orders a
video's records by MCQ id writes them in the file's order again: releasing the same items in the same
format gives the same bytes (tests/releases/test_imports_round_trip.py).

Videos imported here are queued for the usual processing (poster, scenes, proxy) once the import has
committed; their clips then stay as the import made them (a rebuild never moves annotated clips).
"""

from __future__ import annotations

import logging
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from simple_history.utils import bulk_create_with_history

from annotator.models import (
    MCQ,
    ChainPair,
    ItemKind,
    ItemStatus,
    MCQVideo,
    Origin,
    QAChain,
    QAPair,
    ReferredMoment,
    Relation,
    ReviewEvent,
)
from jobs.models import BackgroundJob
from jobs.services import job_create, job_progress, job_running
from projects.refusals import Refused
from projects.services import archived_refusal, project_refuse_if_archived
from videos.ingest import DuplicateVideo, ImportRefused, video_import
from videos.models import Clip, Comment, SubtitleCue, Video

from ..build import mcq_family
from ..models import BenchmarkImport, ImportedRecord, ReleaseFormat
from . import generic, livibench, longvideobench, mvpbench, svbench
from .common import Parsed, Problems, VideoIn, Where

logger = logging.getLogger(__name__)

READERS = {
    "longvideobench": longvideobench.read,
    "svbench": svbench.read,
    "mvpbench": mvpbench.read,
    "livibench": livibench.read,
    "generic": generic.read,
}
IMPORT_TASK = "releases.import_benchmark"
# Imported items are people's work, never machine drafts: a draft run would be free to replace a draft.
IMPORT_STATUSES = [s for s in ItemStatus.values if s != ItemStatus.DRAFT]
IMPORT_CHANGE_REASON = "imported"
BATCH = 2000

Progress = Callable[[int, int, str], None]


class ImportNotStarted(Refused):
    """The import cannot start at all (unknown format or status, no such file, archived project)."""

    status, code = 422, "benchmark_import_refused"


@dataclass
class ImportReport:
    format: str
    ok: bool
    counts: dict = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)
    total_problems: int = 0
    import_id: int | None = None
    files: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        if not self.ok:
            return _("Nothing was imported: %(n)s problem(s) in the files.") % {"n": self.total_problems}
        c = self.counts
        return _(
            "Imported %(mcqs)s MCQs, %(chains)s QA chains and %(pairs)s chain pairs; "
            "%(new)s videos imported, %(matched)s matched."
        ) % {
            "mcqs": c.get("mcqs", 0),
            "chains": c.get("chains", 0),
            "pairs": c.get("chain_pairs", 0),
            "new": c.get("videos_imported", 0),
            "matched": c.get("videos_matched", 0),
        }


class _Abort(Exception):
    """Problems found while writing: the transaction rolls back."""


def benchmark_import(
    *,
    project,
    format: str,  # noqa: A002 - the release format's name, as everywhere in releases
    source: Path | str,
    status: str = ItemStatus.EXAMINING,
    user=None,
    progress: Progress | None = None,
    job=None,
    source_label: str = "",
) -> ImportReport:
    """Read `source` (a release folder, the format's folder in it, or one record file) and import it
    all or nothing (see the module doc)."""
    progress = progress or (lambda done, total, message: None)
    if project.is_archived:
        raise ImportNotStarted(archived_refusal(project))
    if format not in READERS:
        raise ImportNotStarted(_("Unknown format %(format)s.") % {"format": format})
    if status not in IMPORT_STATUSES:
        raise ImportNotStarted(
            _("Imported items can have the status %(statuses)s, not %(status)s.")
            % {"statuses": ", ".join(IMPORT_STATUSES), "status": status}
        )
    source = Path(source)
    if not source.exists():
        raise ImportNotStarted(_("%(path)s does not exist.") % {"path": source})

    parsed = READERS[format](source, project=project, progress=progress)
    report = ImportReport(format=format, ok=False, files=list(parsed.files.values()))
    if not parsed.problems:
        _check_items(parsed, project)
    if parsed.problems:
        return _failed(report, parsed.problems)
    matched, to_import = _match_videos(parsed, project)
    if parsed.problems:
        return _failed(report, parsed.problems)

    stored: list[str] = []
    try:
        with transaction.atomic():
            videos = dict(matched)
            for n, (file_name, path) in enumerate(sorted(to_import.items())):
                progress(n, len(to_import), f"Importing video {file_name}")
                video = _video_import(parsed, project, parsed.videos[file_name], path, user, stored)
                if video is not None:
                    videos[file_name] = video
            if parsed.problems:
                raise _Abort
            _video_facts(parsed, videos)
            if parsed.problems:
                raise _Abort
            counts = _write(parsed, project, videos, status=status, user=user, job=job, progress=progress)
            if parsed.problems:
                raise _Abort
            counts["videos_imported"] = len(to_import)
            counts["videos_matched"] = len(matched)
            run = counts.pop("_run")
            run.counts = counts
            run.source = (source_label or str(source))[:1000]
            run.save(update_fields=["counts", "source"])
    except _Abort:
        _delete_stored(stored)
        return _failed(report, parsed.problems)
    except BaseException:
        _delete_stored(stored)
        raise
    report.ok, report.counts, report.import_id = True, counts, run.pk
    logger.info("benchmark import %s into %s: %s", format, project.slug, counts)
    return report


# --- in the background ------------------------------------------------------------------------------------


class ImportInvalid(Exception):
    """The files had problems and nothing was imported (the job's result lists them)."""


def import_path_allowed(path: Path) -> bool:
    """A server folder may be read when it lies inside one of settings.VIDEO_IMPORT_ROOTS."""
    roots = [Path(r).resolve() for r in settings.VIDEO_IMPORT_ROOTS]
    resolved = Path(path).resolve()
    return any(resolved == root or root in resolved.parents for root in roots)


def benchmark_import_start(
    *,
    project,
    format: str,  # noqa: A002
    user=None,
    status: str = ItemStatus.EXAMINING,
    folder: str = "",
    upload=None,
) -> BackgroundJob:
    """Queue an import of a server folder (inside VIDEO_IMPORT_ROOTS) or of an uploaded zip; refuses
    what cannot start (ImportNotStarted, ProjectArchived, JobAlreadyRunning) before a job exists."""
    project_refuse_if_archived(project=project)
    if format not in READERS:
        raise ImportNotStarted(_("Unknown format %(format)s.") % {"format": format})
    if status not in IMPORT_STATUSES:
        raise ImportNotStarted(
            _("Imported items can have the status %(statuses)s, not %(status)s.")
            % {"statuses": ", ".join(IMPORT_STATUSES), "status": status}
        )
    if bool(folder) == (upload is not None):
        raise ImportNotStarted(_("Give either a server folder or a zip file."))
    params = {"format": format, "status": status}
    if folder:
        path = Path(folder)
        if not path.is_absolute() or not import_path_allowed(path):
            raise ImportNotStarted(
                _("%(path)s: not inside a folder the server allows imports from (VIDEO_IMPORT_ROOTS).")
                % {"path": folder}
            )
        if not path.exists():
            raise ImportNotStarted(_("%(path)s does not exist.") % {"path": folder})
        params["folder"] = str(path)
    else:
        if not upload.name.lower().endswith(".zip"):
            raise ImportNotStarted(_("%(name)s: upload the release as a .zip file.") % {"name": upload.name})
        if upload.size > settings.VIDEO_MAX_BYTES:
            raise ImportNotStarted(_("%(name)s is larger than the size limit.") % {"name": upload.name})
        staged = default_storage.save(f"imports/benchmarks/{project.pk}/{uuid.uuid4().hex}.zip", upload)
        params.update({"staged": staged, "filename": upload.name})
    try:
        return job_create(project=project, kind=IMPORT_TASK, params=params, user=user)
    except BaseException:
        if "staged" in params:
            default_storage.delete(params["staged"])
        raise


def benchmark_import_job(*, job_id: int) -> None:
    """The worker's task body: import what the job names, progress on the job, the report as its result."""
    from .archive import archive_unpack

    with job_running(job_id) as job:
        if job is None:
            return
        params = job.params
        last = [-1]

        def progress(done: int, total: int, message: str) -> None:
            percent = int(100 * done / total) if total else 0
            if percent != last[0] or done == total:
                last[0] = percent
                job_progress(job, done=done, total=total, message=message)

        try:
            with tempfile.TemporaryDirectory(prefix="benchmark-import-") as tmp:
                if params.get("staged"):
                    job_progress(job, done=0, total=1, message="Unpacking the archive")
                    with default_storage.open(params["staged"], "rb") as fh:
                        source = archive_unpack(archive=fh, dest=Path(tmp))
                    label = params.get("filename", "")
                else:
                    source = label = params["folder"]
                report = benchmark_import(
                    project=job.project,
                    format=params["format"],
                    source=source,
                    status=params["status"],
                    user=job.created_by,
                    progress=progress,
                    job=job,
                    source_label=label,
                )
        finally:
            if params.get("staged"):
                default_storage.delete(params["staged"])
        job.result = report.as_dict()
        job.message = report.summary()[:500]
        if not report.ok:
            # The job fails (it imported nothing); its result still lists every problem for the page.
            BackgroundJob.objects.filter(pk=job.pk).update(result=job.result)
            raise ImportInvalid(job.message)


def _failed(report: ImportReport, problems: Problems) -> ImportReport:
    report.problems, report.total_problems = problems.as_list(), problems.total
    return report


def _delete_stored(names: list[str]) -> None:
    for name in names:
        try:
            default_storage.delete(name)
        except OSError:
            logger.warning("could not delete %s after a failed benchmark import", name)


# --- before anything is written -------------------------------------------------------------------------


FAMILY_FIELDS = {"longvideobench": "question_category", "livibench": "task", "generic": "family"}


def _check_items(parsed: Parsed, project) -> None:
    """What only the project knows: an MCQ lands in the same benchmark file when released again; an
    SVBench relation label is one of the project's relation types."""
    sources = {m.source.file for m in parsed.mcqs} | {c.source.file for c in parsed.chains}
    earlier = {}
    for run in BenchmarkImport.objects.filter(project=project, format=parsed.format).order_by("pk"):
        for f in run.files:
            earlier.setdefault((f["path"], f["sha256"]), run)
    for path in sorted(sources):
        run = earlier.get((path, parsed.files.get(path, {}).get("sha256")))
        if run is not None:
            parsed.problems.add(
                Where(path),
                "",
                f"this very file was imported into the project before (import {run.pk}, "
                f"{run.created_at:%Y-%m-%d %H:%M}); importing it again would make a second copy of every item.",
            )
    codes = {c["code"] for c in project.taxonomy("question_categories")}
    for m in parsed.mcqs:
        want = m.family or parsed.format
        got = mcq_family(project=project, video_count=len(m.videos), category=m.category, lvb_codes=codes)
        if got != want:
            parsed.problems.add(
                m.source,
                FAMILY_FIELDS.get(parsed.format, ""),
                f"this question would be released as {got}, not {want}, in this project "
                f"(kind {project.kind}; category {m.category!r}).",
            )


def _match_videos(parsed: Parsed, project) -> tuple[dict[str, Video], dict[str, Path]]:
    rows = list(Video.objects.filter(project=project))
    by_name = {v.name: v for v in rows}
    by_file = {}
    for v in rows:
        by_file.setdefault(v.original_filename, v)
    matched, to_import = {}, {}
    for file_name, vin in parsed.videos.items():
        video = by_name.get(vin.stem) or by_file.get(file_name)
        if video is not None:
            matched[file_name] = video
            continue
        path = next((d / file_name for d in parsed.media_dirs if (d / file_name).is_file()), None)
        if path is None:
            parsed.problems.add(
                vin.first,
                vin.field_name,
                f"names the video {file_name}, which is neither in the project nor in the import's videos/ folder.",
            )
        else:
            to_import[file_name] = path
    return matched, to_import


def _video_import(parsed: Parsed, project, vin: VideoIn, path: Path, user, stored: list[str]) -> Video | None:
    metadata = {"imported_from": parsed.format}
    try:
        video = video_import(
            project=project, source=path, filename=vin.file_name, user=user, name=vin.stem, metadata=metadata
        )
    except DuplicateVideo as exc:
        return exc.existing  # the same file under another name: the records mean that video
    except ImportRefused as exc:
        parsed.problems.add(vin.first, vin.field_name, f"its video cannot be imported: {exc}")
        return None
    stored.append(video.original.name)
    if video.name != vin.stem:
        parsed.problems.add(
            vin.first, vin.field_name, f"the project already has another video named {vin.stem}; rename one of them."
        )
    return video


FACTS = ("split", "topic_category", "view_count", "language", "source_url")
EMPTY = {"split": "", "topic_category": "", "view_count": None, "language": "", "source_url": ""}


def _video_facts(parsed: Parsed, videos: dict[str, Video]) -> None:
    """Facts the files state about a video go onto it; a fact the project already holds otherwise is a
    problem (a video cannot be in two splits)."""
    for file_name, vin in parsed.videos.items():
        video = videos[file_name]
        changed = []
        for name in FACTS:
            value = getattr(vin, name)
            if value is None:
                continue
            current = getattr(video, name)
            if current == value:
                continue
            if current != EMPTY[name] and value != EMPTY[name]:
                parsed.problems.add(
                    vin.first, name, f"is {value!r}, but video {video.name} has {current!r} in the project."
                )
                continue
            if current == EMPTY[name]:
                setattr(video, name, value)
                changed.append(name)
        if changed:
            video.save(update_fields=[*changed, "updated_at"])


# --- writing ----------------------------------------------------------------------------------------------


def _write(parsed: Parsed, project, videos: dict[str, Video], *, status, user, job, progress) -> dict:
    now = timezone.now()
    actor = user if getattr(user, "is_authenticated", False) else None
    run = BenchmarkImport.objects.create(
        project=project,
        format=parsed.format,
        item_status=status,
        files=sorted(parsed.files.values(), key=lambda f: f["path"]),
        job=job,
        created_by=actor,
    )
    item = {
        "project": project,
        "status": status,
        "origin": Origin.IMPORTED,
        "submitted_at": now if status != ItemStatus.ANNOTATING else None,
        "accepted_at": now if status == ItemStatus.ACCEPTED else None,
    }
    history = {"default_user": actor, "default_change_reason": IMPORT_CHANGE_REASON, "batch_size": BATCH}
    counts = {"_run": run, "cues": 0, "comments": 0}
    records: list[ImportedRecord] = []
    events: list[ReviewEvent] = []

    def provenance(kind: str, obj, where: Where) -> None:
        ref = {"item_kind": kind, kind: obj}
        sha = parsed.files.get(where.file, {}).get("sha256", "")
        records.append(
            ImportedRecord(
                benchmark_import=run,
                file=where.file[:500],
                record_index=where.index or 0,
                record_id=str(where.record_id)[:300],
                sha256=sha,
                **ref,
            )
        )
        events.append(
            ReviewEvent(project=project, actor=actor, from_status="", to_status=status, item_version=1, **ref)
        )

    counts["cues"], counts["comments"] = _media_text(parsed, videos)
    progress(0, 1, "Writing the items")

    # QA chains, on clips of their videos.
    chains: dict[object, QAChain] = {}
    by_video: dict[str, list] = defaultdict(list)
    for c in parsed.chains:
        by_video[c.video].append(c)
    for file_name, specs in by_video.items():
        clips = _clips_for(parsed, videos[file_name], specs)
        if clips is None:
            continue
        made = bulk_create_with_history([QAChain(clip=clip, **item) for clip in clips], QAChain, **history)
        for spec, chain in zip(specs, made, strict=True):
            chains[spec.key] = chain
            provenance(ItemKind.QA_CHAIN, chain, spec.source)
    pairs_of: dict[int, list[QAPair]] = {}
    if chains:
        spec_chain = [(spec, chains[spec.key]) for spec in parsed.chains if spec.key in chains]
        pair_rows = [
            QAPair(chain=chain, index=i, **vars(p)) for spec, chain in spec_chain for i, p in enumerate(spec.pairs)
        ]
        made = bulk_create_with_history(pair_rows, QAPair, **history)
        for pair in made:
            pairs_of.setdefault(pair.chain_id, []).append(pair)
    counts["chains"] = len(chains)

    # Chain pairs and their relations.
    relations = []
    chain_pairs = []
    for cp in parsed.chain_pairs:
        before, after = chains.get(cp.before), chains.get(cp.after)
        if before is None or after is None:
            if not parsed.problems:  # else the chain's own problem is already listed
                parsed.problems.add(cp.source, "", "names a chain this import does not hold.")
            continue
        if after.clip.index != before.clip.index + 1 or after.clip.video_id != before.clip.video_id:
            parsed.problems.add(cp.source, "", "its two chains are not on adjacent clips of one video.")
            continue
        chain_pairs.append((cp, before, after))
    made = bulk_create_with_history(
        [
            ChainPair(video_id=b.clip.video_id, before_index=b.clip.index, chain_before=b, chain_after=a, **item)
            for _cp, b, a in chain_pairs
        ],
        ChainPair,
        **history,
    )
    for (cp, before, after), row in zip(chain_pairs, made, strict=True):
        provenance(ItemKind.CHAIN_PAIR, row, cp.source)
        left, right = pairs_of.get(before.pk, []), pairs_of.get(after.pk, [])
        for k, r in enumerate(cp.relations):
            if not (r.from_index < len(left) and r.to_index < len(right)):
                parsed.problems.add(cp.source, "relations", f"link {k} points past the questions of its chains.")
                continue
            relations.append(
                Relation(
                    chain_pair=row,
                    from_pair=left[r.from_index],
                    to_pair=right[r.to_index],
                    relation_type=r.relation_type,
                    origin=Origin.IMPORTED,
                    decision=r.decision,
                    rationale=r.rationale,
                    original_question=r.original_question,
                    original_answer=r.original_answer,
                    rewritten_question=r.rewritten_question,
                    rewritten_answer=r.rewritten_answer,
                )
            )
    bulk_create_with_history(relations, Relation, **history)
    counts["chain_pairs"], counts["relations"] = len(made), len(relations)

    # MCQs with their videos and referred moments, in file order (ids follow it).
    mcq_rows = [
        MCQ(
            question=m.question,
            referring_query=m.referring_query,
            referring_start=m.referring_start,
            referring_end=m.referring_end,
            question_wo_referring_query=m.question_wo_referring_query,
            options=list(m.options),
            correct_index=m.correct_index,
            category=m.category,
            level=m.level,
            task_group=m.task_group,
            question_translation=m.question_translation,
            **item,
        )
        for m in parsed.mcqs
    ]
    made = bulk_create_with_history(mcq_rows, MCQ, **history) if mcq_rows else []
    links, moments = [], []
    for n, (spec, mcq) in enumerate(zip(parsed.mcqs, made, strict=True)):
        if n % 1000 == 0:
            progress(n, len(made), f"Writing MCQ {n + 1} of {len(made)}")
        links.extend(
            MCQVideo(mcq=mcq, video=videos[file_name], role=role, order=order)
            for order, (file_name, role) in enumerate(spec.videos)
        )
        for mo in spec.moments:
            video = videos[mo.video]
            time_s = mo.time_s
            if time_s is None:
                if not video.fps:
                    parsed.problems.add(
                        spec.source, "position", f"video {video.name} has no frame rate to place frames."
                    )
                    continue
                time_s = mo.frame_index / video.fps
            moments.append(
                ReferredMoment(
                    mcq=mcq, video=video, time_s=time_s, frame_index=mo.frame_index, order=mo.order, note=mo.note
                )
            )
        provenance(ItemKind.MCQ, mcq, spec.source)
    bulk_create_with_history(links, MCQVideo, **history)
    bulk_create_with_history(moments, ReferredMoment, **history)
    counts["mcqs"] = len(made)

    ImportedRecord.objects.bulk_create(records, batch_size=BATCH)
    ReviewEvent.objects.bulk_create(events, batch_size=BATCH)
    progress(1, 1, "Items written")
    return counts


def _clips_for(parsed: Parsed, video: Video, specs: list) -> list[Clip] | None:
    """The clips the chains of one video sit on: the video's own when they match every chain's times and
    carry no chain yet; otherwise new clips (replacing clips that carry nothing). None: a problem."""
    duration = video.duration_s
    for spec in specs:
        if duration is not None and spec.end_s > duration + 1e-6:
            parsed.problems.add(
                spec.source,
                "qac_timestamps_end",
                f"{spec.end_s} s is past the end of video {video.name} ({duration} s).",
            )
    if parsed.problems:
        return None
    existing = list(Clip.objects.filter(video=video).order_by("index"))
    if existing:
        free = {(c.start_s, c.end_s): c for c in existing if not QAChain.objects.filter(clip=c).exists()}
        reused = [free.get((s.start_s, s.end_s)) for s in specs]
        if all(reused) and len({c.pk for c in reused}) == len(reused):
            return reused
        if QAChain.objects.filter(clip__video=video).exists():
            parsed.problems.add(
                specs[0].source,
                "",
                f"video {video.name} already has QA chains on clips at other times; "
                "import into a project without those.",
            )
            return None
        Clip.objects.filter(video=video).delete()
    return Clip.objects.bulk_create(
        [
            Clip(video=video, index=s.clip_index if s.clip_index is not None else i, start_s=s.start_s, end_s=s.end_s)
            for i, s in enumerate(specs)
        ]
    )


def _media_text(parsed: Parsed, videos: dict[str, Video]) -> tuple[int, int]:
    """Subtitles and comments the files carry replace the video's of the same sources. An empty file
    (writers always write one, `[]` or no line, so a reader never meets a missing file) says nothing
    and leaves what the video has."""
    cues = comments = 0
    for file_name, vin in parsed.videos.items():
        video = videos[file_name]
        if vin.cues:
            sources = set(vin.cue_sources) | {c.source for c in vin.cues}
            SubtitleCue.objects.filter(video=video, source__in=sources).delete()
            SubtitleCue.objects.bulk_create(
                [
                    SubtitleCue(
                        video=video,
                        start_s=c.start_s,
                        end_s=c.end_s,
                        text=c.text,
                        source=c.source,
                        language=c.language or video.language,
                    )
                    for c in vin.cues
                ],
                batch_size=BATCH,
            )
            cues += len(vin.cues)
        if vin.comments:
            Comment.objects.filter(video=video).delete()
            Comment.objects.bulk_create(
                [Comment(video=video, time_s=c.time_s, text=c.text, user=c.user) for c in vin.comments],
                batch_size=5000,
            )
            comments += len(vin.comments)
    return cues, comments


def import_formats() -> list[tuple[str, str]]:
    return [(f, label) for f, label in ReleaseFormat.choices if f in READERS]
