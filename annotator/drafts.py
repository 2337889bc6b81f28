"""Machine drafts (SPEC stage 5): QA chains per clip, relation candidates between adjacent chains,
multi-agent descriptions, seed questions per task, candidate MCQs per video and task, and the
answers and distractors of those MCQs.

Rules every step keeps:
- A draft never overwrites human work: an item a person has edited (`human_edited`) or moved past
  the draft status is never touched.
- A re-run fills only what is missing. An untouched machine draft counts as present and is *not*
  regenerated, so a second run makes no new rows and no new model calls. To have an item drafted
  again, delete its draft; seeds for a task are asked for again only with `more`.
- Each item is checked again under a row lock just before it is written, so two runs racing each
  other, or a run racing an annotator, never write an item twice or over someone's edit; a machine
  write to an existing item bumps its version, so an editor holding the older version gets the
  conflict view instead of silently dropping the machine's addition.
- One item failing (an answer still unusable after the LLM layer's retries and repair, frames that
  cannot be sampled) is recorded with its reason and its LLM call; the other items go on.

Items run in parallel as a small pipeline: preparation (database reads, ffmpeg frame sampling) runs
a little ahead on its own threads, while LLM_CONCURRENCY requests (the per-endpoint limit the LLM
layer enforces across processes) wait on the model, so the endpoint never idles while frames are cut
or drafts are written.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import queue
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connections, transaction
from django.db.models import Count, F, Q

from jobs.models import BackgroundJob
from jobs.services import job_create, job_progress
from llm.client import LLMError, chat_json, llm_endpoint, model_for_step
from llm.frames import FrameSamplingError, sample_frames
from llm.models import LLMCall
from llm.prompts import PROMPT_TEXT_LIMIT, prompt_template_for_call, text_excerpt
from projects.models import Project, ProjectKind
from videos.models import Clip, Comment, CurationStatus, SubtitleCue, Video, VideoStatus
from videos.storage_files import local_path

from .models import (
    MCQ,
    ChainPair,
    ItemStatus,
    MCQVideo,
    Origin,
    QAChain,
    QAPair,
    ReferredMoment,
    Relation,
    RelationDecision,
    SeedQuestion,
    SeedStatus,
    VideoDescription,
    VideoRole,
)

log = logging.getLogger(__name__)

TEXT_LIMIT = PROMPT_TEXT_LIMIT
COMMENTS_SAMPLE = 60
DEFAULT_SEED_COUNT = 5
DEFAULT_MCQ_COUNT = 1
DEFAULT_DISTRACTORS = 3
PROGRESS_EVERY_S = 0.5
LIST_LIMIT = 500  # failed, skipped and warned items listed in a job's result

LANGUAGES = {
    "en": "English",
    "zh": "Chinese",
    "zh-cn": "Simplified Chinese",
    "zh-tw": "Traditional Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "ru": "Russian",
}


@dataclass(frozen=True)
class DraftStep:
    code: str
    label: str
    llm_step: str  # LLMCall.step of its calls (the prompt template's key)
    uses_videos: bool = True
    uses_tasks: bool = False

    @property
    def kind(self) -> str:
        """The job kind, which is also the Celery task's name."""
        return f"annotator.draft_{self.code}"


# In pipeline order; a step builds on what the earlier ones made.
DRAFT_STEPS: dict[str, DraftStep] = {
    s.code: s
    for s in (
        DraftStep("chains", "QA chains, one per clip", "qa_chain"),
        DraftStep("relations", "Relation candidates between adjacent chains", "relations"),
        DraftStep("descriptions", "Multi-agent descriptions (agent roles × models)", "description"),
        DraftStep("seeds", "Seed questions per task", "seed_questions", uses_videos=False, uses_tasks=True),
        DraftStep("mcqs", "Candidate MCQs per video and task (from kept seeds)", "mcq", uses_tasks=True),
        DraftStep("options", "Answers and distractors for MCQs without options", "distractors"),
    )
}
STEP_BY_KIND = {s.kind: s for s in DRAFT_STEPS.values()}


class DraftRunFailed(Exception):
    """Every item a run attempted failed; the job's result still lists each one and why."""


# --- Outcomes ---------------------------------------------------------------------------------

CREATED = "created"
SKIPPED_HUMAN = "skipped_human"
SKIPPED_EXISTING = "skipped_existing"
SKIPPED = "skipped"  # cannot be drafted yet (no chains, no kept seeds …); the reason says what is missing
FAILED = "failed"


@dataclass
class ItemResult:
    outcome: str
    rows: int = 0  # rows the item made (a chain, 3 seeds, 2 MCQs …)
    reason: str = ""
    call: LLMCall | None = None
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # step-specific extras (relations, dropped links)


@dataclass
class DraftSummary:
    """What a run did, item by item where it matters; stored as the job's result."""

    step: str
    total: int = 0
    done: int = 0
    created: int = 0  # rows made
    items_created: int = 0
    skipped_human: int = 0
    skipped_existing: int = 0
    skipped: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    call_ids: list[int] = field(default_factory=list)
    excluded_videos: list[dict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, label: str, ref: dict, result: ItemResult) -> None:
        with self._lock:
            self.done += 1
            if result.call is not None:
                self.call_ids.append(result.call.pk)
            for key, n in result.counts.items():
                self.counts[key] = self.counts.get(key, 0) + n
            for warning in result.warnings:
                self.warnings.append({"item": label, **ref, "warning": warning})
            if result.outcome == CREATED:
                self.items_created += 1
                self.created += result.rows
            elif result.outcome == SKIPPED_HUMAN:
                self.skipped_human += 1
            elif result.outcome == SKIPPED_EXISTING:
                self.skipped_existing += 1
            elif result.outcome == SKIPPED:
                self.skipped.append({"item": label, **ref, "reason": result.reason})
            else:
                entry = {"item": label, **ref, "reason": result.reason}
                entry["call"] = result.call.pk if result.call is not None else None
                self.failed.append(entry)

    def as_json(self) -> dict:
        calls = sorted(self.call_ids)
        return {
            "step": self.step,
            "total": self.total,
            "done": self.done,
            "created": self.created,
            "items_created": self.items_created,
            "skipped_human": self.skipped_human,
            "skipped_existing": self.skipped_existing,
            # Lists are cut at LIST_LIMIT (an endpoint down for 10,000 clips); the counts stay exact.
            "skipped_count": len(self.skipped),
            "failed_count": len(self.failed),
            "warnings_count": len(self.warnings),
            "skipped": self.skipped[:LIST_LIMIT],
            "failed": self.failed[:LIST_LIMIT],
            "warnings": self.warnings[:LIST_LIMIT],
            **({"counts": self.counts} if self.counts else {}),
            "excluded_videos": self.excluded_videos,
            # The calls this run made: their ids bound an admin list of exactly these calls.
            "calls": {
                "count": len(calls),
                "min_id": calls[0] if calls else None,
                "max_id": calls[-1] if calls else None,
            },
        }

    def message(self) -> str:
        parts = [f"{self.created} created"]
        extra = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in sorted(self.counts.items()) if n)
        if extra:
            parts[0] += f" ({extra})"
        if self.skipped_existing:
            parts.append(f"{self.skipped_existing} already drafted")
        if self.skipped_human:
            parts.append(f"{self.skipped_human} left to people")
        if self.skipped:
            parts.append(f"{len(self.skipped)} not ready")
        if self.failed:
            first = self.failed[0]
            parts.append(f"{len(self.failed)} failed (first: {first['item']}: {first['reason']})")
        return "; ".join(parts)


