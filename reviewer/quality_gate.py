"""The LLM quality gate, as SVBench built it: a judge scores each submitted item before examiners see it.

Flow: the editor submits (`item_submit`, or the kind's own submit service) and then calls
`gate_on_submit`, or calls `item_submit_and_gate` for both. When the project's gate applies to
the item's kind, a background job ("reviewer.judge") asks the judge model to score the item's
current version on the project's judge dimensions and overall (0–100) with comments, stores a
QualityScore, and moves the item on: overall ≥ threshold → scored (ready for examining); below →
revising, with the judge's comments as the event's comment. With the gate off the item goes
straight to examining.

When the judge cannot score an item (no model endpoint, the model failing for good after the LLM
layer's retries and one repair, answers without a usable score), the project's `judge_fallback`
decides, so no item waits silently: on to examining marked "not scored" (the default), back to
the author, or waiting in "submitted" for an admin (then the job fails with the reason, and
retrying it, or "judge waiting items", scores it again). Either move is an item_transition whose
reasons are REASON_NOT_SCORED and the cause, with the sentence in its comment; examiners see it.

What the judge job survives:
- the item changing while the judge was answering (a relation rewrite changes a submitted chain):
  that verdict is about words nobody will review, so it is discarded and the new version is scored;
- the item leaving "submitted" meanwhile (an admin acted on it) or the job running twice: the
  verdict is recorded only while the item is still submitted at the judged version, under its
  row lock, so it is recorded once.

Settings: `project.judge_enabled` and `project.judge_threshold` (default 90), plus which item
kinds the gate covers: `project.models_per_step["judge_kinds"]`, a list of "qa_chain", "mcq",
"chain_pair"; QA chains only when absent (SVBench judged only its chains). MCQs and chain pairs use prompt
templates "judge_mcq" and "judge_chain_pair"; a default version is created the first time one is
needed and can be edited like every other template.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Avg, Count, Exists, OuterRef, Q
from django.utils.translation import gettext as _

from annotator.lifecycle import Transition, TransitionRefused, item_submit, item_transition
from annotator.models import MCQ, ChainPair, ItemKind, ItemRef, ItemStatus, QAChain, QAPair
from jobs.models import BackgroundJob
from jobs.selectors import job_latest_for, jobs_active_for, jobs_failed
from jobs.services import JobAlreadyRunning, job_create, job_progress, job_start_check_register
from llm.client import LLMError, chat_json
from llm.clip_context import seconds_text
from llm.endpoints import NoModelEndpoint, endpoint_require
from llm.frames import FrameSamplingError
from llm.prompts import OPTION_LETTERS, template_update
from llm.selectors import prompt_template_active
from projects.models import JudgeFallback, Project

from .models import QualityScore

log = logging.getLogger(__name__)

JUDGE_TASK = "reviewer.judge"
# A retried judge job refuses when the project has no endpoint, rather than fail again.
job_start_check_register(kinds=[JUDGE_TASK], check=endpoint_require)
JUDGE_STEP = "judge"  # LLMCall.step and the models_per_step key of the judge model
JUDGE_KINDS_KEY = "judge_kinds"
DEFAULT_JUDGE_KINDS = (ItemKind.QA_CHAIN.value,)

REASON_BELOW = "judge_below_threshold"
REASON_PASSED = "judge_passed"
REASON_GATE_OFF = "quality_gate_off"
# The judge could not score the item and the project's fallback moved it on; a cause follows.
REASON_NOT_SCORED = "judge_not_scored"
CAUSE_NO_ENDPOINT = "no_model_endpoint"
CAUSE_MODEL_FAILED = "judge_model_failed"
CAUSE_UNUSABLE = "judge_answer_unusable"
CAUSE_NO_FRAMES = "judge_no_frames"

# A verdict on a version that changed meanwhile is discarded and the new version judged, this many
# times at most in one run; an item that keeps changing fails the job (a retry tries again later).
MAX_JUDGE_ROUNDS = 3
TEXT_LIMIT = 4000

MODELS = {ItemKind.QA_CHAIN: QAChain, ItemKind.MCQ: MCQ, ItemKind.CHAIN_PAIR: ChainPair}
TEMPLATE_KEYS = {ItemKind.QA_CHAIN: "judge", ItemKind.MCQ: "judge_mcq", ItemKind.CHAIN_PAIR: "judge_chain_pair"}


class JudgeFailed(Exception):
    """The judge gave no usable verdict. `cause` names why; the project's fallback decides what the
    item does, except when `fallback` is False (the item kept changing: a retry later can score it)."""

    def __init__(self, message: str, *, cause: str = CAUSE_MODEL_FAILED, fallback: bool = True):
        super().__init__(message)
        self.cause = cause
        self.fallback = fallback


@dataclass(frozen=True)
class GateOutcome:
    """What a submit led to: a judge job on its way, or (gate off) the move to examining."""

    submitted: Transition | None
    job: BackgroundJob | None = None
    transition: Transition | None = None
    # Neither job nor transition: the item waits in "submitted", and this says why.
    waiting: str = ""
    # The judge could not be asked and the fallback moved the item (transition set): why.
    not_scored: str = ""


@dataclass(frozen=True)
class Verdict:
    dimensions: dict[str, int]
    overall: int
    comments: str


@dataclass(frozen=True)
class Judged:
    """The outcome of one judge run that was recorded."""

    score: QualityScore
    transition: Transition


# --- settings -------------------------------------------------------------------------------------


def item_kind(item) -> str:
    return ItemRef.ref_for(item)["item_kind"].value


def judge_kinds(project: Project) -> list[str]:
    """Item kinds the project's gate covers (when the gate is on)."""
    raw = (project.models_per_step or {}).get(JUDGE_KINDS_KEY)
    if not isinstance(raw, list):
        return list(DEFAULT_JUDGE_KINDS)
    return [k for k in ItemKind.values if k in raw]


