import hashlib
import io
import json
import tarfile
import zipfile

import pytest

from jobs.models import BackgroundJob, JobStatus
from releases.models import DatasetRelease, ReleaseStatus
from releases.tasks import build
from tests import factories
from tests.releases.conftest import accepted, stored_release  # noqa: F401 - the fixture is used by name

from .error_shape import assert_error

pytestmark = pytest.mark.django_db

MEMBERS = ["admin", "annotator", "examiner", "reviser"]
LIST_KEYS = {
    "id",
    "version",
    "formats",
    "status",
    "test_style",
    "seed",
    "counts",
    "job",
    "created_by",
    "created_at",
    "finished_at",
    "deleted_by",
    "deleted_at",
    "links",
}


@pytest.fixture
def release(project, people):
    return stored_release(project, by=people["admin"])


def _base(project):
    return f"/api/projects/{project.slug}/releases/"


@pytest.mark.parametrize("role", MEMBERS)
def test_members_read_list_detail_statistics_and_download(client, project, people, release, token_for, role):
    headers = token_for(people[role])
    body = client.get(_base(project), headers=headers).json()
    assert body["count"] == 1
    item = body["results"][0]
    assert set(item) == LIST_KEYS
    assert item["version"] == "v1" and item["status"] == "ready" and item["created_by"] == people["admin"].username
    assert item["counts"] == {
        "videos": 2,
        "items": {"qa_chain": 0, "chain_pair": 0, "relation": 0, "mcq": 2},
        "qa_pairs": 0,
        "per_split": {"train": {"videos": 1, "items": 1}, "test": {"videos": 1, "items": 1}},
    }
    assert item["links"]["download_zip"].endswith(f"/releases/{release.pk}/download/?archive=zip")

    detail = client.get(item["links"]["self"], headers=headers).json()
    assert set(detail) == LIST_KEYS | {"filters", "split_config", "files", "manifest", "validation_errors"}
    assert detail["files"] == release.files

    stats = client.get(item["links"]["statistics"], headers=headers).json()
    assert stats == release.statistics

    response = client.get(item["links"]["download_zip"], headers=headers)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with release.archive.open("rb") as fh:
        assert b"".join(response.streaming_content) == fh.read()


def test_tar_download_holds_the_listed_files(client, project, people, release, token_for):
    response = client.get(f"{_base(project)}{release.pk}/download/?archive=tar", headers=token_for(people["reviser"]))
    assert response.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(b"".join(response.streaming_content))) as tar:
        got = {m.name.split("/", 1)[1]: hashlib.sha256(tar.extractfile(m).read()).hexdigest() for m in tar}
    assert got == {f["path"]: f["sha256"] for f in release.files}


def test_download_refusals(client, project, people, token_for):
    headers = token_for(people["annotator"])
    queued = DatasetRelease.objects.create(project=project, version="v0", formats=["generic"])
    error = assert_error(
        client.get(f"{_base(project)}{queued.pk}/download/", headers=headers), 409, "release_not_ready"
    )
    assert "v0 is queued" in error["message"]
    error = assert_error(
        client.get(f"{_base(project)}{queued.pk}/download/?archive=rar", headers=headers), 400, "validation_error"
    )
    assert error["details"] == {"archive": ["Choose zip or tar, not 'rar'."]}


def test_strangers_get_404_and_anonymous_401(client, project, people, release, token_for):
    urls = [
        _base(project),
        f"{_base(project)}{release.pk}/",
        f"{_base(project)}{release.pk}/statistics/",
        f"{_base(project)}{release.pk}/download/",
    ]
    for url in urls:
        assert_error(client.get(url), 401, "not_authenticated")
        assert_error(client.get(url, headers=token_for(people["outsider"])), 404, "not_found")
    assert_error(client.post(_base(project), {}, headers=token_for(people["outsider"])), 404, "not_found")
    assert_error(client.delete(urls[1], headers=token_for(people["outsider"])), 404, "not_found")
    other = stored_release(factories.ProjectFactory(), version="x1")
    assert_error(client.get(f"{_base(project)}{other.pk}/", headers=token_for(people["admin"])), 404, "not_found")


