"""Starting, running, resuming and cancelling evaluation runs.

A run answers every question of one release file once. Its job reads the file, skips the records
that already have an answer (so a run restarted after a crash, or started again when finished, asks
only what is missing: nothing, the second time), and asks the rest in parallel under the LLM
layer's per-endpoint limit. Each reply is read by llm.answers (rules, then the extractor model when
they fail and the run allows it); a reply no step can read is scored wrong and marked unreadable; a
call that fails (429s past the retries, timeouts, errors) is not scored and is asked again by the
next start. Frames are sampled once per video and run.

Protocols (evaluations.models.Protocol): frames then the question; LongVideoBench's frames
interleaved with the subtitles of their time; MVPBench's videos in order, each "Video k" with its
frames, the question's placeholders named after them; LiViBench's frames, then the speech
transcript and the real-time comments; the question alone (a blind baseline).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from pathlib import PurePosixPath

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from jobs.models import BackgroundJob
from jobs.services import job_create, job_progress
from llm.answers import answer_choice, options_block
from llm.client import LLMError, Turn, calls_in_flight, chat_json, chat_text, llm_endpoint
from llm.clip_context import seconds_text
from llm.endpoints import Endpoint, endpoint_require
from llm.frames import FrameSamplingError, sample_frames
from llm.parallel import run_parallel
from projects.refusals import Refused
from projects.services import project_refuse_if_archived
from releases.models import ReleaseStatus
from videos.models import Video
from videos.storage_files import local_path

from .items import DEFAULT_PROTOCOL, EvalItem, file_format, load_items, question_files, question_text, read_release_file
from .models import EvaluationRun, Outcome, Prediction, Protocol, RunStatus

log = logging.getLogger(__name__)

EVAL_TASK = "evaluations.run"
SV_PROTOCOLS = (Protocol.SV_STREAMING, Protocol.SV_SINGLE)
JUDGE_STEP = "answer_judge"
OPEN_INSTRUCTION = "Answer the question about the video in one or two sentences."
STEP = "evaluate"
ANSWER_INSTRUCTION = "Answer with the option's letter from the given choices directly."
REPLY_KEEP = 2000
FRAME_CACHE_VIDEOS = 32
COMMENTS_SHOWN = 100


class EvaluationRefused(Refused):
    status, code = 400, "evaluation_invalid"


def _run_endpoint(run: EvaluationRun) -> Endpoint | None:
    if not run.base_url:
        return None
    return Endpoint(base_url=run.base_url.rstrip("/"), model=run.model, source="evaluation", api_key=run.api_key)


def evaluation_start(
    *,
    project,
    release,
    model: str,
    user=None,
    file: str = "",
    protocol: str = "",
    frames: int = 8,
    name: str = "",
    base_url: str = "",
    api_key: str = "",
    use_extractor: bool = True,
    enqueue: bool = True,
) -> EvaluationRun:
    """Check and record a run, and queue its job (a caller running it in-process passes enqueue=False)."""
    project_refuse_if_archived(project=project)
    if release.project_id != project.pk:
        raise EvaluationRefused(_("That release is not this project's."))
    if release.status != ReleaseStatus.READY:
        raise EvaluationRefused(
            _("Release %(version)s is not ready: only a built release can be evaluated.") % {"version": release.version}
        )
    model = (model or "").strip()
    if not model:
        raise EvaluationRefused(_("Name the model to evaluate."))
    files = question_files(release)
    if not files:
        raise EvaluationRefused(
            _("Release %(version)s holds no multiple-choice questions to evaluate.") % {"version": release.version}
        )
    file = file or files[0]
    items = load_items(release, file)  # refuses a file that is not one, or has no answers
    protocol = protocol or DEFAULT_PROTOCOL[file_format(file)]
    if protocol not in Protocol.values:
        raise EvaluationRefused(_("Unknown protocol %(p)s.") % {"p": protocol})
    if protocol == Protocol.MULTI_VIDEO and file_format(file) != "mvpbench":
        raise EvaluationRefused(_("The multi-video protocol is MVPBench's."))
    open_questions = file_format(file) == "svbench"
    if open_questions != (protocol in SV_PROTOCOLS) and protocol != Protocol.TEXT_ONLY:
        raise EvaluationRefused(
            _(
                "SVBench's open questions take the streaming or single-question protocol (or text only); "
                "other files take the others."
            )
        )
    if not 1 <= int(frames) <= 256:
        raise EvaluationRefused(_("Frames per video: 1 to 256."))
    if not base_url:
        endpoint_require(project=project)
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            project=project,
            release=release,
            file=file,
            name=name.strip(),
            model=model,
            base_url=base_url.strip(),
            api_key=api_key.strip(),
            protocol=protocol,
            frames=int(frames),
            use_extractor=use_extractor,
            created_by=user if user is not None and user.is_authenticated else None,
            summary={"items": len(items)},
        )
        run.job = _job(run, user, enqueue=enqueue)
        run.save(update_fields=["job"])
    return run


def _job(run: EvaluationRun, user, *, enqueue: bool) -> BackgroundJob:
    if enqueue:
        return job_create(project=run.project, kind=EVAL_TASK, target=run, user=user)
    return BackgroundJob.objects.create(
        project=run.project,
        kind=EVAL_TASK,
        target_type=run._meta.label_lower,
        target_id=run.pk,
        created_by=user if user is not None and user.is_authenticated else None,
    )


def evaluation_resume(*, run: EvaluationRun, user=None, enqueue: bool = True) -> EvaluationRun:
    """Start the run again: only the records without an answer are asked (none, for a finished run)."""
    if run.status in (RunStatus.QUEUED, RunStatus.RUNNING) and run.job and not run.job.is_finished:
        raise EvaluationRefused(_("This run is already %(status)s.") % {"status": run.get_status_display().lower()})
    if not run.base_url:
        endpoint_require(project=run.project)
    run.status = RunStatus.QUEUED
    run.cancel_requested = False
    run.job = _job(run, user, enqueue=enqueue)
    run.save(update_fields=["status", "cancel_requested", "job"])
    return run


def evaluation_cancel(*, run: EvaluationRun) -> EvaluationRun:
    """Ask a queued or running run to stop; the calls in flight finish and are kept."""
    EvaluationRun.objects.filter(pk=run.pk).update(cancel_requested=True)
    if run.status == RunStatus.QUEUED:
        EvaluationRun.objects.filter(pk=run.pk).update(status=RunStatus.CANCELLED)
    run.refresh_from_db()
    return run


# --- the run itself ------------------------------------------------------------------------------------


class _Media:
    """Frames of the run's videos (sampled once per video) and the release's subtitle/speech files."""

    def __init__(self, run: EvaluationRun):
        self.run = run
        self.project = run.project
        self.lock = threading.Lock()
        self.frames: OrderedDict[str, list[tuple[float, bytes]]] = OrderedDict()
        self.texts: dict[str, object] = {}
        self.videos = {v.name: v for v in Video.objects.filter(project=run.project)}

    def video(self, file_name: str) -> Video:
        stem = PurePosixPath(file_name).stem
        video = self.videos.get(file_name) or self.videos.get(stem)
        if video is None:
            raise FrameSamplingError(f"video {file_name} is not in the project")
        return video

    def video_frames(self, file_name: str) -> list[tuple[float, bytes]]:
        with self.lock:
            if file_name in self.frames:
                self.frames.move_to_end(file_name)
                return self.frames[file_name]
        video = self.video(file_name)
        if not video.duration_s:
            raise FrameSamplingError(f"video {file_name} has no known duration")
        name = video.proxy.name if video.proxy else video.original.name
        count = self.run.frames
        with local_path(name) as path:
            images = sample_frames(path, 0.0, video.duration_s, count=count, max_side_px=self.project.frame_max_side_px)
        step = video.duration_s / count
        frames = [((i + 0.5) * step, image) for i, image in enumerate(images)]
        with self.lock:
            self.frames[file_name] = frames
            while len(self.frames) > FRAME_CACHE_VIDEOS:
                self.frames.popitem(last=False)
        return frames

    def frames_until(self, file_name: str, end_s: float | None) -> list[tuple[float, bytes]]:
        """The run's frames over [0, end_s] of a video (what a streaming viewer has seen by then)."""
        video = self.video(file_name)
        end = min(end_s or video.duration_s or 0.0, video.duration_s or end_s or 0.0)
        if end <= 0:
            return self.video_frames(file_name)
        key = f"{file_name}@{end:.3f}"
        with self.lock:
            if key in self.frames:
                self.frames.move_to_end(key)
                return self.frames[key]
        name = video.proxy.name if video.proxy else video.original.name
        count = self.run.frames
        with local_path(name) as path:
            images = sample_frames(path, 0.0, end, count=count, max_side_px=self.project.frame_max_side_px)
        step = end / count
        frames = [((i + 0.5) * step, image) for i, image in enumerate(images)]
        with self.lock:
            self.frames[key] = frames
            while len(self.frames) > FRAME_CACHE_VIDEOS:
                self.frames.popitem(last=False)
        return frames

    def release_json(self, path: str):
        with self.lock:
            if path in self.texts:
                return self.texts[path]
        try:
            raw = read_release_file(self.run.release, path).decode("utf-8")
        except FileNotFoundError:
            raw = ""
        value = (
            (json.loads(raw) if raw.strip() else [])
            if path.endswith(".json")
            else [json.loads(line) for line in raw.splitlines() if line.strip()]
        )
        with self.lock:
            self.texts[path] = value
        return value


