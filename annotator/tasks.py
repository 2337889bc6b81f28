"""Celery tasks for machine drafts: one per step, each takes a job id and runs the step's service.

Every step is idempotent (it drafts only what is missing and rechecks under a lock before writing),
so `acks_late` and `reject_on_worker_lost` are safe: a task delivered again after a worker died fills
in what the first left.
A run that hits the time limit stops; retrying the job carries on from where it stopped.
"""

from celery import shared_task

from jobs.services import job_running

from .drafts import DRAFT_STEPS


def _run(job_id: int) -> None:
    from .drafts import draft_job_run

    with job_running(job_id) as job:
        if job is not None:
            draft_job_run(job=job)


@shared_task(name=DRAFT_STEPS["chains"].kind, acks_late=True, reject_on_worker_lost=True)
def draft_chains(job_id: int) -> None:
    _run(job_id)


@shared_task(name=DRAFT_STEPS["relations"].kind, acks_late=True, reject_on_worker_lost=True)
def draft_relations(job_id: int) -> None:
    _run(job_id)


@shared_task(name=DRAFT_STEPS["descriptions"].kind, acks_late=True, reject_on_worker_lost=True)
def draft_descriptions(job_id: int) -> None:
    _run(job_id)


@shared_task(name=DRAFT_STEPS["seeds"].kind, acks_late=True, reject_on_worker_lost=True)
def draft_seeds(job_id: int) -> None:
    _run(job_id)


@shared_task(name=DRAFT_STEPS["mcqs"].kind, acks_late=True, reject_on_worker_lost=True)
def draft_mcqs(job_id: int) -> None:
    _run(job_id)


@shared_task(name=DRAFT_STEPS["options"].kind, acks_late=True, reject_on_worker_lost=True)
def draft_options(job_id: int) -> None:
    _run(job_id)
