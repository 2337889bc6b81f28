"""Shortcut probes: can a model answer an MCQ while something the question needs is hidden?

Four probes, each a multiple-choice prompt to a probe model (every call recorded by the LLM layer):

- **text** — the question and its options only, in K shuffled option orders (the project's
  `probe_shuffles`, default 3), so a model that always answers "A" is not rewarded by a key that
  often sits first;
- **transcript** — the question, the options and the videos' subtitles or speech transcript:
  answers leaked in speech (items whose videos have no cue are skipped, not failed);
- **frame** — each referred moment's frame alone with the question and options; where the item has
  no moment, N uniform frames of its first video (`probe_frames`), each alone;
- **options** — the frames (moments, else N uniform) and the options, without the question.

Orders are the item's own for every probe but text-only. A reply is read by llm.answers'
rules (no second model call); a reply naming no option, or naming two, is a failure with the
reply kept, as are the LLM layer's failures (429s after its retries, timeouts, errors). A failure
never counts as an answer: scores are shares of the answers read.

A call is keyed by (item, probe, variant, model) and remembers the sha256 of everything its prompt
showed: a run reuses every answered call whose prompt is unchanged, asks again a failed one, and
drops the rows a run no longer plans (fewer orders, a moment removed).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from annotator.models import MCQ, MCQVideo, ReferredMoment
from llm.answers import extract_choice, options_block
from llm.client import LLMError, Turn, calls_in_flight, chat_text, llm_endpoint
from llm.clip_context import seconds_text, timed_lines_text
from llm.endpoints import model_for_use
from llm.frames import FrameSamplingError, sample_frames
from llm.models import ModelUse
from llm.parallel import run_parallel
from videos.models import SubtitleCue
from videos.storage_files import local_path

from .models import Probe, ProbeAnswer, ProbeRun

log = logging.getLogger(__name__)

PROBES = (Probe.TEXT, Probe.TRANSCRIPT, Probe.FRAME, Probe.OPTIONS)
STEP_PREFIX = "probe_"  # llm.endpoints sends every "probe…" step to the probes model
SYSTEM = (
    "You answer a multiple-choice question about a video. Some of the video may be withheld; "
    "answer with your best guess anyway. Reply with the letter of exactly one option and nothing else."
)
SUBTITLE_SOURCES = ("srt", "vtt", "lvb_json", "manual")
# Half a frame at 25 fps either side of a moment: one frame from its centre.
_FRAME_HALF_S = 0.02
REPLY_KEEP = 2000


@dataclass(frozen=True)
class FrameRef:
    video_id: int
    file_name: str  # the stored file ffmpeg reads (proxy when there is one)
    sha256: str
    time_s: float


@dataclass(frozen=True)
class Unit:
    """One planned probe call."""

    mcq_id: int
    item_version: int
    probe: str
    variant: str
    model: str
    shown_order: tuple[int, ...]  # shown position → the item's option index
    correct_index: int
    question: str
    options: tuple[str, ...]  # as shown
    text: str  # the user message
    frames: tuple[FrameRef, ...] = ()
    input_hash: str = ""

    @property
    def key(self) -> tuple[int, str, str, str]:
        return (self.mcq_id, self.probe, self.variant, self.model)


@dataclass(frozen=True)
class Skip:
    mcq_id: int
    probe: str
    reason: str


@dataclass
class Plan:
    units: list[Unit] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    items: int = 0


@dataclass(frozen=True)
class Outcome:
    """What one call came to, before it is written."""

    unit: Unit
    ok: bool
    chosen_index: int | None = None
    reason: str = ""
    reply: str = ""
    method: str = ""
    call_id: int | None = None


def shuffled_order(mcq_id: int, k: int, count: int) -> tuple[int, ...]:
    """The k-th shown order of an item's options: a fixed shuffle per item, rotated by k.

    Rotating one shuffle moves the key to a different position in each of up to `count` orders.
    """
    order = list(range(count))
    random.Random(f"probe-order:{mcq_id}").shuffle(order)  # noqa: S311 - a fixed order, not a secret
    k %= count
    return tuple(order[k:] + order[:k])


def _question_block(question: str, options: Iterable[str]) -> str:
    return f"Question: {question}\nOptions:\n{options_block(list(options))}\nAnswer with the option's letter."


def _options_only_block(options: Iterable[str]) -> str:
    return (
        "The question is withheld. From the frames alone, which of these options is the answer?\n"
        f"Options:\n{options_block(list(options))}\nAnswer with the option's letter."
    )


def _hash(unit: Unit) -> str:
    shown = {
        "probe": unit.probe,
        "variant": unit.variant,
        "model": unit.model,
        "system": SYSTEM,
        "text": unit.text,
        "frames": [[f.sha256, round(f.time_s, 3)] for f in unit.frames],
    }
    return hashlib.sha256(json.dumps(shown, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def probe_models(*, project, models: Iterable[str] | None = None) -> list[str]:
    """The run's probe models: those given, else the project's list, else the endpoint's probes model."""
    chosen = [m.strip() for m in (models or project.probe_models or []) if m and m.strip()]
    return list(dict.fromkeys(chosen)) or [model_for_use(project=project, use=ModelUse.PROBES)]