def _question_block(item: EvalItem, labels: list[str] | None = None) -> str:
    return (
        f"Question: {question_text(item, video_labels=labels)}\nOptions:\n{options_block(list(item.options))}\n"
        f"{ANSWER_INSTRUCTION}"
    )


def prompt_parts(run: EvaluationRun, item: EvalItem, media: _Media) -> tuple:
    """The user message of one question under the run's protocol: texts and frames in order."""
    protocol = run.protocol
    if item.is_open:
        text = f"{item.question}\n{OPEN_INSTRUCTION}"
        if protocol == Protocol.TEXT_ONLY:
            return (text,)
        return (*[image for _t, image in media.frames_until(item.videos[0], item.end_s)], text)
    if protocol == Protocol.TEXT_ONLY:
        return (_question_block(item),)
    if protocol == Protocol.MULTI_VIDEO:
        parts: list = []
        labels = [f"Video {k + 1}" for k in range(len(item.videos))]
        for label, file_name in zip(labels, item.videos, strict=True):
            parts.append(f"{label}:")
            parts += [image for _t, image in media.video_frames(file_name)]
        return (*parts, _question_block(item, labels))
    frames = media.video_frames(item.videos[0])
    if protocol == Protocol.FRAMES_SUBTITLES and item.subtitles_file:
        cues = sorted((float(c["timestamp"][0]), str(c["text"])) for c in media.release_json(item.subtitles_file) or [])
        parts, n = [], 0
        for t, image in frames:
            lines = []
            while n < len(cues) and cues[n][0] < t:
                lines.append(cues[n][1])
                n += 1
            if lines:
                parts.append("\n".join(lines))
            parts.append(image)
        if n < len(cues):
            parts.append("\n".join(text for _s, text in cues[n:]))
        return (*parts, _question_block(item))
    parts = [image for _t, image in frames]
    if protocol == Protocol.LIVE:
        speech = [f"[{seconds_text(float(c['start']))} s] {c['text']}" for c in media.release_json(item.asr_file) or []]
        comments = [
            f"[{seconds_text(float(c.get('time', c.get('t', 0))))} s] {c.get('text', '')}"
            for c in (media.release_json(item.comments_file) or [])[:COMMENTS_SHOWN]
        ]
        if speech:
            parts.append("Speech:\n" + "\n".join(speech))
        if comments:
            parts.append("Real-time comments:\n" + "\n".join(comments))
    return (*parts, _question_block(item))


