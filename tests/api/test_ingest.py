"""Upload, manifest import, reprocess and model steps through the API, with real files and no worker."""

import json
from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from jobs.models import BackgroundJob, JobStatus
from tests import factories
from videos import tasks
from videos.models import Video, VideoStatus
from videos.synthetic import SceneSpec, make_scene_video

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def video_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("api-ingest") / "street.mp4"
    make_scene_video(path, [SceneSpec(1.5), SceneSpec(1.5)], width=160, height=90, fps=25)
    return path


@pytest.fixture
def sent(monkeypatch):
    names = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task", lambda name, args: names.append(name) or type("R", (), {"id": "t1"})()
    )
    return names


def _stored_files() -> list[Path]:
    root = Path(default_storage.location)
    return sorted(p for p in root.rglob("*") if p.is_file())


def _upload(client, project, path: Path, headers=None, **fields):
    with open(path, "rb") as fh:
        return client.post(f"/api/projects/{project.slug}/videos/", {"file": fh, **fields}, headers=headers or {})


# ---------------------------------------------------------------------------------------------
# POST videos/


def test_upload_probes_stores_and_queues_processing(
    client, project, people, token_for, video_file, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(
            client,
            project,
            video_file,
            headers=token_for(people["admin"]),
            name="street_01",
            metadata=json.dumps({"topic_category": "LV", "view_count": 42, "camera": "A"}),
        )
    assert response.status_code == 201, response.content
    body = response.json()
    video = Video.objects.get(project=project)
    assert body["video"]["id"] == video.pk and body["video"]["name"] == "street_01"
    assert body["video"]["status"] == VideoStatus.PROCESSING and body["video"]["clip_count"] == 0
    assert body["video"]["duration_s"] == pytest.approx(3.0, abs=0.1) and body["video"]["width"] == 160
    assert body["video"]["links"]["self"] == f"http://testserver/api/projects/{project.slug}/videos/{video.pk}/"
    assert (video.topic_category, video.view_count, video.metadata) == ("LV", 42, {"camera": "A"})
    assert len(video.sha256) == 64 and default_storage.exists(video.original.name)
    job = BackgroundJob.objects.get(target_id=video.pk)
    assert body["job"]["id"] == job.pk and body["job"]["kind"] == "videos.process" and body["job"]["status"] == "queued"
    assert body["job"]["links"]["self"] == f"http://testserver/api/projects/{project.slug}/jobs/{job.pk}/"
    assert sent == ["videos.process"]

    # The processing job the answer names really makes the clips.
    tasks.process(job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert Video.objects.get(pk=video.pk).clips.count() >= 1


def test_the_same_file_again_is_409_naming_the_existing_video(client, project, people, video_file, sent):
    client.force_login(people["admin"])
    first = _upload(client, project, video_file).json()["video"]
    files = _stored_files()
    error = assert_error(_upload(client, project, video_file), 409, "duplicate_video")
    assert error["details"] == {"existing_video_id": first["id"], "existing_video_name": first["name"]}
    assert "already in this project" in error["message"]
    assert Video.objects.count() == 1 and BackgroundJob.objects.count() == 1
    assert _stored_files() == files


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("empty.mp4", b"", "empty"),
        ("notes.mp4", b"these are my notes, not a video\n" * 100, "notes.mp4"),
        ("picture.mp4", bytes.fromhex("89504e470d0a1a0a") + b"\x00" * 2000, "picture.mp4"),
    ],
    ids=["empty", "text", "png"],
)
def test_a_refused_file_is_422_with_the_reason_and_leaves_nothing(
    client, project, people, tmp_path, sent, name, data, reason
):
    path = tmp_path / name
    path.write_bytes(data)
    client.force_login(people["admin"])
    error = assert_error(_upload(client, project, path), 422, "import_refused")
    assert error["message"].startswith(name) and reason in error["message"]
    assert not Video.objects.exists() and not BackgroundJob.objects.exists()
    assert _stored_files() == [] and not sent


