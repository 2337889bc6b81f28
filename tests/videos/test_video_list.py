"""The video list's rows reload themselves, with the page's filters, when a polled job ends."""

import pytest
from django.urls import reverse

from jobs.models import BackgroundJob, JobStatus
from tests import factories
from videos.models import VideoStatus

pytestmark = pytest.mark.django_db


def test_the_rows_listen_for_a_finished_job_and_reload_with_the_same_filters(client, project, people):
    video = factories.VideoFactory(project=project, status=VideoStatus.PROCESSING)
    job = BackgroundJob.objects.create(
        project=project,
        kind="videos.probe",
        status=JobStatus.RUNNING,
        target_type=video._meta.label_lower,
        target_id=video.pk,
    )
    client.force_login(people["annotator"])
    url = reverse("videos:list", args=[project.slug])
    page = client.get(url, {"status": "processing", "q": video.name}).text
    assert 'hx-trigger="job-finished from:body"' in page
    assert f'hx-get="{url}?status=processing&amp;q={video.name}&amp;partial=rows"' in page
    assert f'id="job-{job.pk}"' in page and 'hx-trigger="every 1s"' in page

    # The job ends: the rows asked for again show the new status, alone, still listening.
    job.status = JobStatus.SUCCEEDED
    job.save()
    video.status = VideoStatus.READY
    video.save()
    rows = client.get(url, {"status": "", "partial": "rows"}, headers={"HX-Request": "true"}).text
    assert "<html" not in rows
    assert "status-ready" in rows and 'hx-trigger="every 1s"' not in rows
    assert 'hx-trigger="job-finished from:body"' in rows