def _ask(run: EvaluationRun, item: EvalItem, parts: tuple) -> dict:
    try:
        result = chat_text(
            project=run.project,
            step=STEP,
            system="",
            turns=[Turn("user", parts=parts)],
            model=run.model,
            endpoint=_run_endpoint(run),
            params={"temperature": 0},
        )
    except LLMError as exc:
        return {
            "item": item,
            "outcome": Outcome.FAILED,
            "reason": exc.message,
            "call_id": exc.call.pk if exc.call else None,
        }
    chosen, steps = answer_choice(
        project=run.project,
        text=result.text,
        question=question_text(item),
        options=list(item.options),
        use_llm=run.use_extractor,
    )
    extract_call = next((s.call_id for s in steps if s.call_id), None)
    found = chosen.index is not None
    return {
        "item": item,
        "outcome": Outcome.ANSWERED if found else Outcome.UNREADABLE,
        "chosen_index": chosen.index,
        "score": 1.0 if found and chosen.index == item.correct_index else 0.0,
        "method": chosen.method,
        "reply": result.text[:REPLY_KEEP],
        "reason": "" if found else chosen.detail,
        "call_id": result.call.pk,
        "extract_call_id": extract_call,
    }


def _judge(run: EvaluationRun, item: EvalItem, answer: str, history: list[tuple[str, str]]) -> dict:
    """The judge's scores of an open answer against the reference (SVBench's dimensions)."""
    lines = "\n".join(f"Q: {q}\nA: {a}" for q, a in history) or "(none)"
    try:
        result = chat_json(
            project=run.project,
            step=JUDGE_STEP,
            template_key=JUDGE_STEP,
            context={"history": lines, "question": item.question, "reference": item.reference, "answer": answer},
            params={"temperature": 0},
        )
    except LLMError as exc:
        return {
            "outcome": Outcome.FAILED,
            "reason": f"the judge failed: {exc.message}",
            "judge_call_id": exc.call.pk if exc.call else None,
        }
    scores = result.parsed["scores"]
    return {
        "outcome": Outcome.ANSWERED,
        "score": scores["overall"] / 100,
        "dimensions": scores,
        "judge_call_id": result.call.pk,
    }


