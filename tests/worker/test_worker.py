"""A view enqueues a task and the separate Celery worker process runs it (real Redis, real PostgreSQL)."""

import time

import pytest
from django.urls import reverse

from jobs.models import BackgroundJob, JobStatus
from videos.models import Video, VideoStatus
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _wait_for(job: BackgroundJob, timeout: float = 90) -> BackgroundJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.is_finished:
            return job
        time.sleep(0.25)
    raise AssertionError(f"job {job.pk} still {job.status} after {timeout} s: {job.message}")


def test_upload_view_enqueues_processing_and_the_worker_runs_it(client, settings, celery_worker_process, tmp_path):
    from tests import factories

    # The worker reads files from its own media root: write uploads there.
    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]
    project = factories.ProjectFactory()
    people = factories.people_for(project)
    path = tmp_path / "two_scenes.mp4"
    make_scene_video(path, [SceneSpec(3.0), SceneSpec(3.0)], width=320, height=180)

    client.force_login(people["admin"])
    with open(path, "rb") as fh:
        response = client.post(reverse("videos:upload", args=[project.slug]), {"file": fh})
    assert response.status_code == 201, response.content
    job = BackgroundJob.objects.get(kind="videos.process")

    job = _wait_for(job)
    assert job.status == JobStatus.SUCCEEDED, f"{job.error}\n{celery_worker_process.log_tail()}"
    assert job.celery_task_id
    video = Video.objects.get(pk=job.target_id)
    assert video.status == VideoStatus.READY
    assert len(video.scenes) == 2 and video.clips.count() == 2
