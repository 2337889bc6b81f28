"""Jobs whose worker died: a fresh heartbeat keeps a second delivery out, a stale one lets the sweep,
a redelivery, a retry or a reprocess take over, and a job that cannot run again fails with the reason."""

from datetime import timedelta

import pytest
from django.utils import timezone

from jobs.models import BackgroundJob, JobStatus
from jobs.services import JobAlreadyRunning, job_create, job_progress, job_retry, job_running, jobs_sweep_stale
from releases.models import DatasetRelease, ReleaseStatus
from tests import factories
from videos.ingest import video_process_start
from videos.models import VideoStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    calls = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task",
        lambda name, args: calls.append((name, args)) or type("R", (), {"id": "celery-id"})(),
    )
    return calls


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.JOB_STALE_AFTER_S = 180
    settings.JOB_AUTO_RESTARTS = 3


def _running(project, *, silent_s: float, attempts: int = 1, kind: str = "videos.process", target=None, **fields):
    """A job some worker started; its last sign of life was `silent_s` seconds ago."""
    beat = timezone.now() - timedelta(seconds=silent_s)
    row = {
        "status": JobStatus.RUNNING,
        "started_at": beat - timedelta(seconds=5),
        "heartbeat_at": beat,
        "target_type": target._meta.label_lower if target is not None else "",
        "target_id": target.pk if target is not None else None,
    }
    return factories.BackgroundJobFactory(project=project, kind=kind, attempts=attempts, **{**row, **fields})


def test_a_second_delivery_leaves_a_job_with_a_fresh_heartbeat_alone(project):
    job = _running(project, silent_s=10)
    with job_running(job.pk) as again:
        assert again is None
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and job.attempts == 1


def test_a_delivery_takes_over_a_job_whose_heartbeat_stopped(project):
    job = _running(project, silent_s=600)
    with job_running(job.pk) as running:
        assert running is not None and running.attempts == 2
        assert running.heartbeat_at > timezone.now() - timedelta(seconds=5)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.attempts == 2


def test_a_delivery_fails_a_stale_job_out_of_restarts_with_the_reason(project):
    video = factories.VideoFactory(project=project, status=VideoStatus.PROCESSING)
    job = _running(project, silent_s=600, attempts=4, target=video)
    with job_running(job.pk) as running:
        assert running is None
    job.refresh_from_db()
    video.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.finished_at
    assert job.error.startswith("The worker running this job stopped (no sign of life for 10 min)")
    assert "each of its 4 runs" in job.error
    assert video.status == VideoStatus.FAILED and video.status_reason == job.error


def test_a_run_presumed_dead_does_not_overwrite_the_run_that_replaced_it(project):
    job = factories.BackgroundJobFactory(project=project)
    with job_running(job.pk) as first:
        # Meanwhile the sweep handed the job to another run (attempt 2), which is still going.
        BackgroundJob.objects.filter(pk=job.pk).update(attempts=2, heartbeat_at=timezone.now())
        first.message = "the first run's outcome"
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and job.attempts == 2


def test_progress_is_a_heartbeat(project):
    job = _running(project, silent_s=600)
    job_progress(job, done=1, total=2)
    job.refresh_from_db()
    assert job.heartbeat_at > timezone.now() - timedelta(seconds=5)


def test_the_sweep_restarts_safe_jobs_and_fails_the_rest_with_the_reason(
    project, sent, django_capture_on_commit_callbacks
):
    video = factories.VideoFactory(project=project, status=VideoStatus.PROCESSING)
    restartable = _running(project, silent_s=200, target=video)
    alive = _running(project, silent_s=30, kind="videos.transcribe")
    unsafe = _running(project, silent_s=200, kind="videos.import_manifest")
    worn_out = _running(project, silent_s=200, attempts=4, kind="videos.transcribe")
    # Started before heartbeats existed: counts from when it started.
    legacy = _running(project, silent_s=200, kind="videos.complexity", heartbeat_at=None)
    finished = _running(project, silent_s=900, kind="videos.transcribe", status=JobStatus.SUCCEEDED)

    with django_capture_on_commit_callbacks(execute=True):
        outcome = jobs_sweep_stale()

    assert sorted(outcome["restarted"]) == sorted([restartable.pk, legacy.pk])
    assert sorted(outcome["failed"]) == sorted([unsafe.pk, worn_out.pk])
    assert sorted(sent) == sorted([("videos.process", [restartable.pk]), ("videos.complexity", [legacy.pk])])
    for job in (restartable, alive, unsafe, worn_out, legacy, finished):
        job.refresh_from_db()
    assert restartable.status == JobStatus.QUEUED and restartable.heartbeat_at is None
    assert restartable.message == "The worker running this job stopped; running it again (restart 1 of 3)."
    assert restartable.celery_task_id == "celery-id"
    video.refresh_from_db()
    assert video.status == VideoStatus.PROCESSING  # it is being processed again
    assert alive.status == JobStatus.RUNNING and finished.status == JobStatus.SUCCEEDED
    assert unsafe.status == JobStatus.FAILED
    assert unsafe.error.startswith("The worker running this job stopped (no sign of life for 3 min).")
    assert "not run again by itself" in unsafe.error and unsafe.message == unsafe.error
    assert worn_out.status == JobStatus.FAILED and "each of its 4 runs" in worn_out.error

    # The restarted job runs once more; a second sweep finds nothing.
    with job_running(restartable.pk) as running:
        assert running.attempts == 2
    assert jobs_sweep_stale() == {"restarted": [], "failed": []}


