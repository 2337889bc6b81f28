"""The heartbeat of a running job: the timer that refreshes it, and the test for one that stopped.

A job's row says "running" from the moment its task starts; only the heartbeat tells a job that is
still being worked on from one whose worker was killed. Progress reports refresh it too
(`jobs.services.job_progress`), so the timer matters only for steps that run long without one.
"""

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import connections
from django.db.models import Q, QuerySet
from django.utils import timezone

from .models import BackgroundJob, JobStatus

logger = logging.getLogger(__name__)


def stale_after() -> timedelta:
    return timedelta(seconds=settings.JOB_STALE_AFTER_S)


def job_is_stale(job: BackgroundJob) -> bool:
    """A running job that has not shown a sign of life for longer than JOB_STALE_AFTER_S.

    Rows that ran before heartbeats existed count from when they started.
    """
    if job.status != JobStatus.RUNNING:
        return False
    last = job.heartbeat_at or job.started_at or job.created_at
    return last is None or last < timezone.now() - stale_after()


def stale_jobs() -> QuerySet[BackgroundJob]:
    """Running jobs whose worker stopped, as `job_is_stale` decides (read by the sweep every minute)."""
    cutoff = timezone.now() - stale_after()
    silent = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    return BackgroundJob.objects.filter(silent, status=JobStatus.RUNNING).order_by("pk")


class Heartbeat:
    """Refresh a running job's heartbeat every JOB_HEARTBEAT_S from a thread beside the task.

    Only the run that started the job writes it (`attempts` names the run), so a worker that was
    presumed dead and comes back cannot make a job it no longer owns look alive.
    """

    def __init__(self, *, job_id: int, attempt: int):
        self.job_id, self.attempt = job_id, attempt
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"job-{job_id}-heartbeat", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._done.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        try:
            while not self._done.wait(settings.JOB_HEARTBEAT_S):
                try:
                    BackgroundJob.objects.filter(
                        pk=self.job_id, status=JobStatus.RUNNING, attempts=self.attempt
                    ).update(heartbeat_at=timezone.now())
                except Exception:  # a missed beat is not worth stopping the job for; the next may pass
                    logger.warning("job %s: heartbeat not written", self.job_id, exc_info=True)
        finally:
            # This thread's own database connection, opened by the first beat.
            connections.close_all()