def _frame_ref(video, time_s: float) -> FrameRef:
    name = video.proxy.name if video.proxy else video.original.name
    return FrameRef(video_id=video.pk, file_name=name or "", sha256=video.sha256, time_s=float(time_s))


def _frames_of(mcq, links, frames: int) -> list[FrameRef]:
    moments = list(mcq.moments.all())
    videos = {link.video_id: link.video for link in links}
    if moments:
        return [_frame_ref(videos[m.video_id], m.time_s) for m in moments if m.video_id in videos]
    if not links or not links[0].video.duration_s:
        return []
    video = links[0].video
    step = video.duration_s / frames
    return [_frame_ref(video, (i + 0.5) * step) for i in range(frames)]


def _transcript(cues: list[SubtitleCue]) -> str:
    chosen = [c for c in cues if c.source in SUBTITLE_SOURCES] or [c for c in cues if c.source == "asr"]
    return timed_lines_text((c.start_s, c.text) for c in chosen)


def _unit(mcq, options: list[str], probe, variant, order, text, frame_refs=(), model="") -> Unit:
    u = Unit(
        mcq_id=mcq.pk,
        item_version=mcq.version,
        probe=probe,
        variant=variant,
        model=model,
        shown_order=tuple(order),
        correct_index=mcq.correct_index,
        question=mcq.question,
        options=tuple(options[i] for i in order),
        text=text,
        frames=tuple(frame_refs),
    )
    return Unit(**{**u.__dict__, "input_hash": _hash(u)})