@pytest.mark.parametrize("role", ["annotator", "examiner", "reviser"])
def test_only_admins_create_and_delete(client, project, people, release, accepted, token_for, role):  # noqa: F811
    headers = token_for(people[role])
    body = {"version": "v2", "formats": ["generic"]}
    assert_error(
        client.post(_base(project), body, content_type="application/json", headers=headers), 403, "permission_denied"
    )
    assert_error(client.delete(f"{_base(project)}{release.pk}/", headers=headers), 403, "permission_denied")
    assert DatasetRelease.objects.count() == 1
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY


def test_create_answers_202_with_the_queued_release_and_its_job(client, project, people, accepted, token_for):  # noqa: F811
    body = {
        "version": "v2",
        "formats": ["longvideobench"],
        "filters": {"categories": ["E2O"]},
        "split_config": {"counts": {"test": 1}},
        "seed": 9,
        "test_style": True,
    }
    response = client.post(_base(project), body, content_type="application/json", headers=token_for(people["admin"]))
    assert response.status_code == 202, response.content
    data = response.json()
    release = DatasetRelease.objects.get()
    assert data["id"] == release.pk and data["status"] == "queued" and data["test_style"] is True
    assert data["filters"] == {"statuses": ["accepted"], "categories": ["E2O"], "include_media": True}
    assert data["split_config"] == {"counts": {"test": 1}, "stratify": True}
    assert data["job"]["id"] == release.job_id and data["job"]["status"] == "queued"
    assert data["job"]["url"].endswith(f"/api/projects/{project.slug}/jobs/{release.job_id}/")
    assert data["links"]["download_zip"] is None
    # The same request again (a double click) gives the same release.
    again = client.post(_base(project), body, content_type="application/json", headers=token_for(people["admin"]))
    assert again.status_code == 202 and again.json()["id"] == release.pk
    assert DatasetRelease.objects.count() == 1


def test_create_refusals_name_each_input(client, project, people, accepted, token_for):  # noqa: F811
    stored_release(project, version="v1")
    headers = token_for(people["admin"])
    body = {"version": "v1", "formats": ["csv"], "split_config": {"ratios": {"train": 2}}}
    error = assert_error(
        client.post(_base(project), body, content_type="application/json", headers=headers), 400, "validation_error"
    )
    assert set(error["details"]) == {"version", "formats", "split_config"}
    assert "Unknown format csv" in error["details"]["formats"][0]
    assert "at most 1" in error["details"]["split_config"][0]
    # Everything else right, the version label is taken.
    body = {"version": "v1", "formats": ["generic"]}
    error = assert_error(
        client.post(_base(project), body, content_type="application/json", headers=headers), 400, "validation_error"
    )
    assert "already has a release v1 (ready" in error["details"]["version"][0]
    error = assert_error(
        client.post(_base(project), {}, content_type="application/json", headers=headers), 400, "validation_error"
    )
    assert set(error["details"]) == {"version", "formats"}


