"""Celery tasks: each takes a job id, marks the job running and calls one service.

Each task is named by the constant its starting service queues the job under (the job's kind).

A task safe to run twice says so with `acks_late` and `reject_on_worker_lost`: the broker hands it
out again when the process running it dies, and the stale-job sweep restarts its job
(jobs.services.jobs_sweep_stale); any other task's job is marked failed when its worker dies.
"""

from celery import shared_task
from django.core.files.storage import default_storage

from jobs.services import job_progress, job_running

from .comments import COMMENTS_IMPORT_TASK
from .ingest import PROCESS_TASK
from .manifest import MANIFEST_IMPORT_TASK
from .model_steps import COMPLEXITY_TASK, TRANSCRIBE_TASK
from .models import Video


# Idempotent: safe to run twice.
@shared_task(name=PROCESS_TASK, acks_late=True, reject_on_worker_lost=True)
def process(job_id: int) -> None:
    from .ingest import video_process

    with job_running(job_id) as job:
        if job is not None:
            video_process(video_id=job.target_id, job=job)


# Replaces the video's comments: idempotent.
@shared_task(name=COMMENTS_IMPORT_TASK, acks_late=True, reject_on_worker_lost=True)
def import_comments(job_id: int) -> None:
    from .comments import comments_import

    with job_running(job_id) as job:
        if job is None:
            return
        video = Video.objects.get(pk=job.target_id)
        staged = job.params["staged"]
        with default_storage.open(staged, "rb") as fh:
            job_progress(job, done=0, total=job.params.get("size", 0) or 0, message="Importing comments")
            outcome = comments_import(
                video=video,
                source=fh,
                filename=job.params["filename"],
                progress=lambda n: job_progress(
                    job, done=fh.tell() if hasattr(fh, "tell") else n, message=f"{n:,} comments imported"
                ),
            )
        default_storage.delete(staged)
        job.result = {
            "imported": outcome.imported,
            "skipped": outcome.skipped,
            "problems": [str(p) for p in outcome.problems],
        }
        job.message = f"{outcome.imported:,} comments imported" + (
            f", {outcome.skipped:,} rows skipped" if outcome.skipped else ""
        )


@shared_task(name=MANIFEST_IMPORT_TASK)  # not acks_late: a re-run would only report duplicates
def import_manifest(job_id: int) -> None:
    from .manifest import import_rows, rows_from_json

    with job_running(job_id) as job:
        if job is None:
            return
        rows = list(rows_from_json(job.params["rows"]))
        failures = []

        def progress(done, total, outcome):
            if not outcome.ok:
                failures.append({"line": outcome.line, "location": outcome.location, "error": outcome.message})
            job_progress(job, done=done, total=total, message=f"{done}/{total}: {outcome.message}"[:500])

        result = import_rows(project=job.project, rows=rows, user=job.created_by, progress=progress)
        job.result = {"imported": result.imported, "refused": result.refused, "failures": failures}
        job.message = f"{result.imported} imported, {result.refused} refused"


# Replaces the ASR cues: idempotent.
@shared_task(name=TRANSCRIBE_TASK, acks_late=True, reject_on_worker_lost=True)
def transcribe(job_id: int) -> None:
    from .transcription import video_transcribe

    with job_running(job_id) as job:
        if job is None:
            return
        video = Video.objects.select_related("project").get(pk=job.target_id)
        job_progress(job, done=0, total=100, message="Transcribing speech")
        count = video_transcribe(
            video=video, language=job.params.get("language"), progress=lambda f: job_progress(job, done=int(100 * f))
        )
        job.result = {"cues": count}
        job.message = f"{count} transcript lines"


# Overwrites the one score: idempotent.
@shared_task(name=COMPLEXITY_TASK, acks_late=True, reject_on_worker_lost=True)
def complexity(job_id: int) -> None:
    from .complexity import video_score_complexity

    with job_running(job_id) as job:
        if job is None:
            return
        video = Video.objects.select_related("project").get(pk=job.target_id)
        score = video_score_complexity(video=video)
        job.result = {"score": score}
        job.message = f"Complexity {score}/10"
