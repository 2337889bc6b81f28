"""Chromium: the video list shows a video's new status when its processing job ends, without a reload."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from jobs.models import BackgroundJob, JobStatus
from tests import factories
from tests.browser.helpers import login
from videos.models import VideoStatus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_row_updates_when_the_job_ends(page, live_server):
    project = factories.ProjectFactory()
    people = factories.people_for(project)
    video = factories.VideoFactory(project=project, status=VideoStatus.PROCESSING)
    job = BackgroundJob.objects.create(
        project=project,
        kind="videos.probe",
        status=JobStatus.RUNNING,
        target_type=video._meta.label_lower,
        target_id=video.pk,
    )
    login(page, live_server, people["annotator"])
    page.goto(live_server.url + reverse("videos:list", args=[project.slug]))
    row = page.locator(f"#video-{video.pk}")
    expect(row.locator(".status-processing")).to_be_visible()
    page.evaluate("window.__notReloaded = true")

    # What the worker does at the end: the video is ready, the job finished.
    video.status = VideoStatus.READY
    video.save(update_fields=["status"])
    job.status = JobStatus.SUCCEEDED
    job.save(update_fields=["status"])

    expect(row.locator(".status-ready")).to_be_visible(timeout=10_000)
    expect(row.locator(f"#job-{job.pk}")).to_have_count(0)
    assert page.evaluate("window.__notReloaded === true")  # the rows were swapped, the page stayed