def _failure(exc: BaseException) -> ItemResult:
    if isinstance(exc, LLMError):
        return ItemResult(FAILED, reason=exc.message, call=exc.call)
    if isinstance(exc, FrameSamplingError | ValidationError):
        return ItemResult(FAILED, reason=str(exc) if not isinstance(exc, ValidationError) else "; ".join(exc.messages))
    log.error("drafting an item failed unexpectedly", exc_info=exc)
    return ItemResult(FAILED, reason=f"unexpected {type(exc).__name__}: {exc}")


# --- Running items in parallel ---------------------------------------------------------------


@dataclass
class _Item:
    label: str
    ref: dict
    obj: Any


def draft_concurrency() -> int:
    """Items in flight at once: the per-endpoint limit the LLM layer enforces (0 there = unlimited → 8)."""
    per_endpoint = getattr(settings, "LLM_CONCURRENCY_PER_ENDPOINT", {}) or {}
    limit = per_endpoint.get(llm_endpoint(), getattr(settings, "LLM_CONCURRENCY", 4))
    return int(limit) if int(limit) > 0 else 8


def _close_thread_connections() -> None:
    # Every thread has its own database connections; a thread that ends must not leak them.
    connections.close_all()


def _run_items(
    items: list[_Item],
    *,
    prepare: Callable[[Any], Any],
    draft: Callable[[Any, Any], ItemResult],
    concurrency: int,
    on_result: Callable[[_Item, ItemResult], None],
) -> None:
    def attempt_prepare(item: _Item):
        try:
            return prepare(item.obj), None
        except Exception as exc:  # noqa: BLE001 - becomes the item's failure, the run goes on
            return None, _failure(exc)

    def attempt_draft(item: _Item, prepared, failed: ItemResult | None) -> ItemResult:
        if failed is not None:
            return failed
        try:
            return draft(item.obj, prepared)
        except Exception as exc:  # noqa: BLE001 - becomes the item's failure, the run goes on
            return _failure(exc)

    if concurrency <= 1 or len(items) <= 1:
        for item in items:
            prepared, failed = attempt_prepare(item)
            on_result(item, attempt_draft(item, prepared, failed))
        return

    todo: queue.Queue = queue.Queue()
    for item in items:
        todo.put(item)
    # Bounded, so preparation runs only a little ahead (frames of thousands of clips would not fit in memory).
    ready: queue.Queue = queue.Queue(maxsize=concurrency * 2)
    stop = threading.Event()
    prepared_all = threading.Event()

    def preparer() -> None:
        try:
            while not stop.is_set():
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                entry = (item, *attempt_prepare(item))
                while not stop.is_set():
                    try:
                        ready.put(entry, timeout=0.1)
                        break
                    except queue.Full:
                        continue
        finally:
            _close_thread_connections()

    def drafter() -> None:
        try:
            while not stop.is_set():
                try:
                    item, prepared, failed = ready.get(timeout=0.05)
                except queue.Empty:
                    if prepared_all.is_set() and ready.empty():
                        return
                    continue
                on_result(item, attempt_draft(item, prepared, failed))
        finally:
            _close_thread_connections()

    # Preparing is mostly short ffmpeg processes: a few more than cores keeps frames coming when other
    # processes compete for the CPU, and the bounded queue keeps them from running far ahead.
    preparers = [
        threading.Thread(target=preparer, name=f"draft-prepare-{i}", daemon=True)
        for i in range(max(1, min(2 * (os.cpu_count() or 1), concurrency, len(items))))
    ]
    # One thread more than the requests allowed in flight: while a thread records its answer and writes
    # its draft, the spare one's request already takes the freed slot. The LLM layer's per-endpoint
    # semaphore still caps requests in flight at `concurrency`.
    drafters = [
        threading.Thread(target=drafter, name=f"draft-llm-{i}", daemon=True)
        for i in range(min(concurrency + 1, len(items)))
    ]
    try:
        for thread in preparers + drafters:
            thread.start()
        for thread in preparers:
            thread.join()
        prepared_all.set()
        for thread in drafters:
            thread.join()
    finally:
        # On a time limit or an interrupt in this thread, the helpers stop taking new items.
        stop.set()


class _Memo:
    """A small, thread-safe cache of expensive values (a video's frames shared by its agent roles)."""

    _MISSING = object()

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict = OrderedDict()

    def get(self, key, make: Callable[[], Any]):
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = [threading.Lock(), self._MISSING]
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
            self._entries.move_to_end(key)
        with entry[0]:
            if entry[1] is self._MISSING:
                entry[1] = make()
            return entry[1]


# --- Shared inputs ----------------------------------------------------------------------------


def language_name(project: Project) -> str:
    code = (project.primary_language or "en").lower()
    return LANGUAGES.get(code, LANGUAGES.get(code.split("-")[0], code))


def _seconds(t: float) -> str:
    return f"{t:.1f}".rstrip("0").rstrip(".")


def _subtitles_text(video_id: int, start_s: float | None = None, end_s: float | None = None) -> str:
    cues = SubtitleCue.objects.filter(video_id=video_id)
    if start_s is not None and end_s is not None:
        cues = cues.filter(start_s__lt=end_s, end_s__gt=start_s)
    rows = cues.order_by("start_s", "id").values_list("start_s", "text")[:400]
    return text_excerpt(f"[{_seconds(t)} s] {text}" for t, text in rows)


