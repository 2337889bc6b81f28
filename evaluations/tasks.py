"""Celery task of the evaluation runs: takes a job id and runs the service.

Every answer is written as it comes and a run asks only the records without one, so a task
delivered again after its worker died carries on where the first stopped (`acks_late` is safe).
"""

from celery import shared_task

from jobs.services import job_running

from .runs import EVAL_TASK, evaluation_job_run


@shared_task(name=EVAL_TASK, acks_late=True, reject_on_worker_lost=True)
def evaluation_run(job_id: int) -> None:
    with job_running(job_id) as job:
        if job is not None:
            evaluation_job_run(job=job)