def gate_applies(*, project: Project, kind: str) -> bool:
    return bool(project.judge_enabled) and kind in judge_kinds(project)


def judge_dimensions(project: Project, kind: str) -> list[str]:
    if kind == ItemKind.QA_CHAIN:
        return [str(d) for d in project.taxonomy("judge_dimensions")]
    return list(_EXTRA_TEMPLATES[kind]["dimensions"])


# --- submit ---------------------------------------------------------------------------------------


def gate_on_submit(*, item, user=None) -> GateOutcome:
    """Call right after an item was submitted: queue the judge, or pass it to examiners.

    Does nothing (returns an empty outcome) when the item is not submitted, e.g. a second call.
    """
    kind = item_kind(item)
    project = item.project
    if item.status != ItemStatus.SUBMITTED:
        return GateOutcome(submitted=None)
    if gate_applies(project=project, kind=kind):
        try:
            endpoint_require(project=project)
        except NoModelEndpoint as exc:
            # A judge job with nowhere to send its call would only fail: the project's fallback
            # decides now (on to examining, back to the author, or waiting for an admin).
            moved = gate_fallback(item=item, cause=CAUSE_NO_ENDPOINT, message=exc.message)
            if moved is None:
                return GateOutcome(submitted=None, waiting=exc.message)
            return GateOutcome(submitted=None, transition=moved, not_scored=exc.message)
        return GateOutcome(submitted=None, job=_judge_job_create(item=item, kind=kind, user=user))
    moved = item_transition(
        item=item,
        to_status=ItemStatus.EXAMINING,
        actor=None,
        reasons=[REASON_GATE_OFF],
        expect_from=ItemStatus.SUBMITTED,
    )
    return GateOutcome(submitted=None, transition=moved)


def item_submit_and_gate(*, item, user) -> GateOutcome:
    """Submit and gate in one transaction: the judge job is sent only once the submit is committed."""
    with transaction.atomic():
        submitted = item_submit(item=item, user=user)
        outcome = gate_on_submit(item=submitted.item, user=user)
    item.status = submitted.item.status if outcome.transition is None else outcome.transition.item.status
    return GateOutcome(
        submitted=submitted,
        job=outcome.job,
        transition=outcome.transition,
        waiting=outcome.waiting,
        not_scored=outcome.not_scored,
    )