def _comments_text(video_id: int) -> str:
    """An even sample of the video's comments: a few million rows must not go into one prompt."""
    comments = Comment.objects.filter(video_id=video_id)
    total = comments.count()
    if not total:
        return ""
    step = max(1, total // COMMENTS_SAMPLE)
    rows = comments.order_by("time_s", "id").values_list("time_s", "text")[: step * COMMENTS_SAMPLE : step]
    return text_excerpt(f"[{_seconds(t)} s] {text}" for t, text in rows)


def _frames(video: Video, start_s: float, end_s: float, project: Project) -> list[bytes]:
    # The proxy when there is one: clips were planned on it, and it always decodes.
    name = video.proxy.name if video.proxy else video.original.name
    if not name:
        raise FrameSamplingError(f"{video.name} has no stored file to sample frames from")
    if video.duration_s:
        # A range that ends exactly at the end of the video loses its last frame in ffmpeg's fps
        # filter; ending one frame earlier keeps the count the project asks for.
        last = video.duration_s - 1.0 / (video.fps or 25.0)
        if last > start_s:
            end_s = min(end_s, last)
    with local_path(name) as path:
        return sample_frames(path, start_s, end_s, count=project.frames_per_clip, max_side_px=project.frame_max_side_px)


def _schema_for(project: Project, key: str) -> dict | None:
    """The active template's response schema (a copy), so a step can tighten it to the project."""
    return copy.deepcopy(prompt_template_for_call(project=project, key=key).response_schema)


def _sub(schema: Any, *path: str) -> dict | None:
    for key in path:
        if not isinstance(schema, dict):
            return None
        schema = schema.get(key)
    return schema if isinstance(schema, dict) else None


def draft_tasks(*, project: Project) -> list[dict]:
    """What MCQs and seeds are drafted per: the 17 LongVideoBench codes or the project's task list.

    `task` is what is stored (MCQ.category, SeedQuestion.task); `prompt` is how the model is told.
    """
    if project.kind == ProjectKind.LONGVIDEOBENCH:
        return [
            {
                "task": c["code"],
                "group": c.get("level", ""),
                "level": c.get("level", ""),
                "prompt": f"{c['code']} ({c.get('name', '')})",
            }
            for c in project.taxonomy("question_categories")
        ]
    return [
        {"task": t["task"], "group": t.get("group", ""), "level": "", "prompt": t["task"]}
        for t in project.taxonomy("tasks")
        if t.get("task")
    ]


def draft_videos(*, project: Project, video_ids: Iterable[int] | None = None):
    """The videos a run may draft for: processed, not rejected by curation, not flagged unusable."""
    videos = Video.objects.filter(project=project, status=VideoStatus.READY, unusable_reason="").exclude(
        curation_status=CurationStatus.REJECTED
    )
    if video_ids is not None:
        videos = videos.filter(pk__in=list(video_ids))
    return videos.order_by("name", "pk")


def _excluded(project: Project, video_ids: list[int] | None, kept: list[Video]) -> list[dict]:
    if video_ids is None:
        return []
    kept_ids = {v.pk for v in kept}
    out = []
    for video in Video.objects.filter(project=project, pk__in=video_ids).exclude(pk__in=kept_ids):
        if video.status != VideoStatus.READY:
            why = f"not processed ({video.get_status_display().lower()})"
        elif video.unusable_reason:
            why = f"flagged unusable ({video.unusable_reason})"
        else:
            why = "rejected by curation"
        out.append({"video": video.pk, "name": video.name, "reason": why})
    missing = set(video_ids) - kept_ids - {e["video"] for e in out}
    out += [{"video": pk, "name": "", "reason": "not in this project"} for pk in sorted(missing)]
    return out


def _untouched(item) -> bool:
    return not item.human_edited and item.status == ItemStatus.DRAFT


# --- Step 1: QA chains per clip -------------------------------------------------------------------


class _Chains:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.skills = [s["code"] for s in project.taxonomy("skills") if s.get("code")]
        self.skill_names = {s.get("name", "").lower(): s["code"] for s in project.taxonomy("skills") if s.get("code")}
        self.schema = _schema_for(project, "qa_chain")
        turns = _sub(self.schema, "properties", "turns")
        if turns is not None and turns.get("type") == "array":
            # The project's turn range and skill codes go into the schema, so the LLM layer's repair
            # round already tells the model what was wrong.
            turns["minItems"], turns["maxItems"] = project.chain_min_turns, project.chain_max_turns
            skill = _sub(turns, "items", "properties", "skill")
            if skill is not None and self.skills:
                skill["enum"] = list(self.skills)

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[_Item]:
        clips = (
            Clip.objects.filter(video__in=videos).select_related("video").order_by("video__name", "video_id", "index")
        )
        chains = {
            c["clip_id"]: c
            for c in QAChain.objects.filter(clip__video__in=videos).values("clip_id", "status", "human_edited")
        }
        items = []
        for clip in clips:
            label, ref = f"{clip.video.name} clip {clip.index}", {"clip": clip.pk}
            chain = chains.get(clip.pk)
            if chain is None:
                items.append(_Item(label, ref, clip))
            elif chain["human_edited"] or chain["status"] != ItemStatus.DRAFT:
                summary.record(label, ref, ItemResult(SKIPPED_HUMAN))
            else:
                summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
        return items

    def prepare(self, clip: Clip) -> dict:
        frames = _frames(clip.video, clip.start_s, clip.end_s, self.project)
        return {"frames": frames, "subtitles": _subtitles_text(clip.video_id, clip.start_s, clip.end_s)}

    def _skill(self, raw: str) -> str | None:
        text = str(raw or "").strip()
        for code in self.skills:
            if text.upper() == code.upper():
                return code
        return self.skill_names.get(text.lower())

    def draft(self, clip: Clip, prepared: dict) -> ItemResult:
        project = self.project
        result = chat_json(
            project=project,
            step="qa_chain",
            template_key="qa_chain",
            context={
                "clip_start": _seconds(clip.start_s),
                "clip_end": _seconds(clip.end_s),
                "frame_count": len(prepared["frames"]),
                "subtitles": prepared["subtitles"],
                "min_turns": project.chain_min_turns,
                "max_turns": project.chain_max_turns,
                "language": language_name(project),
                "skills": "; ".join(
                    f"{s['code']} ({s.get('name', s['code'])})" for s in project.taxonomy("skills") if s.get("code")
                ),
            },
            images=prepared["frames"],
            schema=self.schema,
        )
        turns = result.parsed.get("turns") if isinstance(result.parsed, dict) else None
        if not isinstance(turns, list):
            return ItemResult(FAILED, reason="the answer has no list of turns", call=result.call)
        if not project.chain_min_turns <= len(turns) <= project.chain_max_turns:
            return ItemResult(
                FAILED,
                reason=f"the model gave {len(turns)} turns; the project asks for "
                f"{project.chain_min_turns}–{project.chain_max_turns}",
                call=result.call,
            )
        pairs, warnings = [], []
        for n, turn in enumerate(turns, start=1):
            question = str((turn or {}).get("question") or "").strip()
            answer = str((turn or {}).get("answer") or "").strip()
            if not question or not answer:
                return ItemResult(FAILED, reason=f"turn {n} has an empty question or answer", call=result.call)
            skill = self._skill(turn.get("skill"))
            if skill is None:
                warnings.append(f"turn {n}: skill {turn.get('skill')!r} is not one of the project's codes; left blank")
                skill = ""
            pairs.append({"question": question, "answer": answer, "skill": skill})
        try:
            with transaction.atomic():
                Clip.objects.select_for_update().filter(pk=clip.pk).first()
                if QAChain.objects.filter(clip_id=clip.pk).exists():
                    return ItemResult(SKIPPED_EXISTING, call=result.call)  # drafted meanwhile by another run
                chain = QAChain.objects.create(
                    project=project,
                    clip=clip,
                    status=ItemStatus.DRAFT,
                    origin=Origin.MACHINE,
                    machine_draft={"pairs": pairs},
                    draft_call=result.call,
                )
                QAPair.objects.bulk_create(QAPair(chain=chain, index=i, **p) for i, p in enumerate(pairs))
        except IntegrityError:
            return ItemResult(SKIPPED_EXISTING, call=result.call)
        return ItemResult(CREATED, rows=1, call=result.call, warnings=warnings)


# --- Step 2: relation candidates between adjacent chains ----------------------------------------------


def _chain_text(pairs: list[QAPair]) -> str:
    return "\n".join(f"{n}. Q: {p.question}\n   A: {p.answer}" for n, p in enumerate(pairs, start=1))


class _Relations:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.types = [t for t in project.taxonomy("relation_types") if t.get("code")]
        self.codes = [t["code"] for t in self.types]
        self.schema = _schema_for(project, "relations")
        kind = _sub(self.schema, "properties", "links", "items", "properties", "type")
        if kind is not None and self.codes:
            kind["enum"] = list(self.codes)  # the project's own types, which may differ from the defaults

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[_Item]:
        chains = {
            (c.clip.video_id, c.clip.index): c
            for c in QAChain.objects.filter(clip__video__in=videos).select_related("clip")
        }
        pairs = {
            (p.video_id, p.before_index): p
            for p in ChainPair.objects.filter(video__in=videos)
            .select_related("chain_before", "chain_after")
            .annotate(n_relations=Count("relations"))
        }
        clip_indexes: dict[int, list[int]] = {}
        for video_id, index in Clip.objects.filter(video__in=videos).order_by("index").values_list("video_id", "index"):
            clip_indexes.setdefault(video_id, []).append(index)
        clip_sets = {video_id: set(indexes) for video_id, indexes in clip_indexes.items()}
        items = []
        for video in videos:
            for i in clip_indexes.get(video.pk, []):
                if i + 1 not in clip_sets[video.pk]:
                    continue
                label, ref = f"{video.name} chains {i}→{i + 1}", {"video": video.pk, "before_index": i}
                existing = pairs.get((video.pk, i))
                if existing is not None:
                    if not _untouched(existing):
                        summary.record(label, ref, ItemResult(SKIPPED_HUMAN))
                    elif existing.machine_draft is not None or existing.n_relations:
                        summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
                    else:
                        items.append(_Item(label, ref, (video, existing.chain_before, existing.chain_after)))
                    continue
                before, after = chains.get((video.pk, i)), chains.get((video.pk, i + 1))
                if before is None or after is None:
                    missing = ", ".join(str(k) for k, c in ((i, before), (i + 1, after)) if c is None)
                    summary.record(label, ref, ItemResult(SKIPPED, reason=f"no QA chain yet for clip {missing}"))
                    continue
                items.append(_Item(label, ref, (video, before, after)))
        return items

    def prepare(self, obj) -> dict:
        video, before, after = obj
        return {
            "before": list(QAPair.objects.filter(chain_id=before.pk).order_by("index")),
            "after": list(QAPair.objects.filter(chain_id=after.pk).order_by("index")),
            "before_clip": Clip.objects.get(pk=before.clip_id),
            "after_clip": Clip.objects.get(pk=after.clip_id),
        }

    def _links(self, raw_links: list, before: list[QAPair], after: list[QAPair]) -> tuple[list[dict], list[str]]:
        """The model's links checked against the real chains; bad ones are dropped, each with why."""
        kept, dropped, seen = [], [], set()
        for n, link in enumerate(raw_links, start=1):
            if not isinstance(link, dict):
                dropped.append(f"link {n}: not an object")
                continue
            b, a, kind = link.get("before"), link.get("after"), str(link.get("type") or "").strip().lower()
            if not isinstance(b, int) or isinstance(b, bool) or not 1 <= b <= len(before):
                dropped.append(f"link {n}: turn {b!r} of the earlier chain does not exist (it has {len(before)})")
                continue
            if not isinstance(a, int) or isinstance(a, bool) or not 1 <= a <= len(after):
                dropped.append(f"link {n}: turn {a!r} of the later chain does not exist (it has {len(after)})")
                continue
            code = next((c for c in self.codes if c.lower() == kind), None)
            if code is None:
                dropped.append(f"link {n}: type {link.get('type')!r} is not one of {', '.join(self.codes)}")
                continue
            if (b, a) in seen:
                dropped.append(f"link {n}: turns {b}→{a} are already linked")
                continue
            seen.add((b, a))
            kept.append(
                {
                    "from": before[b - 1].index,
                    "to": after[a - 1].index,
                    "type": code,
                    "rationale": str(link.get("reason") or "").strip(),
                }
            )
        return kept, dropped

    def draft(self, obj, prepared: dict) -> ItemResult:
        video, before_chain, after_chain = obj
        before, after = prepared["before"], prepared["after"]
        if not before or not after:
            return ItemResult(SKIPPED, reason="one of the two chains has no QA pairs")
        b_clip, a_clip = prepared["before_clip"], prepared["after_clip"]
        result = chat_json(
            project=self.project,
            step="relations",
            template_key="relations",
            context={
                "clip_before": f"clip {b_clip.index}, {_seconds(b_clip.start_s)}–{_seconds(b_clip.end_s)} s",
                "clip_after": f"clip {a_clip.index}, {_seconds(a_clip.start_s)}–{_seconds(a_clip.end_s)} s",
                "chain_before": _chain_text(before),
                "chain_after": _chain_text(after),
                "relation_types": "\n".join(
                    f"- {t['code']} ({t.get('label', t['code'])}): {t.get('guideline', '')}" for t in self.types
                ),
                "language": language_name(self.project),
            },
            schema=self.schema,
        )
        raw = result.parsed.get("links") if isinstance(result.parsed, dict) else None
        links, dropped = self._links(raw if isinstance(raw, list) else [], before, after)
        draft = {"relations": links, **({"dropped": dropped} if dropped else {})}
        with transaction.atomic():
            # The video's row serialises every run that makes chain pairs for this video.
            Video.objects.select_for_update().filter(pk=video.pk).first()
            current = {
                chain_id: list(QAPair.objects.filter(chain_id=chain_id).order_by("index").values_list("pk", "index"))
                for chain_id in (before_chain.pk, after_chain.pk)
            }
            if current[before_chain.pk] != [(p.pk, p.index) for p in before] or current[after_chain.pk] != [
                (p.pk, p.index) for p in after
            ]:
                return ItemResult(
                    FAILED,
                    reason="the chains were edited while the model was answering; run the step again",
                    call=result.call,
                )
            pair = ChainPair.objects.select_for_update().filter(video=video, before_index=b_clip.index).first()
            if pair is None:
                pair = ChainPair.objects.create(
                    project=self.project,
                    video=video,
                    before_index=b_clip.index,
                    chain_before=before_chain,
                    chain_after=after_chain,
                    status=ItemStatus.DRAFT,
                    origin=Origin.MACHINE,
                    machine_draft=draft,
                    draft_call=result.call,
                )
            elif not _untouched(pair):
                return ItemResult(SKIPPED_HUMAN, call=result.call)
            elif pair.machine_draft is not None or pair.relations.exists():
                return ItemResult(SKIPPED_EXISTING, call=result.call)
            else:
                # A pair someone opened but left untouched: fill it, and move its version on so an
                # editor still holding the empty version gets a conflict rather than erasing these.
                ChainPair.objects.filter(pk=pair.pk).update(
                    machine_draft=draft, draft_call=result.call, version=F("version") + 1
                )
            by_index_before = {p.index: p for p in before}
            by_index_after = {p.index: p for p in after}
            Relation.objects.bulk_create(
                Relation(
                    chain_pair=pair,
                    from_pair=by_index_before[link["from"]],
                    to_pair=by_index_after[link["to"]],
                    relation_type=link["type"],
                    origin=Origin.MACHINE,
                    decision=RelationDecision.CANDIDATE,
                    rationale=link["rationale"],
                    draft_call=result.call,
                )
                for link in links
            )
        return ItemResult(
            CREATED,
            rows=1,
            call=result.call,
            counts={"relations": len(links), "dropped_links": len(dropped)},
            warnings=[f"dropped {d}" for d in dropped],
        )


# --- Step 3: multi-agent descriptions ---------------------------------------------------------------


def description_models(*, project: Project) -> list[str]:
    """The models that describe every video: `models_per_step["description"]` (a name or a list), else one."""
    chosen = (project.models_per_step or {}).get("description")
    if isinstance(chosen, list | tuple):
        names = [str(m).strip() for m in chosen if str(m).strip()]
        if names:
            return list(dict.fromkeys(names))
    elif chosen and str(chosen).strip():
        return [str(chosen).strip()]
    return [model_for_step(project=None, step="description", vision=True)]


class _Descriptions:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.roles = [r for r in project.taxonomy("agent_roles") if r.get("role")]
        self.models = description_models(project=project)
        self.inputs = _Memo()

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[_Item]:
        have = set(VideoDescription.objects.filter(video__in=videos).values_list("video_id", "agent_role", "model"))
        items = []
        for video in videos:
            for role in self.roles:
                for model in self.models:
                    label = f"{video.name} · {role['role']} · {model}"
                    ref = {"video": video.pk, "role": role["role"], "model": model}
                    if (video.pk, role["role"], model) in have:
                        summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
                    else:
                        items.append(_Item(label, ref, (video, role, model)))
        return items

    def prepare(self, obj) -> dict:
        video = obj[0]
        if not video.duration_s:
            raise FrameSamplingError(f"{video.name} has no known duration")
        return self.inputs.get(
            video.pk,
            lambda: {
                "frames": _frames(video, 0.0, video.duration_s, self.project),
                "subtitles": _subtitles_text(video.pk),
                "comments": _comments_text(video.pk),
            },
        )

    def draft(self, obj, prepared: dict) -> ItemResult:
        video, role, model = obj
        result = chat_json(
            project=self.project,
            step="description",
            template_key="description",
            model=model,
            context={
                "role": role["role"],
                "role_instruction": role.get("instruction", ""),
                "duration": _seconds(video.duration_s),
                "frame_count": len(prepared["frames"]),
                "subtitles": prepared["subtitles"],
                "comments": prepared["comments"],
                "language": language_name(self.project),
            },
            images=prepared["frames"],
        )
        parsed = result.parsed if isinstance(result.parsed, dict) else {}
        text = str(parsed.get("description") or "").strip()
        if not text:
            return ItemResult(FAILED, reason="the description is empty", call=result.call)
        moments = [m for m in parsed.get("moments") or [] if isinstance(m, dict) and str(m.get("text") or "").strip()]
        if moments:
            # Times stay in the text: the MCQ step reads descriptions as its picture of the video.
            text += "\n\nMoments:\n" + "\n".join(
                f"[{_seconds(float(m.get('time') or 0))} s] {str(m['text']).strip()}" for m in moments
            )
        try:
            with transaction.atomic():
                VideoDescription.objects.create(
                    video=video, agent_role=role["role"], model=model, text=text, draft_call=result.call
                )
        except IntegrityError:
            return ItemResult(SKIPPED_EXISTING, call=result.call)
        return ItemResult(CREATED, rows=1, call=result.call)


# --- Step 4: seed questions per task --------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


class _Seeds:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.count = int(params.get("count") or DEFAULT_SEED_COUNT)
        self.more = bool(params.get("more"))
        wanted = params.get("tasks")
        self.tasks = [t for t in draft_tasks(project=project) if not wanted or t["task"] in wanted]

    def plan(self, videos, summary: DraftSummary) -> list[_Item]:
        drafted = set(
            SeedQuestion.objects.filter(project=self.project, origin=Origin.MACHINE)
            .values_list("task", flat=True)
            .distinct()
        )
        items = []
        for task in self.tasks:
            label, ref = f"task {task['task']}", {"task": task["task"]}
            if task["task"] in drafted and not self.more:
                summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
            else:
                items.append(_Item(label, ref, task))
        return items

    def prepare(self, task: dict) -> list[str]:
        return list(
            SeedQuestion.objects.filter(project=self.project, task=task["task"])
            .order_by("id")
            .values_list("text", flat=True)
        )

    def draft(self, task: dict, existing: list[str]) -> ItemResult:
        result = chat_json(
            project=self.project,
            step="seed_questions",
            template_key="seed_questions",
            context={
                "task": task["prompt"],
                "task_group": task["group"] or "none",
                "existing": "\n".join(f"- {t}" for t in existing) or "(none yet)",
                "count": self.count,
                "language": language_name(self.project),
            },
        )
        questions = result.parsed.get("questions") if isinstance(result.parsed, dict) else None
        texts = []
        for q in questions if isinstance(questions, list) else []:
            text = str((q or {}).get("text") or "").strip() if isinstance(q, dict) else ""
            if text:
                texts.append(text[:2000])
        made = 0
        with transaction.atomic():
            taken = {
                _norm(t)
                for t in SeedQuestion.objects.filter(project=self.project, task=task["task"]).values_list(
                    "text", flat=True
                )
            }
            for text in texts:
                if _norm(text) in taken:
                    continue  # also never proposes again what a curator rejected
                taken.add(_norm(text))
                SeedQuestion.objects.create(
                    project=self.project,
                    task=task["task"],
                    text=text,
                    status=SeedStatus.PROPOSED,
                    origin=Origin.MACHINE,
                    draft_call=result.call,
                )
                made += 1
        if not made:
            return ItemResult(
                FAILED, reason="every proposed seed was empty or already in the library", call=result.call
            )
        return ItemResult(CREATED, rows=made, call=result.call)


# --- Step 5: candidate MCQs per video and task ----------------------------------------------------


def _descriptions_text(video_id: int) -> str:
    rows = (
        VideoDescription.objects.filter(video_id=video_id)
        .order_by("agent_role", "model")
        .values_list("agent_role", "model", "text")
    )
    return text_excerpt((f"[{role} · {model}]\n{text}\n" for role, model, text in rows), limit=TEXT_LIMIT * 2)


def _span(question: str, query: str) -> tuple[str, int, int] | None:
    """The referring query as it appears in the question (exact, else ignoring case)."""
    query = query.strip()
    if not query:
        return None
    start = question.find(query)
    if start < 0:
        start = question.lower().find(query.lower())
    if start < 0:
        return None
    return question[start : start + len(query)], start, start + len(query)


def _options_from(q: dict) -> tuple[list[str], int] | None:
    """Options and the correct index when the model gave a usable set (an edited template may ask)."""
    options = q.get("options")
    if not isinstance(options, list) or not 4 <= len(options) <= 5:
        return None
    options = [str(o).strip() for o in options]
    if not all(options) or len({_norm(o) for o in options}) != len(options):
        return None
    index = q.get("correct_index")
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(options):
        return options, index
    answer = _norm(q.get("answer") or "")
    matches = [i for i, o in enumerate(options) if _norm(o) == answer]
    return (options, matches[0]) if len(matches) == 1 else None


class _MCQs:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.count = int(params.get("count") or DEFAULT_MCQ_COUNT)
        wanted = params.get("tasks")
        self.tasks = [t for t in draft_tasks(project=project) if not wanted or t["task"] in wanted]

    def _existing(self, videos) -> set[tuple[int, str]]:
        return set(
            MCQVideo.objects.filter(
                video__in=videos, role=VideoRole.MAIN, mcq__project=self.project, mcq__origin=Origin.MACHINE
            ).values_list("video_id", "mcq__category")
        )

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[_Item]:
        seeds: dict[str, list[str]] = {}
        for task, text in (
            SeedQuestion.objects.filter(project=self.project, status=SeedStatus.KEPT)
            .order_by("task", "id")
            .values_list("task", "text")
        ):
            seeds.setdefault(task, []).append(text)
        existing = self._existing(videos)
        items = []
        for video in videos:
            for task in self.tasks:
                label, ref = f"{video.name} · {task['task']}", {"video": video.pk, "task": task["task"]}
                if (video.pk, task["task"]) in existing:
                    summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
                elif not seeds.get(task["task"]):
                    summary.record(
                        label,
                        ref,
                        ItemResult(SKIPPED, reason=f"no kept seed questions for {task['task']}: curate seeds first"),
                    )
                else:
                    items.append(_Item(label, ref, (video, task, seeds[task["task"]])))
        return items

    def prepare(self, obj) -> dict:
        video = obj[0]
        return {"descriptions": _descriptions_text(video.pk), "subtitles": _subtitles_text(video.pk)}

    def draft(self, obj, prepared: dict) -> ItemResult:
        video, task, seeds = obj
        result = chat_json(
            project=self.project,
            step="mcq",
            template_key="mcq",
            context={
                "task": task["prompt"],
                "task_group": task["group"] or "none",
                "duration": _seconds(video.duration_s or 0),
                "seeds": "\n".join(f"- {s}" for s in seeds),
                "descriptions": prepared["descriptions"] or "(none)",
                "subtitles": prepared["subtitles"],
                "count": self.count,
                "language": language_name(self.project),
            },
        )
        raw = result.parsed.get("questions") if isinstance(result.parsed, dict) else None
        questions = (
            [q for q in raw if isinstance(q, dict) and str(q.get("question") or "").strip()]
            if isinstance(raw, list)
            else []
        )
        if not questions:
            return ItemResult(FAILED, reason="the answer has no usable question", call=result.call)
        warnings: list[str] = []
        with transaction.atomic():
            Video.objects.select_for_update().filter(pk=video.pk).first()
            if (video.pk, task["task"]) in self._existing([video]):
                return ItemResult(SKIPPED_EXISTING, call=result.call)
            for n, q in enumerate(questions[: self.count], start=1):
                warnings += self._create(video=video, task=task, q=q, n=n, call=result.call)
        return ItemResult(CREATED, rows=min(len(questions), self.count), call=result.call, warnings=warnings)

    def _create(self, *, video: Video, task: dict, q: dict, n: int, call: LLMCall) -> list[str]:
        warnings = []
        question = str(q["question"]).strip()
        span = _span(question, str(q.get("referring_query") or ""))
        if q.get("referring_query") and span is None:
            warnings.append(f"question {n}: the referring query is not part of the question; not marked")
        given = _options_from(q)
        mcq = MCQ.objects.create(
            project=self.project,
            status=ItemStatus.DRAFT,
            origin=Origin.MACHINE,
            question=question,
            referring_query=span[0] if span else "",
            referring_start=span[1] if span else None,
            referring_end=span[2] if span else None,
            question_wo_referring_query=str(q.get("question_without_referring_query") or "").strip(),
            options=given[0] if given else [],
            correct_index=given[1] if given else None,
            category=task["task"][:60],
            level=task["level"][:20],
            task_group=("" if task["level"] else task["group"])[:60],
            machine_draft=q,
            draft_call=call,
        )
        MCQVideo.objects.create(mcq=mcq, video=video, role=VideoRole.MAIN, order=0)
        order = 0
        for t in q.get("moments") or []:
            if (
                not isinstance(t, int | float)
                or isinstance(t, bool)
                or t < 0
                or (video.duration_s and t > video.duration_s)
            ):
                warnings.append(f"question {n}: moment {t!r} s lies outside the video; dropped")
                continue
            ReferredMoment.objects.create(
                mcq=mcq, video=video, time_s=float(t), frame_index=video.frame_index(float(t)), order=order
            )
            order += 1
        return warnings


# --- Step 6: answers and distractors --------------------------------------------------------------


def options_shuffle(*, mcq_id: int, correct: str, distractors: list[str]) -> tuple[list[str], int]:
    """The options in an order fixed by the item (the same on every run), and where the answer landed."""
    options = [correct, *distractors]
    seed = int(hashlib.sha256(f"vidqa-options:{mcq_id}".encode()).hexdigest()[:16], 16)
    random.Random(seed).shuffle(options)  # noqa: S311 - an order, not a secret
    return options, options.index(correct)


class _Options:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.distractors = min(4, max(3, int(params.get("distractors") or DEFAULT_DISTRACTORS)))

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[_Item]:
        links = (
            MCQVideo.objects.filter(role=VideoRole.MAIN, video__in=videos, mcq__project=self.project, mcq__options=[])
            .select_related("mcq")
            .order_by("mcq_id", "order")
        )
        items, seen = [], set()
        for link in links:
            mcq = link.mcq
            if mcq.pk in seen:
                continue
            seen.add(mcq.pk)
            mcq.main_video_id = link.video_id
            label, ref = f"MCQ {mcq.pk}", {"mcq": mcq.pk}
            if not _untouched(mcq):
                summary.record(label, ref, ItemResult(SKIPPED_HUMAN))
            elif not mcq.question.strip():
                summary.record(label, ref, ItemResult(SKIPPED, reason="the MCQ has no question yet"))
            else:
                items.append(_Item(label, ref, mcq))
        return items

    def prepare(self, mcq: MCQ) -> str:
        return _descriptions_text(mcq.main_video_id)

    def draft(self, mcq: MCQ, descriptions: str) -> ItemResult:
        proposed = (mcq.machine_draft or {}).get("answer") if isinstance(mcq.machine_draft, dict) else ""
        result = chat_json(
            project=self.project,
            step="distractors",
            template_key="distractors",
            context={
                "question": mcq.question,
                "correct_answer": str(proposed or ""),
                "descriptions": descriptions or "(none)",
                "distractor_count": self.distractors,
                "language": language_name(self.project),
            },
        )
        parsed = result.parsed if isinstance(result.parsed, dict) else {}
        correct = str(parsed.get("correct_answer") or "").strip()
        if not correct:
            return ItemResult(FAILED, reason="no correct answer in the model's answer", call=result.call)
        seen, distractors = {_norm(correct)}, []
        for d in parsed.get("distractors") or []:
            text = str(d or "").strip()
            if text and _norm(text) not in seen:
                seen.add(_norm(text))
                distractors.append(text)
        if len(distractors) < 3:
            return ItemResult(
                FAILED,
                reason=f"only {len(distractors)} distinct distractors besides the answer; at least 3 are needed",
                call=result.call,
            )
        options, correct_index = options_shuffle(
            mcq_id=mcq.pk, correct=correct, distractors=distractors[: self.distractors]
        )
        with transaction.atomic():
            current = MCQ.objects.select_for_update().get(pk=mcq.pk)
            if not _untouched(current):
                return ItemResult(SKIPPED_HUMAN, call=result.call)
            if current.options:
                return ItemResult(SKIPPED_EXISTING, call=result.call)
            draft = dict(current.machine_draft) if isinstance(current.machine_draft, dict) else {}
            draft.update(
                options=options, correct_index=correct_index, options_call=result.call.pk if result.call else None
            )
            # The version moves on so an editor who opened the MCQ without options gets a conflict, not a loss.
            MCQ.objects.filter(pk=mcq.pk).update(
                options=options,
                correct_index=correct_index,
                machine_draft=draft,
                draft_call=current.draft_call_id or (result.call.pk if result.call else None),
                version=F("version") + 1,
            )
        return ItemResult(CREATED, rows=1, call=result.call)


_STEP_CLASSES = {
    "chains": _Chains,
    "relations": _Relations,
    "descriptions": _Descriptions,
    "seeds": _Seeds,
    "mcqs": _MCQs,
    "options": _Options,
}


# --- Services -------------------------------------------------------------------------------------


def draft_step_run(
    *,
    project: Project,
    step: str,
    video_ids: list[int] | None = None,
    tasks: list[str] | None = None,
    count: int | None = None,
    distractors: int | None = None,
    more: bool = False,
    concurrency: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> DraftSummary:
    """Draft what is missing for one step over the project's videos (or `video_ids`); see the module doc.

    `progress(done, total, message)` is called as items finish (at most about twice a second).
    """
    if step not in DRAFT_STEPS:
        raise ValueError(f"unknown draft step {step!r}; known: {', '.join(DRAFT_STEPS)}")
    params = {"tasks": tasks, "count": count, "distractors": distractors, "more": more, "video_ids": video_ids}
    handler = _STEP_CLASSES[step](project, params)
    summary = DraftSummary(step=step)
    videos: list[Video] = []
    if DRAFT_STEPS[step].uses_videos:
        videos = list(draft_videos(project=project, video_ids=video_ids))
        summary.excluded_videos = _excluded(project, video_ids, videos)
    items = handler.plan(videos, summary)
    summary.total = summary.done + len(items)
    last = [0.0]
    lock = threading.Lock()

    def report(force: bool = False) -> None:
        if progress is None:
            return
        with lock:
            now = time.monotonic()
            if not force and now - last[0] < PROGRESS_EVERY_S and summary.done < summary.total:
                return
            last[0] = now
            progress(summary.done, summary.total, f"{summary.done}/{summary.total} · {summary.message()}")

    report(force=True)

    def on_result(item: _Item, result: ItemResult) -> None:
        summary.record(item.label, item.ref, result)
        report()

    _run_items(
        items,
        prepare=handler.prepare,
        draft=handler.draft,
        concurrency=concurrency if concurrency is not None else draft_concurrency(),
        on_result=on_result,
    )
    report(force=True)
    return summary


def draft_run_start(
    *,
    project: Project,
    step: str,
    user=None,
    video: Video | None = None,
    video_ids: list[int] | None = None,
    tasks: list[str] | None = None,
    count: int | None = None,
    distractors: int | None = None,
    more: bool = False,
) -> BackgroundJob:
    """Queue a draft run: one video, a selection of videos (ids) or the whole project (neither).

    Raises ValidationError for bad input, JobAlreadyRunning when the same run is still under way.
    """
    if step not in DRAFT_STEPS:
        raise ValidationError(f"Unknown draft step “{step}”.")
    info = DRAFT_STEPS[step]
    if video is not None:
        if video.project_id != project.pk:
            raise ValidationError("That video is not in this project.")
        video_ids = [video.pk]
    if video_ids is not None:
        video_ids = sorted({int(v) for v in video_ids})
        if info.uses_videos and not video_ids:
            raise ValidationError("The selection holds no video: choose at least one, or run over the whole project.")
    known = {t["task"] for t in draft_tasks(project=project)}
    if tasks:
        unknown = [t for t in tasks if t not in known]
        if unknown:
            raise ValidationError(f"Not a task of this project: {', '.join(unknown)}.")
    for name, value, low, high in (("count", count, 1, 20), ("distractors", distractors, 3, 4)):
        if value is not None and not low <= int(value) <= high:
            raise ValidationError(f"{name.capitalize()} must be between {low} and {high}.")
    params = {"step": step}
    if info.uses_videos and video_ids is not None:
        params["video_ids"] = video_ids
    if info.uses_tasks and tasks:
        params["tasks"] = list(tasks)
    if count is not None and info.uses_tasks:
        params["count"] = int(count)
    if distractors is not None and step == "options":
        params["distractors"] = int(distractors)
    if more and step == "seeds":
        params["more"] = True
    return job_create(
        project=project, kind=info.kind, target=video if info.uses_videos else None, params=params, user=user
    )


def draft_job_run(*, job: BackgroundJob) -> DraftSummary:
    """The body of a draft job: run its step, report progress, store the summary as the result.

    When every attempted item failed, raises DraftRunFailed (the job then shows as failed, with the
    result still listing each item and why).
    """
    step = STEP_BY_KIND[job.kind].code
    params = job.params or {}
    summary = draft_step_run(
        project=job.project,
        step=step,
        video_ids=params.get("video_ids"),
        tasks=params.get("tasks"),
        count=params.get("count"),
        distractors=params.get("distractors"),
        more=bool(params.get("more")),
        progress=lambda done, total, message: job_progress(job, done=done, total=total, message=message),
    )
    job.result = summary.as_json()
    job.message = summary.message()[:500]
    if summary.failed and not summary.items_created:
        BackgroundJob.objects.filter(pk=job.pk).update(result=job.result)
        raise DraftRunFailed(f"{DRAFT_STEPS[step].label}: every item failed. {summary.message()}")
    return summary


# --- Seed library curation ------------------------------------------------------------------------


def _seed_text_clean(*, project: Project, task: str, text: str, exclude_id: int | None = None) -> str:
    text = " ".join(str(text or "").split())
    if not text:
        raise ValidationError("A seed question needs some text.")
    if len(text) > 2000:
        raise ValidationError("A seed question is at most 2,000 characters.")
    clash = SeedQuestion.objects.filter(project=project, task=task).exclude(pk=exclude_id)
    if any(_norm(t) == _norm(text) for t in clash.values_list("text", flat=True)):
        raise ValidationError(f"The library of {task} already holds this question.")
    return text


def seed_create(*, project: Project, task: str, text: str, user=None) -> SeedQuestion:
    """A seed written by a curator: kept at once (a person chose it)."""
    if task not in {t["task"] for t in draft_tasks(project=project)} | set(
        SeedQuestion.objects.filter(project=project).values_list("task", flat=True)
    ):
        raise ValidationError(f"“{task}” is not a task of this project.")
    text = _seed_text_clean(project=project, task=task, text=text)
    try:
        with transaction.atomic():
            return SeedQuestion.objects.create(
                project=project,
                task=task,
                text=text,
                status=SeedStatus.KEPT,
                origin=Origin.HUMAN,
                created_by=user if user is not None and user.is_authenticated else None,
            )
    except IntegrityError as exc:
        raise ValidationError(f"The library of {task} already holds this question.") from exc


def seed_update(*, seed: SeedQuestion, status: str | None = None, text: str | None = None) -> SeedQuestion:
    """Keep, reject or reword a seed. The origin stays: it says who proposed the question."""
    fields = []
    if status is not None:
        if status not in SeedStatus.values:
            raise ValidationError(f"Unknown seed status “{status}”.")
        seed.status = status
        fields.append("status")
    if text is not None:
        seed.text = _seed_text_clean(project=seed.project, task=seed.task, text=text, exclude_id=seed.pk)
        fields.append("text")
    if fields:
        try:
            with transaction.atomic():
                seed.save(update_fields=fields)
        except IntegrityError as exc:
            raise ValidationError(f"The library of {seed.task} already holds this question.") from exc
    return seed


# --- Reads ------------------------------------------------------------------------------------


def draft_coverage(*, project: Project) -> list[dict]:
    """How far each step has got over the draftable videos: what exists against what could."""
    videos = draft_videos(project=project)
    clips = Clip.objects.filter(video__in=videos)
    clip_count = clips.count()
    chains = QAChain.objects.filter(clip__in=clips).aggregate(
        total=Count("id"), machine=Count("id", filter=Q(status=ItemStatus.DRAFT, human_edited=False))
    )
    video_count = videos.count()
    # Clips are numbered 0..n-1 per video, so a video with n clips has n-1 adjacent pairs.
    adjacent = clip_count - clips.values("video_id").distinct().count()
    pairs = ChainPair.objects.filter(video__in=videos).count()
    descriptions = VideoDescription.objects.filter(video__in=videos).count()
    roles, models = len(project.taxonomy("agent_roles")), len(description_models(project=project))
    seeds = SeedQuestion.objects.filter(project=project).aggregate(
        kept=Count("id", filter=Q(status=SeedStatus.KEPT)), proposed=Count("id", filter=Q(status=SeedStatus.PROPOSED))
    )
    mcqs = MCQ.objects.filter(project=project, mcq_videos__role=VideoRole.MAIN, mcq_videos__video__in=videos).aggregate(
        total=Count("id", distinct=True), no_options=Count("id", filter=Q(options=[]), distinct=True)
    )
    return [
        {"step": "chains", "have": chains["total"], "of": clip_count, "note": f"{chains['machine']} untouched drafts"},
        {"step": "relations", "have": pairs, "of": adjacent, "note": "chain pairs"},
        {
            "step": "descriptions",
            "have": descriptions,
            "of": video_count * roles * models,
            "note": f"{roles} roles × {models} models",
        },
        {"step": "seeds", "have": seeds["kept"], "of": None, "note": f"kept; {seeds['proposed']} proposed to curate"},
        {"step": "mcqs", "have": mcqs["total"], "of": None, "note": "MCQs on these videos"},
        {
            "step": "options",
            "have": mcqs["total"] - mcqs["no_options"],
            "of": mcqs["total"],
            "note": "MCQs with options",
        },
    ]
