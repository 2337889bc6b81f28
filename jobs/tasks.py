"""Celery tasks of jobs: the periodic sweep for jobs whose worker stopped."""

from celery import shared_task

from .services import jobs_sweep_stale


# Safe twice or after a crash: each job is rechecked under its row lock before it is touched.
@shared_task(name="jobs.sweep_stale", acks_late=True, time_limit=120, soft_time_limit=100)
def sweep_stale() -> dict[str, list[int]]:
    """Every minute (beat): restart or fail running jobs whose heartbeat stopped."""
    return jobs_sweep_stale()