def test_a_build_whose_worker_stopped_for_good_fails_its_release(project, sent):
    job = _running(project, silent_s=600, attempts=4, kind="releases.build")
    release = DatasetRelease.objects.create(project=project, version="v1", status=ReleaseStatus.BUILDING, job=job)
    jobs_sweep_stale()
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED and release.finished_at
    assert release.validation_errors[0]["message"].startswith("The build stopped: The worker running this job stopped")


def test_retry_and_reprocess_replace_a_job_whose_worker_stopped(project, sent):
    video = factories.VideoFactory(project=project, status=VideoStatus.PROCESSING)
    stale = _running(project, silent_s=600, target=video)

    retried = job_retry(job=stale)
    stale.refresh_from_db()
    assert stale.status == JobStatus.FAILED
    assert stale.error == "The worker running this job stopped (no sign of life for 10 min); a new run takes its place."
    assert retried.status == JobStatus.QUEUED and retried.kind == "videos.process" and retried.target_id == video.pk

    # Reprocess: the queued retry is a live job, so it is refused; once that one's worker dies too,
    # reprocessing replaces it and the video shows it is processing again.
    with pytest.raises(JobAlreadyRunning):
        video_process_start(video=video)
    BackgroundJob.objects.filter(pk=retried.pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    job = video_process_start(video=video)
    assert job.pk != retried.pk and job.status == JobStatus.QUEUED
    video.refresh_from_db()
    assert video.status == VideoStatus.PROCESSING and video.status_reason == ""


def test_a_job_with_a_fresh_heartbeat_is_still_running_for_retry_and_create(project, sent):
    video = factories.VideoFactory(project=project)
    alive = _running(project, silent_s=30, target=video)
    with pytest.raises(ValueError, match="Only a failed or cancelled job"):
        job_retry(job=alive)
    with pytest.raises(JobAlreadyRunning):
        job_create(project=project, kind="videos.process", target=video)
    alive.refresh_from_db()
    assert alive.status == JobStatus.RUNNING


def test_the_api_retries_a_job_whose_worker_stopped(client, project, people, sent):
    video = factories.VideoFactory(project=project, status=VideoStatus.PROCESSING)
    stale = _running(project, silent_s=600, target=video)
    client.force_login(people["admin"])
    response = client.post(f"/api/projects/{project.slug}/jobs/{stale.pk}/retry/")
    assert response.status_code == 202, response.content
    assert response.json()["id"] != stale.pk
    response = client.post(f"/api/projects/{project.slug}/videos/{video.pk}/reprocess/")
    assert response.status_code == 409  # the retry is queued: it is the live one now


def test_a_job_that_outlived_its_time_limit_is_not_run_again(project, sent):
    # reviewer.judge stops softly after 30 min; this run was still beating at 35 min, so the hard
    # limit ended it, and a new run would end the same way.
    job = _running(project, silent_s=300, kind="reviewer.judge")
    BackgroundJob.objects.filter(pk=job.pk).update(started_at=job.heartbeat_at - timedelta(minutes=35))
    assert jobs_sweep_stale() == {"restarted": [], "failed": [job.pk]}
    job.refresh_from_db()
    assert job.error == (
        "The worker running this job stopped (no sign of life for 5 min), after it had run past its time limit "
        "of 30 min: a new run would stop there too. Make the job smaller or raise the limit, then retry it."
    )
    assert sent == []