def _ask_open(run: EvaluationRun, items: list[EvalItem], frames: tuple, kept: dict[int, str]) -> list[dict]:
    """Open questions: one alone (single-question), or a chain's turns as one conversation (streaming),
    the turns already answered replayed from their stored replies rather than asked again."""
    results: list[dict] = []
    turns: list[Turn] = []
    history: list[tuple[str, str]] = []
    streaming = run.protocol == Protocol.SV_STREAMING
    for n, item in enumerate(items):
        text = f"{item.question}\n{OPEN_INSTRUCTION}"
        first = n == 0 or not streaming
        user = Turn("user", parts=(*frames, text)) if first and frames else Turn("user", text)
        conversation = [*turns, user] if streaming else [user]
        if item.index in kept:
            reply = kept[item.index]
        else:
            try:
                answered = chat_text(
                    project=run.project,
                    step=STEP,
                    system="",
                    turns=conversation,
                    model=run.model,
                    endpoint=_run_endpoint(run),
                    params={"temperature": 0},
                )
            except LLMError as exc:
                # The rest of a conversation cannot go on without this answer: all fail, all asked again.
                for rest in items[n:]:
                    if rest.index not in kept:
                        results.append(
                            {
                                "item": rest,
                                "outcome": Outcome.FAILED,
                                "reason": exc.message,
                                "call_id": exc.call.pk if exc.call else None,
                            }
                        )
                return results
            reply = answered.text
            verdict = _judge(run, item, reply, history if streaming else [])
            results.append({"item": item, "reply": reply[:REPLY_KEEP], "call_id": answered.call.pk, **verdict})
        turns = [*conversation, Turn("assistant", reply)]
        history.append((item.question, reply))
    return results


def _save(run: EvaluationRun, result: dict) -> None:
    item: EvalItem = result["item"]
    Prediction.objects.update_or_create(
        run=run,
        index=item.index,
        defaults={
            "record_id": item.record_id,
            "mcq_id": item.mcq_id,
            "video": item.cluster,
            "category": item.category,
            "level": item.level,
            "duration_group": item.duration_group,
            "option_count": len(item.options) or None,
            "correct_index": item.correct_index,
            "dimensions": result.get("dimensions", {}),
            "judge_call_id": result.get("judge_call_id"),
            "outcome": result["outcome"],
            "chosen_index": result.get("chosen_index"),
            "score": result.get("score"),
            "method": result.get("method", ""),
            "reply": result.get("reply", ""),
            "reason": result.get("reason", ""),
            "call_id": result.get("call_id"),
            "extract_call_id": result.get("extract_call_id"),
        },
    )


