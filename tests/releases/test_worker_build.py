"""A release cut through the API is built by the separate Celery worker process (real Redis, PostgreSQL)."""

import hashlib
import io
import json
import time
import zipfile

import pytest
from rest_framework.authtoken.models import Token

from jobs.models import BackgroundJob, JobStatus
from releases.models import DatasetRelease, ReleaseStatus
from tests import factories

from .conftest import make_accepted

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _wait_for(job: BackgroundJob, timeout: float = 90) -> BackgroundJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.is_finished:
            return job
        time.sleep(0.25)
    raise AssertionError(f"job {job.pk} still {job.status} after {timeout} s: {job.message}")


def test_the_worker_builds_a_release_members_download(client, settings, celery_worker_process):
    # The worker writes into its own media root: read from there too.
    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]
    project = factories.ProjectFactory()
    people = factories.people_for(project)
    make_accepted(project)
    admin = {"Authorization": f"Token {Token.objects.create(user=people['admin']).key}"}
    examiner = {"Authorization": f"Token {Token.objects.create(user=people['examiner']).key}"}

    response = client.post(
        f"/api/projects/{project.slug}/releases/",
        {"version": "v1", "formats": ["generic"], "split_config": {"counts": {"test": 1}}},
        content_type="application/json",
        headers=admin,
    )
    assert response.status_code == 202, response.content
    job = _wait_for(BackgroundJob.objects.get(pk=response.json()["job"]["id"]))
    release = DatasetRelease.objects.get()
    assert job.status == JobStatus.SUCCEEDED, (
        f"{job.error}\n{release.validation_errors}\n{celery_worker_process.log_tail()}"
    )
    assert job.celery_task_id and release.status == ReleaseStatus.READY

    detail = client.get(f"/api/projects/{project.slug}/releases/{release.pk}/", headers=examiner).json()
    zipped = client.get(detail["links"]["download_zip"], headers=examiner)
    with zipfile.ZipFile(io.BytesIO(b"".join(zipped.streaming_content))) as zf:
        members = {n.split("/", 1)[1]: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members.pop("manifest.json"))
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == {
        path: hashlib.sha256(data).hexdigest() for path, data in members.items()
    }
    assert {f["path"] for f in detail["files"]} == {*members, "manifest.json"}
