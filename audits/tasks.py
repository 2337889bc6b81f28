"""Celery task of the probe runs: takes a job id and runs the service.

A run reuses every answer already written, so a task delivered again after a worker died carries
on where the first stopped (`acks_late` is safe).
"""

from celery import shared_task

from jobs.services import job_running

from .services import PROBE_TASK, probe_job_run


@shared_task(name=PROBE_TASK, acks_late=True, reject_on_worker_lost=True)
def probe_run(job_id: int) -> None:
    with job_running(job_id) as job:
        if job is not None:
            probe_job_run(job=job)