def evaluation_concurrency(run: EvaluationRun) -> int:
    return calls_in_flight(run.base_url.rstrip("/") if run.base_url else llm_endpoint(project=run.project))


def evaluation_execute(*, run: EvaluationRun, progress=None) -> dict:
    """Answer every record of the run's file that has no answer yet; returns the run's summary."""
    from .selectors import run_summary

    run.status = RunStatus.RUNNING
    run.save(update_fields=["status"])
    items = load_items(run.release, run.file)
    kept = dict(Prediction.objects.filter(run=run).exclude(outcome=Outcome.FAILED).values_list("index", "reply"))
    todo = [item for item in items if item.index not in kept]
    media = _Media(run)
    stop = threading.Event()
    counts = {"asked": 0, "failed": 0}
    total = len(todo)
    if progress:
        progress(0, total, f"{len(kept)} answers kept, {total} questions to ask")

    def failure(item: EvalItem, exc: BaseException) -> dict:
        if not isinstance(exc, FrameSamplingError):
            log.error("an evaluation item failed unexpectedly", exc_info=exc)
        return {"item": item, "outcome": Outcome.FAILED, "reason": f"{type(exc).__name__}: {exc}"}

    def done(result) -> None:
        for one in result if isinstance(result, list) else [result]:
            with transaction.atomic():
                _save(run, one)
            counts["asked"] += 1
            counts["failed"] += one["outcome"] == Outcome.FAILED
        if EvaluationRun.objects.filter(pk=run.pk, cancel_requested=True).exists():
            stop.set()
        if progress:
            progress(
                counts["asked"], total, f"{counts['asked']} of {total} questions asked ({counts['failed']} failed)"
            )

    cancelled = EvaluationRun.objects.filter(pk=run.pk, cancel_requested=True).exists()
    if cancelled or not todo:
        pass
    elif todo[0].is_open:
        # A unit is a chain (streaming: its turns are one conversation) or one question (single).
        by_chain: dict[str, list[EvalItem]] = {}
        for item in items:
            by_chain.setdefault(item.chain if run.protocol == Protocol.SV_STREAMING else item.record_id, []).append(
                item
            )
        units = [group for group in by_chain.values() if any(i.index not in kept for i in group)]

        def prepare(group):
            if run.protocol == Protocol.TEXT_ONLY:
                return ()
            return tuple(image for _t, image in media.frames_until(group[0].videos[0], group[-1].end_s))

        def open_failure(group, exc):
            return [failure(item, exc) for item in group if item.index not in kept]

        run_parallel(
            units,
            prepare=prepare,
            ask=lambda group, frames: _ask_open(run, group, frames, kept),
            failure=open_failure,
            done=done,
            concurrency=evaluation_concurrency(run),
            stop=stop,
        )
    else:
        run_parallel(
            todo,
            prepare=lambda item: prompt_parts(run, item, media),
            ask=lambda item, parts: _ask(run, item, parts),
            failure=failure,
            done=done,
            concurrency=evaluation_concurrency(run),
            stop=stop,
        )
    run.refresh_from_db()
    summary = run_summary(run)
    run.summary = summary
    if run.cancel_requested:
        run.status = RunStatus.CANCELLED
    elif summary["failed"]:
        run.status = RunStatus.INCOMPLETE
    else:
        run.status = RunStatus.FINISHED
    run.finished_at = timezone.now()
    run.save(update_fields=["summary", "status", "finished_at"])
    return summary


def evaluation_job_run(*, job) -> None:
    run = EvaluationRun.objects.select_related("project", "release").get(pk=job.target_id)

    def progress(done: int, total: int, message: str) -> None:
        job_progress(job, done=done, total=total, message=message)

    try:
        summary = evaluation_execute(run=run, progress=progress)
    except Exception:
        EvaluationRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED)
        raise
    job.result = {k: summary[k] for k in ("items", "scored", "failed", "accuracy")}
    job.message = _("%(scored)s of %(items)s questions scored, %(failed)s failed.") % summary