def gate_fallback(*, item, cause: str, message: str, actor=None) -> Transition | None:
    """Apply the project's `judge_fallback` to a submitted item the judge cannot score.

    Returns the move (to examining, or back to the author in revising), each logged with the
    reasons [REASON_NOT_SCORED, cause] and `message` as the comment; None when the policy is to
    wait for an admin, or when the item left "submitted" meanwhile.
    """
    policy = item.project.judge_fallback
    if policy == JudgeFallback.WAIT:
        return None
    to_status = ItemStatus.REVISING if policy == JudgeFallback.AUTHOR else ItemStatus.EXAMINING
    return item_not_scored_move(item=item, to_status=to_status, cause=cause, message=message, actor=actor)


def item_not_scored_move(*, item, to_status: str, cause: str, message: str, actor=None) -> Transition | None:
    """Move a submitted item on without a score (examining, or revising for its author), with the reason."""
    try:
        return item_transition(
            item=item,
            to_status=to_status,
            actor=actor,
            reasons=[REASON_NOT_SCORED, cause],
            comment=message,
            expect_from=ItemStatus.SUBMITTED,
        )
    except TransitionRefused:
        # Someone acted on it meanwhile: it is not waiting any more, nothing to do.
        return None


def _judge_job_create(*, item, kind: str, user) -> BackgroundJob:
    try:
        return job_create(
            project=item.project,
            kind=JUDGE_TASK,
            target=item,
            params={"item_kind": kind, "submitted_version": item.version},
            user=user,
        )
    except JobAlreadyRunning as exc:
        # Already on its way (a double submit): that job judges whatever version is current.
        return exc.job


def gate_process_waiting(*, project: Project, user=None) -> dict[str, int]:
    """Items left in "submitted" (a failed judge, a gate switched on or off meanwhile, a submit
    that skipped the gate): queue a judge for each covered kind, pass the rest to examiners.
    Items whose judge is already queued or running are left alone. With no model endpoint the
    project's fallback decides: moved items are counted under "not_scored", items left waiting under
    "no_endpoint" (keys present only then)."""
    counts = {"queued": 0, "to_examining": 0, "already_queued": 0}
    for model in MODELS.values():
        waiting = list(model.objects.filter(project=project, status=ItemStatus.SUBMITTED).order_by("pk"))
        if not waiting:
            continue
        active = jobs_active_for(project=project, kind=JUDGE_TASK, model=model, target_ids=[i.pk for i in waiting])
        for item in waiting:
            item.project = project
            if item.pk in active:
                counts["already_queued"] += 1
                continue
            outcome = gate_on_submit(item=item, user=user)
            if outcome.job is not None:
                counts["queued"] += 1
            elif outcome.not_scored:
                counts["not_scored"] = counts.get("not_scored", 0) + 1
            elif outcome.transition is not None:
                counts["to_examining"] += 1
            elif outcome.waiting:
                counts["no_endpoint"] = counts.get("no_endpoint", 0) + 1
    return counts


# --- the judge job --------------------------------------------------------------------------------


