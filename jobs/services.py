"""Background jobs: the row is what users see; the Celery task named by `kind` does the work.

Every long step goes through here so that it shows progress, its outcome and a retry.
"""

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from projects.refusals import Refused

from .heartbeat import Heartbeat, job_is_stale, stale_jobs
from .models import BackgroundJob, JobStatus
from .signals import job_abandoned

logger = logging.getLogger(__name__)


class JobAlreadyRunning(Refused):
    """Another job of the same kind is already queued or running for the same target."""

    status, code = 409, "job_already_running"

    def __init__(self, job: BackgroundJob):
        super().__init__(f"{job.kind} is already {job.status} (job {job.pk})")
        self.job = job


# kind → a check, called as check(project=…), that raises a Refused when a job of that kind cannot
# start now (a model job with no model endpoint). The apps that own the kinds register them, so a
# retry from any interface refuses as the first start did, before a job row exists.
_start_checks: dict[str, Callable[..., object]] = {}


def job_start_check_register(*, kinds: Iterable[str], check: Callable[..., object]) -> None:
    for kind in kinds:
        _start_checks[kind] = check


def job_create(*, project, kind: str, target=None, params: dict | None = None, user=None) -> BackgroundJob:
    """Record a job and send it to the worker once the surrounding transaction commits.

    A double click finds the first job still queued or running and refuses the second. A job left
    "running" by a worker that died does not count: it is marked failed and the new one goes ahead.
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
        if active is not None and not _abandon_if_stale(active):
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
    """Run a failed or cancelled job again as a new job with the same kind, target and parameters.

    A job still "running" after its worker died counts as failed: it is marked so first.
    """
    if job.status == JobStatus.RUNNING:
        with transaction.atomic():
            job = BackgroundJob.objects.select_for_update().get(pk=job.pk)
            _abandon_if_stale(job)
    if not job.is_finished or job.status == JobStatus.SUCCEEDED:
        raise ValueError("Only a failed or cancelled job can be retried.")
    check = _start_checks.get(job.kind)
    if check is not None:
        check(project=job.project)
    target = None
    if job.target_type:
        from django.apps import apps

        target = apps.get_model(job.target_type).objects.get(pk=job.target_id)
    return job_create(project=job.project, kind=job.kind, target=target, params=job.params, user=user)


def _send(job_id: int, kind: str) -> None:
    result = current_app.send_task(kind, args=[job_id])
    BackgroundJob.objects.filter(pk=job_id).update(celery_task_id=result.id or "")


def job_progress(job: BackgroundJob, *, done: int, total: int | None = None, message: str | None = None) -> None:
    """Cheap progress update (one UPDATE); call it as often as once per percent. It is a heartbeat too."""
    fields = {"progress_done": done, "heartbeat_at": timezone.now()}
    job.progress_done = done
    if total is not None:
        fields["progress_total"] = job.progress_total = total
    if message is not None:
        fields["message"] = job.message = message[:500]
    BackgroundJob.objects.filter(pk=job.pk).update(**fields)


@contextmanager
def job_running(job_id: int) -> Iterator[BackgroundJob | None]:
    """Mark a job running for the body of a task, then succeeded or failed with the error text.

    Yields None when the job is already finished, or running elsewhere with a fresh heartbeat (a task
    delivered twice does nothing twice). A running job whose heartbeat stopped lost its worker: this
    delivery takes it over while it has restarts left, and marks it failed otherwise. While the body
    runs, a timer keeps the heartbeat fresh.
    """
    with transaction.atomic():
        job = BackgroundJob.objects.select_for_update().get(pk=job_id)
        if job.is_finished:
            job = None
        elif job.status == JobStatus.RUNNING:
            if not job_is_stale(job):
                logger.info("job %s (%s) is running elsewhere; this delivery leaves it alone", job_id, job.kind)
                job = None
            elif not _restart_allowed(job):
                _job_abandon(job, reason=_stopped_reason(job))
                job = None
        if job is not None:
            job.status = JobStatus.RUNNING
            job.started_at = job.heartbeat_at = timezone.now()
            job.attempts += 1
            job.error = ""
            job.save(update_fields=["status", "started_at", "heartbeat_at", "attempts", "error"])
    if job is None:
        yield None
        return
    # The outcome is written only by the run that still owns the job: one presumed dead that comes
    # back after the sweep handed its job to another run leaves that run's row alone.
    mine = BackgroundJob.objects.filter(pk=job_id, attempts=job.attempts)
    try:
        with Heartbeat(job_id=job_id, attempt=job.attempts):
            yield job
    except Exception as exc:
        logger.exception("job %s (%s) failed", job_id, job.kind)
        message = str(exc) or exc.__class__.__name__
        mine.update(status=JobStatus.FAILED, error=message, finished_at=timezone.now(), message=message[:500])
        return
    mine.update(
        status=JobStatus.SUCCEEDED,
        finished_at=timezone.now(),
        result=job.result,
        message=job.message or "Done",
        progress_done=max(job.progress_done, job.progress_total),
    )


# At most this many stale jobs per sweep; the next minute's sweep takes the rest.
SWEEP_BATCH = 200


def jobs_sweep_stale() -> dict[str, list[int]]:
    """Restart or fail every running job whose worker stopped (no heartbeat for JOB_STALE_AFTER_S).

    A job whose task is safe to run twice goes back to the queue, at most JOB_AUTO_RESTARTS times;
    any other, or one out of restarts, is marked failed with the reason. Returns the job ids.
    """
    restarted: list[int] = []
    failed: list[int] = []
    for job_id in list(stale_jobs().values_list("pk", flat=True)[:SWEEP_BATCH]):
        with transaction.atomic():
            # Skip a row a starting run holds; recheck the rest under the lock (it may have finished).
            job = BackgroundJob.objects.select_for_update(skip_locked=True).filter(pk=job_id).first()
            if job is None or not job_is_stale(job):
                continue
            if _restart_allowed(job):
                job.status = JobStatus.QUEUED
                job.heartbeat_at = None
                job.message = (
                    f"The worker running this job stopped; running it again "
                    f"(restart {job.attempts} of {settings.JOB_AUTO_RESTARTS})."
                )
                job.save(update_fields=["status", "heartbeat_at", "message"])
                transaction.on_commit(partial(_send, job.pk, job.kind))
                restarted.append(job.pk)
            else:
                _job_abandon(job, reason=_stopped_reason(job))
                failed.append(job.pk)
    if restarted or failed:
        logger.warning("jobs whose worker stopped: restarted %s, failed %s", restarted, failed)
    return {"restarted": restarted, "failed": failed}


def _restart_allowed(job: BackgroundJob) -> bool:
    return job.attempts <= settings.JOB_AUTO_RESTARTS and _runs_twice_safely(job.kind) and not _outlived_limit(job)


def _task(kind: str):
    if kind not in current_app.tasks:
        current_app.loader.import_default_modules()
    return current_app.tasks.get(kind)


def _runs_twice_safely(kind: str) -> bool:
    """Whether the job's task is declared safe to run twice: `acks_late`, by the house convention."""
    task = _task(kind)
    return bool(task is not None and task.acks_late)


