"""MVPBench's and LiViBench's protocols as the model receives them, and a cancelled run."""

import pytest

from evaluations.models import Prediction, Protocol, RunStatus
from evaluations.runs import _Media, evaluation_cancel, evaluation_resume, evaluation_start
from evaluations.tasks import evaluation_run
from releases.build import release_build
from tests.fakes.openai_server import Reply
from tests.releases.release_data import build_small_project

pytestmark = pytest.mark.django_db

FRAME = b"\xff\xd8\xff\xe0frame"


@pytest.fixture
def small(settings, monkeypatch):
    settings.LLM_CONCURRENCY = 1
    settings.LLM_MAX_ATTEMPTS = 2
    # Placeholder videos: each video's frames are one fake JPEG named after it (real sampling: test_runs.py).
    monkeypatch.setattr(_Media, "video_frames", lambda self, name: [(0.5, FRAME + name.encode())])
    return build_small_project()


def _texts(request) -> list[str]:
    content = request.messages[-1]["content"]
    return [p["text"] for p in content if p.get("type") == "text"] if isinstance(content, list) else [content]


def test_mvpbench_videos_in_order_each_with_its_frames(small, fake_openai):
    release = release_build(release=small.release(formats=["mvpbench"], filters={"include_media": False}))
    fake_openai.set_default(lambda request: Reply.text("2"))
    run = evaluation_start(project=small.project, release=release, model="m", frames=1)
    assert run.protocol == Protocol.MULTI_VIDEO
    evaluation_run(run.job_id)
    run.refresh_from_db()
    (request,) = fake_openai.requests("chat")
    texts = _texts(request)
    assert texts[:4] == ["Video 1:", "Video 2:", "Video 3:", "Video 4:"]
    # The reference first, then the candidates, each labelled and followed by its own frames.
    assert [image[len(FRAME) :] for image in request.images] == [b"gamma.mp4", b"alpha.mp4", b"beta.mp4", b"delta.mp4"]
    assert "Which candidate continues the reference? Video 1 Video 2 Video 3 Video 4" in texts[-1]
    assert run.summary["accuracy"] == 1.0  # option "2" is the key


def test_livibench_frames_speech_and_comments(small, fake_openai):
    release = release_build(release=small.release(formats=["livibench"], filters={"include_media": False}))
    fake_openai.set_default(lambda request: Reply.text("B"))
    run = evaluation_start(project=small.project, release=release, model="m", frames=1)
    assert run.protocol == Protocol.LIVE
    evaluation_run(run.job_id)
    run.refresh_from_db()
    (request,) = fake_openai.requests("chat")
    text = "\n".join(_texts(request))
    assert "Speech:\n[1 s] Welcome to the stream!" in text
    assert "Real-time comments:\n[1.5 s] hi 👋\n[2 s] first!\n[9.2 s] 生日快乐" in text
    assert len(request.images) == 1
    prediction = Prediction.objects.get(run=run)
    assert (prediction.chosen_index, prediction.score) == (1, 0.0)


def test_a_cancelled_run_keeps_its_answers_and_resumes(small, fake_openai):
    release = release_build(release=small.release(formats=["longvideobench"], filters={"include_media": False}))
    fake_openai.set_default(lambda request: Reply.text("A"))
    run = evaluation_start(project=small.project, release=release, model="m", frames=1, protocol=Protocol.FRAMES)
    evaluation_cancel(run=run)
    assert run.status == RunStatus.CANCELLED
    evaluation_run(run.job_id)  # the job starts, sees the cancel and asks nothing
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and not fake_openai.requests("chat")

    evaluation_resume(run=run)
    evaluation_run(run.job_id)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run.summary["scored"] == run.summary["items"] > 0
