"""A running job's heartbeat: a timer refreshes it while the task body runs, even without progress."""

import time

import pytest

from jobs.heartbeat import job_is_stale
from jobs.models import BackgroundJob, JobStatus
from jobs.services import job_running
from tests import factories

# The timer writes from its own thread and connection: the job row must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


def test_the_timer_keeps_a_long_step_without_progress_alive(project, settings):
    settings.JOB_HEARTBEAT_S = 0.05
    settings.JOB_STALE_AFTER_S = 60
    job = factories.BackgroundJobFactory(project=project)
    with job_running(job.pk) as running:
        first = running.heartbeat_at
        deadline = time.monotonic() + 10
        while BackgroundJob.objects.get(pk=job.pk).heartbeat_at == first:
            assert time.monotonic() < deadline, "no heartbeat within 10 s"
            time.sleep(0.02)
        assert not job_is_stale(BackgroundJob.objects.get(pk=job.pk))
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    beat = job.heartbeat_at
    time.sleep(0.2)  # the timer stopped with the job
    job.refresh_from_db()
    assert job.heartbeat_at == beat