def probe_plan(
    *,
    project,
    probes: Iterable[str] = PROBES,
    models: Iterable[str] | None = None,
    shuffles: int | None = None,
    frames: int | None = None,
    mcq_ids: Iterable[int] | None = None,
) -> Plan:
    """Every call a run would make, in item order. Three queries plus one for cues."""
    probes = [Probe(p) for p in probes]
    shuffles = shuffles or project.probe_shuffles
    frames = frames or project.probe_frames
    model_names = probe_models(project=project, models=models)
    items = MCQ.objects.filter(project=project).order_by("pk")
    if mcq_ids is not None:
        items = items.filter(pk__in=list(mcq_ids))
    items = items.prefetch_related(
        Prefetch("mcq_videos", queryset=MCQVideo.objects.select_related("video").order_by("order")),
        Prefetch("moments", queryset=ReferredMoment.objects.order_by("order", "time_s", "pk")),
    )
    items = list(items)
    cues: dict[int, list[SubtitleCue]] = {}
    if Probe.TRANSCRIPT in probes:
        video_ids = {link.video_id for mcq in items for link in mcq.mcq_videos.all()}
        for cue in SubtitleCue.objects.filter(video_id__in=video_ids).order_by("video_id", "start_s", "pk"):
            cues.setdefault(cue.video_id, []).append(cue)

    plan = Plan(items=len(items))
    for mcq in items:
        options = [str(o) for o in (mcq.options or [])]
        if len(options) < 2 or mcq.correct_index is None or mcq.correct_index >= len(options):
            for probe in probes:
                plan.skipped.append(Skip(mcq.pk, probe, "the item has no options with a correct one to check"))
            continue
        links = list(mcq.mcq_videos.all())
        own = tuple(range(len(options)))

        for model in model_names:
            for probe in probes:
                if probe == Probe.TEXT:
                    for k in range(shuffles):
                        order = shuffled_order(mcq.pk, k, len(options))
                        text = _question_block(mcq.question, [options[i] for i in order])
                        plan.units.append(_unit(mcq, options, probe, f"order {k + 1}", order, text, model=model))
                elif probe == Probe.TRANSCRIPT:
                    lines = "\n".join(
                        t for t in (_transcript(cues.get(link.video_id, [])) for link in links) if t
                    ).strip()
                    if not lines:
                        plan.skipped.append(Skip(mcq.pk, probe, "its videos have no subtitles or transcript"))
                        continue
                    text = f"Transcript of the video:\n{lines}\n\n{_question_block(mcq.question, options)}"
                    plan.units.append(_unit(mcq, options, probe, "", own, text, model=model))
                else:
                    refs = _frames_of(mcq, links, frames)
                    if not refs:
                        plan.skipped.append(Skip(mcq.pk, probe, "its video has no moment and no known duration"))
                        continue
                    if probe == Probe.FRAME:
                        for ref in refs:
                            text = "One frame of the video is attached.\n" + _question_block(mcq.question, options)
                            variant = f"frame {seconds_text(ref.time_s)}" + (
                                f" v{ref.video_id}" if len(links) > 1 else ""
                            )
                            plan.units.append(_unit(mcq, options, probe, variant, own, text, (ref,), model=model))
                    else:
                        text = f"{len(refs)} frames of the video are attached.\n" + _options_only_block(options)
                        plan.units.append(_unit(mcq, options, probe, "", own, text, refs, model=model))
    return plan


def _frame_bytes(ref: FrameRef, *, max_side_px: int) -> bytes:
    if not ref.file_name:
        raise FrameSamplingError(f"video {ref.video_id} has no stored file to take a frame from")
    with local_path(ref.file_name) as path:
        start = max(0.0, ref.time_s - _FRAME_HALF_S)
        got = sample_frames(path, start, ref.time_s + _FRAME_HALF_S, count=1, max_side_px=max_side_px)
    if not got:
        raise FrameSamplingError(f"no frame at {seconds_text(ref.time_s)} s of video {ref.video_id}")
    return got[0]


def probe_frames(*, project, unit: Unit) -> tuple[bytes, ...]:
    """The JPEG frames a call shows (none for text-only and transcript). Raises FrameSamplingError."""
    return tuple(_frame_bytes(ref, max_side_px=project.frame_max_side_px) for ref in unit.frames)


def probe_ask(*, project, unit: Unit, images: tuple[bytes, ...] | None = None) -> Outcome:
    """Make one probe call and read its choice. Never raises for the model's or the video's failures."""
    if images is None:
        try:
            images = probe_frames(project=project, unit=unit)
        except FrameSamplingError as exc:
            return Outcome(unit, ok=False, reason=f"no frame to show: {exc}")
    try:
        result = chat_text(
            project=project,
            step=STEP_PREFIX + unit.probe,
            system=SYSTEM,
            turns=[Turn("user", unit.text, images)],
            model=unit.model,
            params={"temperature": 0},
        )
    except LLMError as exc:
        return Outcome(unit, ok=False, reason=exc.message, call_id=exc.call.pk if exc.call else None)
    reply = result.text
    got = extract_choice(reply, unit.options)
    if not got.found:
        return Outcome(
            unit,
            ok=False,
            reason=f"the reply could not be read as one option: {got.detail}",
            reply=reply,
            method=got.method,
            call_id=result.call.pk,
        )
    return Outcome(
        unit,
        ok=True,
        chosen_index=unit.shown_order[got.index],
        reply=reply,
        method=got.method,
        call_id=result.call.pk,
    )