def _outlived_limit(job: BackgroundJob) -> float | None:
    """The task's time limit (s) when the run was still alive past it: Celery killed it for that, and
    a new run would stop there too."""
    task = _task(job.kind)
    if task is None or job.heartbeat_at is None or job.started_at is None:
        return None
    conf = current_app.conf
    limit = task.soft_time_limit or conf.task_soft_time_limit or task.time_limit or conf.task_time_limit
    ran_s = (job.heartbeat_at - job.started_at).total_seconds()
    return limit if limit and ran_s >= limit else None


def _abandon_if_stale(job: BackgroundJob) -> bool:
    """Mark a running job whose worker stopped failed, so a new run may take its place (row locked)."""
    if not job_is_stale(job):
        return False
    _job_abandon(job, reason=_stopped_reason(job, replaced=True))
    return True


def _job_abandon(job: BackgroundJob, *, reason: str) -> None:
    """Mark a job failed because its worker stopped; its app shows the failure (row locked)."""
    job.status = JobStatus.FAILED
    job.error = reason
    job.message = reason[:500]
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "error", "message", "finished_at"])
    job_abandoned.send(sender=BackgroundJob, job=job, reason=reason)


def _stopped_reason(job: BackgroundJob, *, replaced: bool = False) -> str:
    last = job.heartbeat_at or job.started_at or job.created_at
    silent_s = int((timezone.now() - last).total_seconds()) if last else 0
    head = f"The worker running this job stopped (no sign of life for {_duration(silent_s)})"
    if replaced:
        return f"{head}; a new run takes its place."
    limit = _outlived_limit(job)
    if limit:
        return (
            f"{head}, after it had run past its time limit of {_duration(limit)}: a new run would stop there "
            "too. Make the job smaller or raise the limit, then retry it."
        )
    if not _runs_twice_safely(job.kind):
        return (
            f"{head}. This kind of job is not run again by itself, because running it twice could repeat "
            "its work: check what it did, then retry it."
        )
    return (
        f"{head}; it stopped in each of its {job.attempts} runs, so it is not run again by itself. "
        "Retry it once the cause (memory, a crash, a restart) is fixed."
    )


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} h".replace(".0 h", " h")
    return f"{seconds // 60} min" if seconds >= 120 else f"{seconds} s"
