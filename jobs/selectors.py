"""Reads of background jobs: a project's jobs, the latest job on a target, what is still under way.

The browser views, the API views and the workflow apps read jobs through these, so a job list, a
progress fragment and an API answer show the same rows. A job's target is any model row (the
same `target_type` label and id that `jobs.services.job_create` records).
"""

from collections.abc import Iterable

from django.db.models import Model, QuerySet

from .models import BackgroundJob, JobStatus

ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


def _target_type(target: Model | type[Model]) -> str:
    return target._meta.label_lower


def jobs_for_project(*, project, kinds: Iterable[str] | None = None) -> QuerySet[BackgroundJob]:
    """The project's jobs, newest first, with who started them; only these kinds when given."""
    jobs = BackgroundJob.objects.filter(project=project)
    if kinds is not None:
        jobs = jobs.filter(kind__in=list(kinds))
    return jobs.select_related("created_by").order_by("-created_at")


def job_get(*, project, job_id: int, kinds: Iterable[str] | None = None) -> BackgroundJob | None:
    """One job of the project (None when it is missing, of another project or of another kind)."""
    jobs = BackgroundJob.objects.filter(project=project, pk=job_id)
    if kinds is not None:
        jobs = jobs.filter(kind__in=list(kinds))
    return jobs.select_related("created_by").first()


def job_latest_for(*, target: Model, kind: str | None = None) -> BackgroundJob | None:
    """The newest job on this row (of this kind when given), whatever its state."""
    jobs = BackgroundJob.objects.filter(target_type=_target_type(target), target_id=target.pk)
    if kind is not None:
        jobs = jobs.filter(kind=kind)
    return jobs.select_related("created_by").order_by("-created_at", "-pk").first()


def jobs_latest_for(*, project, targets: Iterable[Model]) -> dict[int, BackgroundJob]:
    """The newest job on each of these rows (all of one model), by the row's id; rows without a job are left out."""
    targets = list(targets)  # a page's queryset is read once, here, and its rows kept for the caller
    if not targets:
        return {}
    jobs = BackgroundJob.objects.filter(
        project=project, target_type=_target_type(targets[0]), target_id__in=[t.pk for t in targets]
    ).order_by("target_id", "-created_at")
    latest: dict[int, BackgroundJob] = {}
    for job in jobs:
        latest.setdefault(job.target_id, job)
    return latest


def jobs_active_for(*, project, kind: str, model: type[Model], target_ids: Iterable[int]) -> set[int]:
    """Which of these rows have a job of this kind queued or running."""
    return set(
        BackgroundJob.objects.filter(
            project=project,
            kind=kind,
            target_type=_target_type(model),
            target_id__in=list(target_ids),
            status__in=ACTIVE,
        ).values_list("target_id", flat=True)
    )


def jobs_active(*, project) -> QuerySet[BackgroundJob]:
    """The project's jobs still queued or running, newest first."""
    return BackgroundJob.objects.filter(project=project, status__in=ACTIVE).order_by("-created_at")


def jobs_failed(*, project, kind: str | None = None) -> QuerySet[BackgroundJob]:
    """The project's failed jobs (of this kind when given), newest first."""
    jobs = BackgroundJob.objects.filter(project=project, status=JobStatus.FAILED)
    if kind is not None:
        jobs = jobs.filter(kind=kind)
    return jobs.order_by("-created_at")
