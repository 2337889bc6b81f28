"""Celery task of the quality gate: the judge scores one submitted item (a job id in, a service call).

`acks_late` is safe: a verdict is recorded only while the item is still submitted at the judged
version, under its row lock, so a task delivered twice records one score and one transition.
The time limit covers the LLM layer's retries and its wait for a free slot at the endpoint.
"""

from celery import shared_task

from jobs.services import job_running

from .quality_gate import JUDGE_TASK


@shared_task(name=JUDGE_TASK, acks_late=True, reject_on_worker_lost=True, soft_time_limit=30 * 60, time_limit=31 * 60)
def judge(job_id: int) -> None:
    from .quality_gate import judge_job_run

    with job_running(job_id) as job:
        if job is not None:
            judge_job_run(job=job)
