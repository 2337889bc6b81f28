"""Draft runs: a step over the project's videos (or a selection), queued as a background job."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from jobs.models import BackgroundJob
from jobs.services import job_create, job_progress, job_start_check_register
from llm.endpoints import endpoint_require
from projects.models import Project
from projects.services import project_refuse_if_archived
from videos.models import Video, VideoStatus

from .base import DRAFT_STEPS, STEP_BY_KIND, DraftSummary, Item, ItemResult, draft_tasks, draft_videos
from .chains import ChainStep
from .descriptions import DescriptionStep
from .mcqs import MCQStep
from .options import OptionStep
from .pipeline import draft_concurrency, run_items
from .relations import RelationStep
from .seeds import SeedStep

PROGRESS_EVERY_S = 0.5


class DraftRunFailed(Exception):
    """Every item a run attempted failed; the job's result still lists each one and why."""


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


_STEP_CLASSES = {
    "chains": ChainStep,
    "relations": RelationStep,
    "descriptions": DescriptionStep,
    "seeds": SeedStep,
    "mcqs": MCQStep,
    "options": OptionStep,
}
# A retried draft run refuses as its first start did when the project has no endpoint.
job_start_check_register(kinds=[s.kind for s in DRAFT_STEPS.values()], check=endpoint_require)


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

    def on_result(item: Item, result: ItemResult) -> None:
        summary.record(item.label, item.ref, result)
        report()

    run_items(
        items,
        prepare=handler.prepare,
        draft=handler.draft,
        concurrency=concurrency if concurrency is not None else draft_concurrency(project=project),
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

    Raises ValidationError for bad input, llm.endpoints.NoModelEndpoint when the project has no
    endpoint to call (no job row is made), JobAlreadyRunning when the same run is still under way.
    """
    project_refuse_if_archived(project=project)
    if step not in DRAFT_STEPS:
        raise ValidationError(_("Unknown draft step “%(step)s”.") % {"step": step})
    info = DRAFT_STEPS[step]
    if video is not None:
        if video.project_id != project.pk:
            raise ValidationError(_("That video is not in this project."))
        video_ids = [video.pk]
    if video_ids is not None:
        video_ids = sorted({int(v) for v in video_ids})
        if info.uses_videos and not video_ids:
            raise ValidationError(
                _("The selection holds no video: choose at least one, or run over the whole project.")
            )
    known = {t["task"] for t in draft_tasks(project=project)}
    if tasks:
        unknown = [t for t in tasks if t not in known]
        if unknown:
            raise ValidationError(_("Not a task of this project: %(value)s.") % {"value": ", ".join(unknown)})
    for name, value, low, high in (("count", count, 1, 20), ("distractors", distractors, 3, 4)):
        if value is not None and not low <= int(value) <= high:
            raise ValidationError(
                _("%(name)s must be between %(low)s and %(high)s.")
                % {"name": name.capitalize(), "low": low, "high": high}
            )
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
    endpoint_require(project=project)
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