def test_upload_without_a_file_or_with_bad_metadata_is_400(client, project, people, video_file, sent):
    client.force_login(people["admin"])
    error = assert_error(client.post(f"/api/projects/{project.slug}/videos/", {}), 400, "validation_error")
    assert list(error["details"]) == ["file"]
    error = assert_error(_upload(client, project, video_file, metadata="[1, 2]"), 400, "validation_error")
    assert error["details"] == {"metadata": ["Must be a JSON object."]}
    error = assert_error(_upload(client, project, video_file, metadata="{nope"), 400, "validation_error")
    assert list(error["details"]) == ["metadata"]
    assert not Video.objects.exists() and _stored_files() == []


def test_upload_is_for_admins(client, project, people, video_file, sent):
    assert_error(_upload(client, project, video_file), 401, "not_authenticated")
    client.force_login(people["annotator"])
    assert_error(_upload(client, project, video_file), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(_upload(client, project, video_file), 404, "not_found")
    assert not Video.objects.exists() and _stored_files() == [] and not sent


def test_the_list_and_the_upload_share_the_url(client, project, people):
    factories.VideoFactory(project=project, name="listed")
    client.force_login(people["annotator"])
    assert [v["name"] for v in client.get(f"/api/projects/{project.slug}/videos/").json()["results"]] == ["listed"]
    response = client.put(f"/api/projects/{project.slug}/videos/")
    assert_error(response, 405, "method_not_allowed")
    assert {"GET", "POST"} <= {m.strip() for m in response["Allow"].split(",")}


# ---------------------------------------------------------------------------------------------
# POST imports/


def _manifest(client, project, name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.post(f"/api/projects/{project.slug}/imports/", {"file": SimpleUploadedFile(name, data)})


def test_manifest_import_runs_as_a_job_that_imports_each_row(
    client, project, people, settings, video_file, tmp_path, sent, django_capture_on_commit_callbacks
):
    settings.VIDEO_IMPORT_ROOTS = [str(video_file.parent)]
    outside = tmp_path / "outside.mp4"
    outside.write_bytes(video_file.read_bytes())
    manifest = f"path,name,category,view_count\n{video_file},street_a,LV,7\n{outside},street_b,LV,8\n".encode()
    client.force_login(people["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = _manifest(client, project, "batch.csv", manifest)
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["rows"] == 2 and body["job"]["kind"] == "videos.import_manifest" and body["job"]["status"] == "queued"
    assert sent == ["videos.import_manifest"]
    assert not Video.objects.exists()  # nothing happens before the worker runs the job

    tasks.import_manifest(body["job"]["id"])
    job = client.get(body["job"]["links"]["self"]).json()
    assert job["status"] == "succeeded" and job["result"]["imported"] == 1 and job["result"]["refused"] == 1
    [failure] = job["result"]["failures"]
    assert failure["line"] == 3 and "VIDEO_IMPORT_ROOTS" in failure["error"]  # only allowed folders are read
    video = Video.objects.get(project=project)
    assert (video.name, video.topic_category, video.view_count) == ("street_a", "LV", 7)


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("m.csv", b"name,category\nx,y\n", "path or url column"),
        ("m.jsonl", b'{"path": "a.mp4"}\nnot json\n', "line 2"),
        ("m.csv", b"path\n", "no rows"),
        ("m.csv", b"\xff\xfe\x00\xd8" * 50 + bytes(range(256)) * 8, "not a text file"),
    ],
    ids=["no-path-column", "bad-json-line", "no-rows", "binary"],
)
def test_a_bad_manifest_is_400_with_the_reason_and_starts_nothing(client, project, people, sent, name, data, reason):
    client.force_login(people["admin"])
    error = assert_error(_manifest(client, project, name, data), 400, "validation_error")
    assert reason in error["details"]["file"][0]
    assert not BackgroundJob.objects.exists() and not sent


def test_a_second_manifest_while_one_runs_is_409(client, project, people, settings, video_file, sent):
    settings.VIDEO_IMPORT_ROOTS = [str(video_file.parent)]
    client.force_login(people["admin"])
    first = _manifest(client, project, "a.csv", f"path\n{video_file}\n".encode()).json()["job"]
    second = _manifest(client, project, "b.csv", f"path\n{video_file}\n".encode())
    error = assert_error(second, 409, "job_already_running")
    assert error["details"]["job"]["id"] == first["id"]


def test_manifest_import_is_for_admins(client, project, people, sent):
    assert_error(_manifest(client, project, "m.csv", b"path\n/x.mp4\n"), 401, "not_authenticated")
    client.force_login(people["examiner"])
    assert_error(_manifest(client, project, "m.csv", b"path\n/x.mp4\n"), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(_manifest(client, project, "m.csv", b"path\n/x.mp4\n"), 404, "not_found")
    assert not BackgroundJob.objects.exists()


# ---------------------------------------------------------------------------------------------
# POST videos/{id}/reprocess/, transcribe/, complexity/


@pytest.mark.parametrize(
    "step, kind",
    [("reprocess", "videos.process"), ("transcribe", "videos.transcribe"), ("complexity", "videos.complexity")],
)
def test_steps_queue_a_job_and_refuse_a_second_while_it_runs(
    client, project, people, sent, step, kind, django_capture_on_commit_callbacks
):
    video = factories.VideoFactory(project=project, has_audio=True)
    url = f"/api/projects/{project.slug}/videos/{video.pk}/{step}/"
    client.force_login(people["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    assert response.status_code == 202, response.content
    job = BackgroundJob.objects.get(pk=response.json()["id"])
    assert (job.kind, job.target_id, job.status) == (kind, video.pk, JobStatus.QUEUED)
    assert sent == [kind]

    error = assert_error(client.post(url), 409, "job_already_running")
    assert error["details"]["job"]["id"] == job.pk
    assert BackgroundJob.objects.filter(kind=kind).count() == 1

    # Once it has finished, the step can run again.
    BackgroundJob.objects.filter(pk=job.pk).update(status=JobStatus.FAILED)
    assert client.post(url).status_code == 202


def test_reprocess_marks_the_video_processing(client, project, people, sent):
    video = factories.VideoFactory(project=project, status=VideoStatus.FAILED, status_reason="truncated")
    client.force_login(people["admin"])
    assert client.post(f"/api/projects/{project.slug}/videos/{video.pk}/reprocess/").status_code == 202
    video.refresh_from_db()
    assert (video.status, video.status_reason) == (VideoStatus.PROCESSING, "")


def test_transcribe_passes_the_language_and_needs_audio(client, project, people, sent):
    client.force_login(people["admin"])
    talk = factories.VideoFactory(project=project, has_audio=True)
    url = f"/api/projects/{project.slug}/videos/{talk.pk}/transcribe/"
    response = client.post(url, {"language": "zh"}, content_type="application/json")
    assert response.status_code == 202
    assert BackgroundJob.objects.get(pk=response.json()["id"]).params == {"language": "zh"}

    silent = factories.VideoFactory(project=project, has_audio=False)
    error = assert_error(client.post(f"/api/projects/{project.slug}/videos/{silent.pk}/transcribe/"), 422, "no_audio")
    assert silent.name in error["message"]
    assert not BackgroundJob.objects.filter(target_id=silent.pk).exists()


@pytest.mark.parametrize("step", ["reprocess", "transcribe", "complexity"])
def test_steps_are_for_admins_of_the_videos_project(client, project, people, sent, step):
    video = factories.VideoFactory(project=project, has_audio=True)
    foreign = factories.VideoFactory(has_audio=True)
    url = f"/api/projects/{project.slug}/videos/{video.pk}/{step}/"
    assert_error(client.post(url), 401, "not_authenticated")
    client.force_login(people["annotator"])
    assert_error(client.post(url), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(client.post(url), 404, "not_found")
    client.force_login(people["admin"])
    wrong_project = client.post(f"/api/projects/{project.slug}/videos/{foreign.pk}/{step}/")
    missing = client.post(f"/api/projects/{project.slug}/videos/999999/{step}/")
    assert assert_error(wrong_project, 404, "not_found") == assert_error(missing, 404, "not_found")
    assert not BackgroundJob.objects.exists() and not sent
