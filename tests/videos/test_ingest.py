"""Import → process → clips → curation, through the upload view and the task body."""

from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from jobs.models import BackgroundJob, JobStatus
from videos import tasks
from videos.models import Clip, CurationStatus, Video, VideoStatus
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db

# Five distinct scenes, the third shorter than the 2 s merge limit.
SCENES = [SceneSpec(3.0), SceneSpec(2.5), SceneSpec(1.2), SceneSpec(3.0), SceneSpec(2.3)]


@pytest.fixture(scope="module")
def scene_video(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ingest") / "kitchen.mp4"
    make_scene_video(path, SCENES, width=320, height=180, fps=25)
    return path


def _upload(client, project, path: Path, name: str | None = None):
    with open(path, "rb") as fh:
        return client.post(
            reverse("videos:upload", args=[project.slug]),
            {"file": fh} if name is None else {"file": (name, fh)},
        )


def test_upload_probes_stores_and_queues_processing(
    client, people, project, scene_video, django_capture_on_commit_callbacks, monkeypatch
):
    sent = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task", lambda name, args: sent.append(name) or type("R", (), {"id": "x"})()
    )
    client.force_login(people["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, project, scene_video)
    assert response.status_code == 201, response.content
    video = Video.objects.get(project=project)
    assert video.name == "kitchen" and video.status == VideoStatus.PROCESSING
    assert video.duration_s == pytest.approx(12.0, abs=0.1) and video.width == 320 and video.has_audio
    assert len(video.sha256) == 64 and default_storage.exists(video.original.name)
    assert sent == ["videos.process"]

    # The same file again is recognised and refused, and nothing new is stored.
    files_before = sorted(Path(default_storage.location).rglob("*"))
    response = _upload(client, project, scene_video)
    assert response.status_code == 409
    assert "already in this project" in response.json()["error"]
    assert Video.objects.count() == 1 and sorted(Path(default_storage.location).rglob("*")) == files_before


def test_only_admins_upload(client, people, project, scene_video):
    client.force_login(people["annotator"])
    assert _upload(client, project, scene_video).status_code == 403
    client.force_login(people["outsider"])
    assert _upload(client, project, scene_video).status_code == 404
    assert not Video.objects.exists()


def test_processing_makes_scenes_clips_poster_and_curates(
    people, project, scene_video, django_capture_on_commit_callbacks, monkeypatch
):
    from videos.ingest import video_import

    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())
    project.min_duration_s = 60  # SVBench's rule: this 12 s video must be rejected, with the reason
    project.save()
    video = video_import(project=project, source=scene_video, filename="kitchen.mp4", user=people["admin"])
    job = BackgroundJob.objects.get(target_id=video.pk)
    tasks.process(job.pk)

    job.refresh_from_db()
    video.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert video.status == VideoStatus.READY and video.poster
    assert len(video.scenes) == 5
    # The 1.2 s scene merged into a neighbour: four clips, padded by 0.5 s, within the video.
    clips = list(Clip.objects.filter(video=video).order_by("index"))
    assert len(clips) == 4
    assert clips[0].start_s == 0.0 and clips[-1].end_s == pytest.approx(video.duration_s, abs=1e-3)
    for a, b in zip(clips, clips[1:], strict=False):
        assert a.end_s - b.start_s == pytest.approx(1.0, abs=1e-3)
    assert video.curation_status == CurationStatus.REJECTED
    reasons = {d.rule: d for d in video.curation_decisions.all()}
    assert not reasons["duration"].passed and "< 60 s" in reasons["duration"].reason
    assert reasons["scene_count"].passed  # 5 scenes, within 5–15
    assert not reasons["mean_scene"].passed and "mean scene 2.4 s" in reasons["mean_scene"].reason

    # Running the task again (a redelivery, a retry) changes nothing.
    tasks.process(job.pk)
    assert Clip.objects.filter(video=video).count() == 4


def test_bad_files_are_refused_with_a_reason_and_leave_nothing(client, people, project, tmp_path):
    client.force_login(people["admin"])
    cases = {
        "empty.mp4": b"",
        "notes.mp4": b"these are my notes, not a video\n" * 100,
        "picture.mp4": bytes.fromhex("89504e470d0a1a0a") + b"\x00" * 2000,
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        response = _upload(client, project, path)
        assert response.status_code == 422, (name, response.content)
        assert response.json()["error"].startswith(name)
    assert not Video.objects.exists()
    assert not BackgroundJob.objects.exists()
    assert not any(p.is_file() for p in Path(default_storage.location).rglob("*"))


def test_a_video_browsers_cannot_play_gets_a_proxy_and_its_scenes(people, project, tmp_path, monkeypatch):
    from videos.ingest import video_import
    from videos.probe import probe_file

    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())
    path = tmp_path / "camera.webm"
    cuts = make_scene_video(path, [SceneSpec(2.5), SceneSpec(2.5), SceneSpec(2.5)], width=320, height=180)
    video = video_import(project=project, source=path, filename="camera.webm")
    job = BackgroundJob.objects.get(target_id=video.pk)
    tasks.process(job.pk)
    video.refresh_from_db()
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert video.video_codec == "vp9" and video.proxy  # the original is kept for releases
    proxy = probe_file(default_storage.path(video.proxy.name))
    assert (proxy.video_codec, proxy.audio_codec, proxy.container) == ("h264", "aac", "mp4")
    assert [round(s, 1) for s, _ in video.scenes[1:]] == [round(c, 1) for c in cuts]
    assert "proxy" in job.message
