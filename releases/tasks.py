"""Celery task of releases: the job id in, the release built by `releases.build.release_build`.

`acks_late` is safe: the build writes every file afresh under the release's own folder from the
same inputs (same bytes), and refuses a release that is already ready or deleted, so a task
delivered twice, or again after a worker died, ends with one ready release. A copy handed out
while the build still runs (the broker's visibility timeout is shorter than a long build) finds the
job's heartbeat fresh and does nothing (jobs.services.job_running).
"""

from collections.abc import Callable

from celery import shared_task

from jobs.services import job_progress, job_running

from .imports.services import IMPORT_TASK
from .services import BUILD_TASK

SOFT_LIMIT_S = 2 * 3600
HARD_LIMIT_S = SOFT_LIMIT_S + 5 * 60

Progress = Callable[[int, int, str], None]


class ReleaseInvalid(Exception):
    """The written files did not pass validation (the release row lists the offending items)."""


@shared_task(
    name=BUILD_TASK, acks_late=True, reject_on_worker_lost=True, soft_time_limit=SOFT_LIMIT_S, time_limit=HARD_LIMIT_S
)
def build(job_id: int) -> None:
    release_build_job(job_id=job_id)


def release_build_job(*, job_id: int, on_progress: Progress | None = None) -> None:
    """Run one build job: the worker's task body, and `manage.py release create --sync` in-process.

    The job ends failed when the build raised or the release failed validation (its page lists why).
    """
    from .models import DatasetRelease, ReleaseStatus

    with job_running(job_id) as job:
        if job is None:
            return
        release = DatasetRelease.objects.select_related("project", "created_by").get(pk=job.params["release_id"])
        if release.job_id != job.pk:
            # A retry of a failed build is a new job: the release follows the job that builds it now.
            DatasetRelease.objects.filter(pk=release.pk).update(job=job)
        if release.status in (ReleaseStatus.DELETED, ReleaseStatus.READY):
            # Deleted before the worker got to it, or a redelivery after it finished: nothing to do.
            job.message = f"Release {release.version} is {release.get_status_display().lower()}; nothing to build."
            return
        from .build import release_build

        last = [-1]

        def progress(done: int, total: int, message: str) -> None:
            # At most one UPDATE per percent, however often the build reports.
            percent = int(100 * done / total) if total else 0
            if percent != last[0] or done == total:
                last[0] = percent
                job_progress(job, done=done, total=total, message=message)
            if on_progress is not None:
                on_progress(done, total, message)

        release = release_build(release=release, progress=progress)
        problems = len(release.validation_errors or [])
        job.result = {
            "release_id": release.pk,
            "status": release.status,
            "files": len(release.files or []),
            "validation_errors": problems,
        }
        if release.status == ReleaseStatus.FAILED:
            # The build worked and recorded why the release is not valid; the job fails too, so the
            # failure shows wherever jobs are listed.
            raise ReleaseInvalid(
                f"Release {release.version} failed validation: {problems} problem{'s' if problems != 1 else ''}; "
                "the release page lists them."
            )
        job.message = f"Release {release.version} is ready: {len(release.files or [])} files."


# Not acks_late: a second delivery after a success would import the same files again.
@shared_task(name=IMPORT_TASK, soft_time_limit=SOFT_LIMIT_S, time_limit=HARD_LIMIT_S)
def import_benchmark(job_id: int) -> None:
    from .imports.services import benchmark_import_job

    benchmark_import_job(job_id=job_id)