def judge_job_run(*, job: BackgroundJob) -> None:
    """The body of the "reviewer.judge" task: score the item's current version and move it on."""
    kind = job.params.get("item_kind") or _kind_of_label(job.target_type)
    model = MODELS[ItemKind(kind)]
    item = model.objects.select_related("project").filter(pk=job.target_id).first()
    if item is None:
        job.message = "The item no longer exists; nothing to judge."
        return
    job_progress(job, done=0, total=1, message=f"Judging {kind.replace('_', ' ')} {item.pk}")
    for _round in range(MAX_JUDGE_ROUNDS):
        item.refresh_from_db(fields=["status", "version"])
        if item.status != ItemStatus.SUBMITTED:
            job.message = f"Nothing to judge: the item is {item.get_status_display().lower()} now."
            job.result = {"skipped": item.status}
            return
        if not gate_applies(project=item.project, kind=kind):
            # The gate was switched off while the job waited: do what a submit would do now.
            gate_on_submit(item=item)
            job.message = "The quality gate is off for this kind now; passed on to examining."
            job.result = {"to_status": ItemStatus.EXAMINING}
            return
        version = item.version
        try:
            verdict, call = item_judge(item=item)
        except JudgeFailed as exc:
            if not exc.fallback:
                raise
            moved = gate_fallback(item=item, cause=exc.cause, message=str(exc))
            if moved is None:
                item.refresh_from_db(fields=["status"])
                if item.status == ItemStatus.SUBMITTED:
                    # The project waits for an admin: the job fails, and retrying it asks again.
                    raise JudgeFailed(
                        _("%(reason)s The item stays submitted; retry this job.") % {"reason": exc},
                        cause=exc.cause,
                    ) from exc
                continue
            job.message = _("Not scored: %(reason)s Moved to %(status)s by the project's fallback.") % {
                "reason": exc,
                "status": moved.item.get_status_display().lower(),
            }
            job.result = {"not_scored": exc.cause, "reason": str(exc), "to_status": moved.item.status}
            job_progress(job, done=1)
            return
        judged = verdict_record(item=item, version=version, verdict=verdict, call=call)
        if judged is None:
            log.info("judge verdict on %s %s v%s discarded: the item changed", kind, item.pk, version)
            continue
        score = judged.score
        job.result = {
            "item_kind": kind,
            "item_id": item.pk,
            "item_version": version,
            "score_id": score.pk,
            "overall": score.overall,
            "threshold": score.threshold,
            "passed": score.passed,
            "llm_call": call.pk if call else None,
            "to_status": judged.transition.item.status,
        }
        verb = "passed" if score.passed else "below the threshold; back to revision"
        job.message = f"Scored {score.overall}/100 (threshold {score.threshold}): {verb}."
        job_progress(job, done=1)
        return
    raise JudgeFailed(
        f"The item kept changing while the judge was scoring it ({MAX_JUDGE_ROUNDS} tries). "
        "It stays submitted; retry when it has settled.",
        fallback=False,
    )


def _kind_of_label(label: str) -> str:
    for kind, model in MODELS.items():
        if model._meta.label_lower == label:
            return kind.value
    raise JudgeFailed(f"A judge job cannot work on {label or 'nothing'}.")


def verdict_record(*, item, version: int, verdict: Verdict, call=None) -> Judged | None:
    """Store the verdict and move the item on, if it is still submitted at `version`.

    Returns None (and stores nothing) when the item changed or moved on meanwhile.
    """
    model = type(item)
    with transaction.atomic():
        locked = model.objects.select_for_update().select_related("project").get(pk=item.pk)
        if locked.status != ItemStatus.SUBMITTED or locked.version != version:
            return None
        threshold = locked.project.judge_threshold
        passed = verdict.overall >= threshold
        score = QualityScore.objects.create(
            project_id=locked.project_id,
            item_version=version,
            dimensions=verdict.dimensions,
            overall=verdict.overall,
            threshold=threshold,
            passed=passed,
            comments=verdict.comments,
            llm_call=call,
            **ItemRef.ref_for(locked),
        )
        if passed:
            moved = item_transition(
                item=locked,
                to_status=ItemStatus.SCORED,
                reasons=[REASON_PASSED],
                comment=f"Judge: {verdict.overall}/100 (threshold {threshold}).",
                expect_from=ItemStatus.SUBMITTED,
            )
        else:
            comment = verdict.comments or (
                f"The judge gave {verdict.overall}/100 (threshold {threshold}) without comments."
            )
            moved = item_transition(
                item=locked,
                to_status=ItemStatus.REVISING,
                reasons=[REASON_BELOW],
                comment=comment,
                expect_from=ItemStatus.SUBMITTED,
            )
    item.status = moved.item.status
    return Judged(score=score, transition=moved)


# --- asking the judge ------------------------------------------------------------------------------


def item_judge(*, item) -> tuple[Verdict, object]:
    """Ask the judge model about the item as it is now; returns (verdict, LLMCall). Raises JudgeFailed."""
    kind = item_kind(item)
    project = item.project
    key = TEMPLATE_KEYS[ItemKind(kind)]
    if kind != ItemKind.QA_CHAIN:
        _extra_template_ensure(project=project, kind=kind)
    try:
        context, images = _JUDGE_INPUTS[kind](item)
    except FrameSamplingError as exc:
        raise JudgeFailed(
            f"The judge needs frames of the video, and they could not be taken: {exc}", cause=CAUSE_NO_FRAMES
        ) from exc
    try:
        result = chat_json(project=project, step=JUDGE_STEP, template_key=key, context=context, images=images)
    except LLMError as exc:
        raise JudgeFailed(_("The judge model gave no usable verdict: %(error)s.") % {"error": exc.message}) from exc
    verdict = verdict_parse(result.parsed, dimensions=judge_dimensions(project, kind))
    return verdict, result.call


