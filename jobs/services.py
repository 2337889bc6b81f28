"""Background jobs: the row is what users see; the Celery task named by `kind` does the work.

Every long step goes through here so that it shows progress, its outcome and a retry.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from celery import current_app
from django.db import transaction
from django.utils import timezone

from projects.refusals import Refused

from .models import BackgroundJob, JobStatus

logger = logging.getLogger(__name__)


class JobAlreadyRunning(Refused):
    """Another job of the same kind is already queued or running for the same target."""

    status, code = 409, "job_already_running"

    def __init__(self, job: BackgroundJob):
        super().__init__(f"{job.kind} is already {job.status} (job {job.pk})")
        self.job = job


def job_create(*, project, kind: str, target=None, params: dict | None = None, user=None) -> BackgroundJob:
    """Record a job and send it to the worker once the surrounding transaction commits.

    A double click finds the first job still queued or running and refuses the second.
    """
    target_type = target._meta.label_lower if target is not None else ""
    target_id = target.pk if target is not None else None
    with transaction.atomic():
        active = (
            BackgroundJob.objects.select_for_update()
            .filter(
                project=project,
                kind=kind,
                target_type=target_type,
                target_id=target_id,
                status__in=[JobStatus.QUEUED, JobStatus.RUNNING],
            )
            .first()
        )
        if active is not None:
            raise JobAlreadyRunning(active)
        job = BackgroundJob.objects.create(
            project=project,
            kind=kind,
            target_type=target_type,
            target_id=target_id,
            params=params or {},
            created_by=user if user is not None and user.is_authenticated else None,
        )
        transaction.on_commit(lambda: _send(job.pk, kind))
    return job


def job_retry(*, job: BackgroundJob, user=None) -> BackgroundJob:
    """Run a failed or cancelled job again as a new job with the same kind, target and parameters."""
    if not job.is_finished or job.status == JobStatus.SUCCEEDED:
        raise ValueError("Only a failed or cancelled job can be retried.")
    target = None
    if job.target_type:
        from django.apps import apps

        target = apps.get_model(job.target_type).objects.get(pk=job.target_id)
    return job_create(project=job.project, kind=job.kind, target=target, params=job.params, user=user)


def _send(job_id: int, kind: str) -> None:
    result = current_app.send_task(kind, args=[job_id])
    BackgroundJob.objects.filter(pk=job_id).update(celery_task_id=result.id or "")


def job_progress(job: BackgroundJob, *, done: int, total: int | None = None, message: str | None = None) -> None:
    """Cheap progress update (one UPDATE); call it as often as once per percent."""
    fields = {"progress_done": done}
    job.progress_done = done
    if total is not None:
        fields["progress_total"] = job.progress_total = total
    if message is not None:
        fields["message"] = job.message = message[:500]
    BackgroundJob.objects.filter(pk=job.pk).update(**fields)


@contextmanager
def job_running(job_id: int) -> Iterator[BackgroundJob | None]:
    """Mark a job running for the body of a task, then succeeded or failed with the error text.

    Yields None when the job is already finished (a task delivered twice does nothing twice).
    """
    with transaction.atomic():
        job = BackgroundJob.objects.select_for_update().get(pk=job_id)
        if job.is_finished:
            yield None
            return
        job.status = JobStatus.RUNNING
        job.started_at = timezone.now()
        job.attempts += 1
        job.error = ""
        job.save(update_fields=["status", "started_at", "attempts", "error"])
    try:
        yield job
    except Exception as exc:
        logger.exception("job %s (%s) failed", job_id, job.kind)
        message = str(exc) or exc.__class__.__name__
        BackgroundJob.objects.filter(pk=job_id).update(
            status=JobStatus.FAILED, error=message, finished_at=timezone.now(), message=message[:500]
        )
        return
    BackgroundJob.objects.filter(pk=job_id).update(
        status=JobStatus.SUCCEEDED,
        finished_at=timezone.now(),
        result=job.result,
        message=job.message or "Done",
        progress_done=max(job.progress_done, job.progress_total),
    )
