import pytest

from jobs.models import BackgroundJob, JobStatus
from jobs.services import JobAlreadyRunning, job_create, job_progress, job_retry, job_running
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    calls = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task",
        lambda name, args: calls.append((name, args)) or type("R", (), {"id": "celery-id"})(),
    )
    return calls


def test_job_is_sent_only_after_commit_and_double_click_is_refused(project, sent, django_capture_on_commit_callbacks):
    video = factories.VideoFactory(project=project)
    with django_capture_on_commit_callbacks(execute=True):
        job = job_create(project=project, kind="videos.probe", target=video)
        assert sent == []
    assert sent == [("videos.probe", [job.pk])]
    job.refresh_from_db()
    assert job.celery_task_id == "celery-id" and job.target_type == "videos.video" and job.target_id == video.pk
    with pytest.raises(JobAlreadyRunning) as excinfo:
        job_create(project=project, kind="videos.probe", target=video)
    assert excinfo.value.job == job


def test_running_records_success_progress_and_failure(project, sent):
    job = BackgroundJob.objects.create(project=project, kind="k")
    with job_running(job.pk) as running:
        job_progress(running, done=5, total=10, message="half")
        running.result = {"n": 10}
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.result == {"n": 10} and job.progress_done == 10
    assert job.attempts == 1 and job.finished_at

    # A task delivered twice does nothing the second time.
    with job_running(job.pk) as again:
        assert again is None

    failing = BackgroundJob.objects.create(project=project, kind="k")
    with job_running(failing.pk):
        raise RuntimeError("the file is not a video")
    failing.refresh_from_db()
    assert failing.status == JobStatus.FAILED and failing.error == "the file is not a video"

    retried = job_retry(job=failing)
    assert retried.pk != failing.pk and retried.kind == "k" and retried.status == JobStatus.QUEUED
    with pytest.raises(ValueError, match="Only a failed or cancelled job"):
        job_retry(job=job)