def probe_concurrency(*, project) -> int:
    """Calls in flight at once: the LLM layer's per-endpoint limit (0 there means no limit → 8)."""
    return calls_in_flight(llm_endpoint(project=project))


def _ask_all(project, units: list[Unit], concurrency: int, done: Callable[[Outcome], None]) -> None:
    """Ask every unit, `concurrency` at a time (llm.parallel); `done` runs in this thread."""

    def failure(unit: Unit, exc: BaseException) -> Outcome:
        if isinstance(exc, FrameSamplingError):
            return Outcome(unit, ok=False, reason=f"no frame to show: {exc}")
        log.error("a probe call failed unexpectedly", exc_info=exc)
        return Outcome(unit, ok=False, reason=f"unexpected {type(exc).__name__}: {exc}")

    run_parallel(
        units,
        prepare=lambda unit: probe_frames(project=project, unit=unit),
        ask=lambda unit, images: probe_ask(project=project, unit=unit, images=images),
        failure=failure,
        done=done,
        concurrency=concurrency,
    )


def _save(project_id: int, run: ProbeRun, outcome: Outcome) -> None:
    u = outcome.unit
    ProbeAnswer.objects.update_or_create(
        mcq_id=u.mcq_id,
        probe=u.probe,
        variant=u.variant,
        model=u.model,
        defaults={
            "project_id": project_id,
            "run": run,
            "input_hash": u.input_hash,
            "item_version": u.item_version,
            "shown_order": list(u.shown_order),
            "option_count": len(u.options),
            "ok": outcome.ok,
            "chosen_index": outcome.chosen_index,
            "correct": (outcome.chosen_index == u.correct_index) if outcome.ok else None,
            "reason": outcome.reason,
            "reply": outcome.reply[:REPLY_KEEP],
            "method": outcome.method,
            "call_id": outcome.call_id,
            "created_at": timezone.now(),
        },
    )


def probe_run_execute(*, run: ProbeRun, progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Carry out a run: plan, reuse what is answered, ask the rest, drop rows no longer planned."""
    project = run.project
    plan = probe_plan(
        project=project,
        probes=run.probes,
        models=run.probe_models,
        shuffles=run.shuffles,
        frames=run.frames,
        mcq_ids=run.mcq_ids,
    )
    planned_ids = {u.mcq_id for u in plan.units} | {s.mcq_id for s in plan.skipped}
    existing = {
        (a.mcq_id, a.probe, a.variant, a.model): a
        for a in ProbeAnswer.objects.filter(
            mcq_id__in=planned_ids, probe__in=run.probes, model__in=run.probe_models
        ).only("id", "mcq_id", "probe", "variant", "model", "input_hash", "ok")
    }
    keys = {u.key for u in plan.units}
    stale = [a.pk for key, a in existing.items() if key not in keys]
    if stale:
        ProbeAnswer.objects.filter(pk__in=stale).delete()
    to_ask = [u for u in plan.units if not ((a := existing.get(u.key)) and a.ok and a.input_hash == u.input_hash)]
    counts = {
        "items": plan.items,
        "calls": len(plan.units),
        "reused": len(plan.units) - len(to_ask),
        "asked": 0,
        "answered": 0,
        "failed": 0,
        "skipped": len(plan.skipped),
    }
    total = len(to_ask)
    if progress:
        progress(0, total, f"{counts['reused']} answers reused, {total} calls to make")

    def done(outcome: Outcome) -> None:
        with transaction.atomic():
            _save(project.pk, run, outcome)
        counts["asked"] += 1
        counts["answered" if outcome.ok else "failed"] += 1
        if progress:
            progress(counts["asked"], total, f"{counts['asked']} of {total} probe calls made")

    _ask_all(project, to_ask, probe_concurrency(project=project), done)
    run.counts = counts
    run.finished_at = timezone.now()
    run.save(update_fields=["counts", "finished_at"])
    return counts