def test_delete_keeps_the_record_with_who_and_when(
    client, project, people, release, token_for, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(f"{_base(project)}{release.pk}/", headers=token_for(people["admin"]))
    assert response.status_code == 200
    data = response.json()
    assert data["status"] == "deleted" and data["deleted_by"] == people["admin"].username and data["deleted_at"]
    assert not release.archive.storage.exists(release.archive.name)
    error = assert_error(
        client.delete(f"{_base(project)}{release.pk}/", headers=token_for(people["admin"])),
        409,
        "release_not_deletable",
    )
    assert "already deleted" in error["message"]
    assert_error(
        client.get(data["links"]["self"] + "download/", headers=token_for(people["admin"])), 409, "release_not_ready"
    )


def test_list_query_count_does_not_grow_with_releases(
    client, project, people, token_for, django_assert_max_num_queries
):
    job = factories.BackgroundJobFactory(project=project, kind="releases.build", status=JobStatus.RUNNING)
    for i in range(8):
        stored_release(
            project, version=f"v{i}", by=people["admin"], job=job if i % 2 else None, files={"a.json": b"[]"}
        )
    headers = token_for(people["annotator"])
    with django_assert_max_num_queries(6):  # token, project, membership, count, page (+ savepoints)
        body = client.get(f"{_base(project)}?status=ready&ordering=version", headers=headers).json()
    assert [r["version"] for r in body["results"]] == [f"v{i}" for i in range(8)]
    assert body["results"][1]["job"]["status"] == "running"
    assert client.get(f"{_base(project)}?status=deleted", headers=headers).json()["count"] == 0


def test_schema_documents_every_release_operation():
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    base = "/api/projects/{slug}/releases/"
    assert set(paths[base]) == {"get", "post"}
    assert set(paths[base + "{release_id}/"]) == {"get", "delete"}
    download = paths[base + "{release_id}/download/"]["get"]
    assert {"200", "302", "400", "401", "403", "404", "409"} <= set(download["responses"])
    assert set(download["responses"]["200"]["content"]) == {"application/zip", "application/x-tar"}
    assert "get" in paths[base + "{release_id}/statistics/"]


# --- end to end: create through the API, the task builds it, download, compare with the manifest ----------


def _post(client, project, headers, **body):
    return client.post(
        f"/api/projects/{project.slug}/releases/", body, content_type="application/json", headers=headers
    )


def test_create_build_download_and_the_manifest_agrees(client, project, people, accepted, token_for):  # noqa: F811
    headers = token_for(people["admin"])
    response = _post(
        client,
        project,
        headers,
        version="v1",
        formats=["generic"],
        seed=3,
        split_config={"ratios": {"train": 0.5, "test": 0.5}},
    )
    assert response.status_code == 202, response.content
    created = response.json()

    build(created["job"]["id"])  # the worker's task body, run here

    job = BackgroundJob.objects.get(pk=created["job"]["id"])
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.progress_total and job.progress_done == job.progress_total
    release = DatasetRelease.objects.get(pk=created["id"])
    assert release.status == ReleaseStatus.READY and not release.validation_errors

    detail = client.get(created["links"]["self"], headers=token_for(people["annotator"])).json()
    assert detail["status"] == "ready" and detail["links"]["download_zip"]
    listed = {f["path"]: f for f in detail["files"]}

    zipped = client.get(detail["links"]["download_zip"], headers=token_for(people["annotator"]))
    assert zipped.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(zipped.streaming_content))) as zf:
        members = {n.split("/", 1)[1]: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    manifest = json.loads(members["manifest.json"])
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == {
        path: hashlib.sha256(members[path]).hexdigest() for path in members if path != "manifest.json"
    }
    assert {path: hashlib.sha256(data).hexdigest() for path, data in members.items()} == {
        path: f["sha256"] for path, f in listed.items()
    }

    tarred = client.get(detail["links"]["download_tar"], headers=token_for(people["reviser"]))
    with tarfile.open(fileobj=io.BytesIO(b"".join(tarred.streaming_content))) as tar:
        assert {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar} == members

    # The task delivered again leaves the ready release as it is.
    build(created["job"]["id"])
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY


def test_a_failed_build_retried_is_followed_by_its_release(project, people, accepted):  # noqa: F811
    from jobs.services import job_retry
    from releases.services import release_create

    release = release_create(project=project, by=people["admin"], version="v1", formats=["generic"])
    BackgroundJob.objects.filter(pk=release.job_id).update(status=JobStatus.FAILED, error="worker lost")
    DatasetRelease.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED)
    retry = job_retry(job=BackgroundJob.objects.get(pk=release.job_id), user=people["admin"])
    build(retry.pk)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY and release.job_id == retry.pk


def test_admins_import_benchmark_files_as_a_job_whose_result_is_the_report(client, project, people, token_for):
    from releases.tasks import import_benchmark
    from tests.releases.test_imports_jobs import _zip
    from tests.releases.test_imports_longvideobench import RECORD

    project.kind = "longvideobench"
    project.save(update_fields=["kind"])
    factories.VideoFactory(project=project, name="cook", fps=25.0)
    url = f"/api/projects/{project.slug}/benchmark-imports/"
    refused = client.post(
        url, {"format": "longvideobench", "file": _zip([RECORD])}, headers=token_for(people["annotator"])
    )
    assert_error(refused, 403, "permission_denied")
    neither = client.post(url, {"format": "longvideobench"}, headers=token_for(people["admin"]))
    assert_error(neither, 400, "validation_error")

    response = client.post(
        url, {"format": "longvideobench", "file": _zip([RECORD])}, headers=token_for(people["admin"])
    )
    assert response.status_code == 202, response.content
    job = response.json()
    assert job["kind"] == "releases.import_benchmark" and job["status"] == "queued"
    import_benchmark(job["id"])
    done = client.get(job["links"]["self"], headers=token_for(people["admin"])).json()
    assert done["status"] == "succeeded" and done["result"]["ok"] and done["result"]["counts"]["mcqs"] == 1