def verdict_parse(parsed, *, dimensions: list[str]) -> Verdict:
    """The judge's JSON as a verdict; an answer without a usable overall score is refused.

    Templates are editable, so the answer is checked here too, not only by the schema.
    """
    if not isinstance(parsed, dict):
        raise JudgeFailed(_("The judge's answer is not a JSON object."), cause=CAUSE_UNUSABLE)
    overall = _score(parsed.get("overall"))
    if overall is None:
        raise JudgeFailed(
            _("The judge's answer has no overall score from 0 to 100 (got %(value)r).")
            % {"value": parsed.get("overall")},
            cause=CAUSE_UNUSABLE,
        )
    raw = parsed.get("scores") if isinstance(parsed.get("scores"), dict) else {}
    scores = {}
    for name in [*dimensions, *[k for k in raw if k not in dimensions]]:
        value = _score(raw.get(name))
        if value is not None:
            scores[str(name)] = value
    comments = parsed.get("comments")
    return Verdict(dimensions=scores, overall=overall, comments=comments.strip() if isinstance(comments, str) else "")


def _score(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 <= value <= 100:
        return None
    return round(value)


def _chain_inputs(chain: QAChain) -> tuple[dict, list[bytes]]:
    # Shared with the chain drafts, so the judge sees the clip exactly as the drafting model did.
    from annotator.drafts import language_name, video_clip_context

    clip = chain.clip
    pairs = list(QAPair.objects.filter(chain=chain).order_by("index", "pk"))
    shown = video_clip_context(video=clip.video, project=chain.project, start_s=clip.start_s, end_s=clip.end_s)
    context = {
        "clip_start": shown.start_text,
        "clip_end": shown.end_text,
        "frame_count": len(shown.frames),
        "subtitles": shown.subtitles,
        "chain": turns_text(pairs),
        "language": language_name(chain.project),
    }
    return context, list(shown.frames)


def turns_text(pairs) -> str:
    """The chain as the judge reads it: numbered turns, so its comments can name them."""
    return "\n".join(f"Turn {n}. Q: {p.question}\n   A: {p.answer}" for n, p in enumerate(pairs, start=1))


def _mcq_inputs(mcq: MCQ) -> tuple[dict, list[bytes]]:
    from annotator.drafts import language_name, subtitles_text, video_clip_context

    links = list(mcq.mcq_videos.select_related("video").order_by("order"))
    moments = list(mcq.moments.order_by("order", "time_s", "pk"))
    main = links[0].video if links else None
    frames: list[bytes] = []
    subtitles = ""
    if main is not None and main.duration_s:
        shown = video_clip_context(video=main, project=mcq.project)
        frames, subtitles = list(shown.frames), shown.subtitles
    elif main is not None:
        subtitles = subtitles_text(video_id=main.pk)
    options = "\n".join(
        f"{OPTION_LETTERS[i]}. {text}{'  (marked correct)' if i == mcq.correct_index else ''}"
        for i, text in enumerate(mcq.options or [])
        if i < len(OPTION_LETTERS)
    )
    context = {
        "question": mcq.question,
        "referring_query": mcq.referring_query or "(none marked)",
        "options": options or "(no options)",
        "category": " / ".join(x for x in (mcq.category, mcq.level) if x) or "(none)",
        "moments": ", ".join(f"{seconds_text(m.time_s)} s" for m in moments) or "(none stamped)",
        "videos": ", ".join(f"{link.role} {link.video.name}" for link in links) or "(none)",
        "duration": seconds_text(main.duration_s) if main is not None and main.duration_s else "unknown",
        "subtitles": subtitles,
        "frame_count": len(frames),
        "language": language_name(mcq.project),
    }
    return context, frames


def _chain_pair_inputs(chain_pair: ChainPair) -> tuple[dict, list[bytes]]:
    from annotator.drafts import language_name
    from annotator.models import Relation, RelationDecision

    before = list(QAPair.objects.filter(chain_id=chain_pair.chain_before_id).order_by("index", "pk"))
    after = list(QAPair.objects.filter(chain_id=chain_pair.chain_after_id).order_by("index", "pk"))
    number = {p.pk: n for n, p in enumerate(before, start=1)} | {p.pk: n for n, p in enumerate(after, start=1)}
    relations = Relation.objects.filter(chain_pair=chain_pair, decision=RelationDecision.ACCEPTED).order_by("pk")
    links = "\n".join(
        f"- earlier turn {number.get(r.from_pair_id, '?')} → later turn {number.get(r.to_pair_id, '?')}: "
        f"{r.relation_type}" + (f" ({r.rationale})" if r.rationale else "")
        for r in relations
    )
    clips = {c.pk: c for c in (chain_pair.chain_before.clip, chain_pair.chain_after.clip)}
    b, a = clips[chain_pair.chain_before.clip_id], clips[chain_pair.chain_after.clip_id]
    context = {
        "clip_before": f"clip {b.index}, {seconds_text(b.start_s)}–{seconds_text(b.end_s)} s",
        "clip_after": f"clip {a.index}, {seconds_text(a.start_s)}–{seconds_text(a.end_s)} s",
        "chain_before": turns_text(before),
        "chain_after": turns_text(after),
        "links": links or "(no accepted links)",
        "language": language_name(chain_pair.project),
    }
    return context, []


_JUDGE_INPUTS = {
    ItemKind.QA_CHAIN.value: _chain_inputs,
    ItemKind.MCQ.value: _mcq_inputs,
    ItemKind.CHAIN_PAIR.value: _chain_pair_inputs,
}


# --- default judge prompts for MCQs and chain pairs --------------------------------------------------

_SCORE = {"type": "integer", "minimum": 0, "maximum": 100}


def _judge_schema(dimensions: list[str]) -> dict:
    return {
        "type": "object",
        "required": ["scores", "overall", "comments"],
        "properties": {
            "scores": {
                "type": "object",
                "required": dimensions,
                "properties": dict.fromkeys(dimensions, _SCORE),
            },
            "overall": _SCORE,
            "comments": {"type": "string"},
        },
    }


_EXTRA_TEMPLATES = {
    ItemKind.MCQ.value: {
        "dimensions": ["correctness", "answerability", "distractor_quality", "clarity", "category_fit", "referring"],
        "system": (
            "You are a strict quality reviewer of multiple-choice questions for a video benchmark. You see "
            "frames of the video and the question a person wrote. You answer with JSON only."
        ),
        "body": (
            "Videos: {videos}. The main video lasts {duration} s; {frame_count} frames sampled across it follow.\n"
            "Subtitles (may be empty):\n{subtitles}\n\n"
            "Question: {question}\nReferring query (the part that points at a moment): {referring_query}\n"
            "Options:\n{options}\nCategory: {category}\nReferred moments: {moments}\n\n"
            "Score the question from 0 to 100 on each dimension:\n"
            "- correctness: the option marked correct is right for the video;\n"
            "- answerability: answering needs the video, not only general knowledge;\n"
            "- distractor_quality: wrong options are plausible without the video and clearly wrong with it, "
            "similar in length and style to the correct one;\n"
            "- clarity: the question and options are unambiguous and well written;\n"
            "- category_fit: the question tests what its category says;\n"
            "- referring: the referring query and the moments point at the right part of the video.\n"
            "Then give an overall score from 0 to 100 and comments in {language} that tell the annotator "
            "exactly what to fix."
        ),
    },
    ItemKind.CHAIN_PAIR.value: {
        "dimensions": ["link_validity", "cross_clip_dependency", "rewrite_quality", "type_accuracy"],
        "system": (
            "You are a strict quality reviewer of temporal links between the question-answer chains of two "
            "adjacent clips of a streaming video benchmark. You answer with JSON only."
        ),
        "body": (
            "Earlier chain ({clip_before}):\n{chain_before}\n\nLater chain ({clip_after}):\n{chain_after}\n\n"
            "Accepted links:\n{links}\n\n"
            "Score the links from 0 to 100 on each dimension:\n"
            "- link_validity: each link joins turns that really concern the same thing;\n"
            "- cross_clip_dependency: each linked later question needs the earlier clip to be answered;\n"
            "- rewrite_quality: the rewritten later turns read naturally and stay true to the clip;\n"
            "- type_accuracy: each link's type fits what connects the turns.\n"
            "Then give an overall score from 0 to 100 and comments in {language} that name the turns to fix."
        ),
    },
}


def _extra_template_ensure(*, project: Project, kind: str) -> None:
    """Create the default judge prompt for MCQs or chain pairs the first time a project needs it."""
    key = TEMPLATE_KEYS[ItemKind(kind)]
    if prompt_template_active(project=project, key=key) is not None:
        return
    spec = _EXTRA_TEMPLATES[kind]
    try:
        template_update(
            project=None, key=key, system=spec["system"], body=spec["body"], schema=_judge_schema(spec["dimensions"])
        )
    except ValidationError:
        # A concurrent first use made it at the same moment; the call finds that one either way.
        log.info("default %s template created concurrently", key)


# --- reads ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreFilters:
    """What the score list is narrowed to; every field optional."""

    kind: str = ""
    passed: bool | None = None
    overall_min: int | None = None
    overall_max: int | None = None
    dimension: str = ""
    dimension_max: int | None = None
    latest_only: bool = True
    order: str = "newest"  # newest | lowest | highest


SCORE_ORDERS = {"newest": ("-created_at", "-pk"), "lowest": ("overall", "-pk"), "highest": ("-overall", "-pk")}


def scores_for(*, project: Project, filters: ScoreFilters):
    """The project's judge scores, filtered; items and their videos loaded for the list (no N+1)."""
    scores = QualityScore.objects.filter(project=project)
    if filters.kind:
        scores = scores.filter(item_kind=filters.kind)
    if filters.passed is not None:
        scores = scores.filter(passed=filters.passed)
    if filters.overall_min is not None:
        scores = scores.filter(overall__gte=filters.overall_min)
    if filters.overall_max is not None:
        scores = scores.filter(overall__lte=filters.overall_max)
    if filters.dimension and filters.dimension_max is not None:
        scores = scores.filter(**{f"dimensions__{filters.dimension}__lte": filters.dimension_max})
    if filters.latest_only:
        # Exactly one of the three item columns is set on a row, so one OR finds the same item.
        newer = QualityScore.objects.filter(
            Q(qa_chain=OuterRef("qa_chain")) | Q(mcq=OuterRef("mcq")) | Q(chain_pair=OuterRef("chain_pair")),
            pk__gt=OuterRef("pk"),
        )
        scores = scores.exclude(Exists(newer))
    return (
        scores.select_related("qa_chain__clip__video", "chain_pair__video", "mcq")
        .defer("qa_chain__clip__video__probe", "chain_pair__video__probe", "qa_chain__machine_draft")
        .order_by(*SCORE_ORDERS.get(filters.order, SCORE_ORDERS["newest"]))
    )


def score_summary(scores) -> dict:
    return scores.order_by().aggregate(
        count=Count("pk"), passed=Count("pk", filter=Q(passed=True)), mean=Avg("overall")
    )


def item_scores(*, item, limit: int = 20) -> list[QualityScore]:
    return list(QualityScore.objects.filter(**ItemRef.ref_for(item)).order_by("-created_at", "-pk")[:limit])


def judge_job_latest(*, item) -> BackgroundJob | None:
    return job_latest_for(target=item, kind=JUDGE_TASK)


def gate_waiting_counts(*, project: Project) -> dict[str, int]:
    """Submitted items per kind (what the judge or the gate still has to move on)."""
    return {
        kind.value: model.objects.filter(project=project, status=ItemStatus.SUBMITTED).count()
        for kind, model in MODELS.items()
    }


def judge_jobs_failed(*, project: Project, limit: int = 10) -> list[BackgroundJob]:
    return list(jobs_failed(project=project, kind=JUDGE_TASK)[:limit])
