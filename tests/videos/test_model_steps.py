"""Speech recognition and the LLM complexity score, against the fake OpenAI-compatible server."""

from pathlib import Path

import pytest
from django.urls import reverse

from jobs.models import BackgroundJob, JobStatus
from llm.models import LLMCall
from tests import factories
from tests.fakes.openai_server import Reply
from videos import tasks
from videos.ingest import video_import
from videos.models import CueSource, CurationStatus, SubtitleCue
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())


@pytest.fixture(scope="module")
def clip_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("steps") / "talk.mp4"
    make_scene_video(path, [SceneSpec(2.0), SceneSpec(2.0)], width=160, height=90)
    return path


def _run(client, project, video, step):
    with_db = client.post(reverse("videos:run_step", args=[project.slug, video.pk, step]))
    assert with_db.status_code == 302
    job = BackgroundJob.objects.get(kind=f"videos.{step}", target_id=video.pk)
    getattr(tasks, step)(job.pk)
    job.refresh_from_db()
    return job


def test_transcription_fills_the_cue_table(client, people, project, clip_path, fake_openai):
    fake_openai.script("", Reply.transcript([(0.0, 1.5, "Hello there."), (1.5, 3.5, "Now we chop the onions.")]))
    video = video_import(project=project, source=clip_path, filename="talk.mp4", process=False)
    client.force_login(people["admin"])
    job = _run(client, project, video, "transcribe")
    assert job.status == JobStatus.SUCCEEDED, job.error
    cues = list(
        SubtitleCue.objects.filter(video=video).order_by("start_s").values_list("start_s", "end_s", "text", "source")
    )
    assert cues == [(0.0, 1.5, "Hello there.", CueSource.ASR), (1.5, 3.5, "Now we chop the onions.", CueSource.ASR)]
    assert LLMCall.objects.get(step="transcribe").outcome == "ok"


def test_transcription_failure_is_a_failed_job_with_the_reason(client, people, project, clip_path, fake_openai):
    fake_openai.script("", Reply.status(500), repeat=True)
    video = video_import(project=project, source=clip_path, filename="talk.mp4", process=False)
    client.force_login(people["admin"])
    job = _run(client, project, video, "transcribe")
    assert job.status == JobStatus.FAILED and "500" in job.error
    assert not SubtitleCue.objects.filter(video=video).exists()


def test_complexity_score_gates_curation_and_is_traceable(client, people, clip_path, fake_openai):
    project = factories.ProjectFactory(kind="livibench")
    people = factories.people_for(project)
    fake_openai.script("", Reply.json({"score": 2, "reason": "A static screen with one idle person."}))
    video = video_import(project=project, source=clip_path, filename="talk.mp4", process=False)
    client.force_login(people["admin"])
    job = _run(client, project, video, "complexity")
    assert job.status == JobStatus.SUCCEEDED, job.error
    video.refresh_from_db()
    assert video.complexity_score == 2 and video.curation_status == CurationStatus.REJECTED
    decision = video.curation_decisions.get(rule="complexity")
    assert not decision.passed and "2 < 3" in decision.reason
    call = LLMCall.objects.get(pk=video.metadata["complexity"]["llm_call"])
    assert call.step == "complexity" and call.request["images"]["count"] == project.frames_per_clip
    assert len(fake_openai.requests()[0].images) == project.frames_per_clip


def test_model_steps_are_for_admins(client, people, project, clip_path):
    video = video_import(project=project, source=clip_path, filename="talk.mp4", process=False)
    client.force_login(people["annotator"])
    assert client.post(reverse("videos:run_step", args=[project.slug, video.pk, "transcribe"])).status_code == 403
    client.force_login(people["admin"])
    assert client.post(reverse("videos:run_step", args=[project.slug, video.pk, "nonsense"])).status_code == 404


NO_ENDPOINT = "No model endpoint is set for this project: a project admin can set one under Settings → Model endpoint."


@pytest.mark.parametrize("step", ["transcribe", "complexity"])
def test_a_model_step_with_no_endpoint_is_refused_before_any_job_exists(client, project, people, settings, step):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    video = factories.VideoFactory(project=project, has_audio=True, status="ready")
    client.force_login(people["admin"])
    before = BackgroundJob.objects.count()

    page = client.post(reverse("videos:run_step", args=[project.slug, video.pk, step]), follow=True)
    assert [str(m) for m in page.context["messages"]] == [NO_ENDPOINT]
    many = client.post(reverse("videos:run_step_bulk", args=[project.slug, step]), follow=True)
    assert [str(m) for m in many.context["messages"]] == [NO_ENDPOINT]
    api = client.post(f"/api/projects/{project.slug}/videos/{video.pk}/{step}/", {}, content_type="application/json")
    assert api.status_code == 409
    assert api.json()["error"]["code"] == "no_model_endpoint" and api.json()["error"]["message"] == NO_ENDPOINT

    assert BackgroundJob.objects.count() == before
