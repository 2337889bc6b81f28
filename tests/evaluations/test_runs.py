"""Evaluation runs against the fake OpenAI server scripted as models with known answers.

Six LongVideoBench questions over two real videos. Model A answers two right, one wrong, one in words
the rules cannot read (the extractor model reads it: right), one wrong and one unreadable even to
the extractor (scored wrong). The accuracy, the per-category table, the clustered standard errors and
the paired test against model B are checked against numbers computed by hand below.
"""

import json
import math
import re

import pytest

from evaluations.models import EvaluationRun, Outcome, Prediction, Protocol, RunStatus
from evaluations.runs import evaluation_resume, evaluation_start
from evaluations.selectors import compare_runs, leaderboard
from evaluations.tasks import evaluation_run
from jobs.models import JobStatus
from releases.build import release_build
from releases.services import release_create
from tests import factories
from tests.fakes.openai_server import Reply
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db

# (question, video, category, key); the options are the same four colours everywhere.
QUESTIONS = [
    ("Q1 What colour is the first card?", "v1", "E2O", 0),
    ("Q2 What colour is the second card?", "v1", "E2O", 1),
    ("Q3 What colour is the lamp?", "v1", "O2E", 2),
    ("Q4 What colour is the cup?", "v2", "E2O", 3),
    ("Q5 What colour is the wall?", "v2", "O2E", 0),
    ("Q6 What colour is the floor?", "v2", "O2E", 1),
]
OPTIONS = ["red", "green", "blue", "white"]
LETTERS = "ABCD"
# What each model replies per question: a letter, or words (then the extractor's verdict).
REPLIES = {
    "model-a": {
        "Q1": "A",
        "Q2": "C",
        "Q3": ("I would pick the third one.", "C"),
        "Q4": "D",
        "Q5": "B",
        "Q6": ("Hard to say.", "none"),
    },
    "model-b": {"Q1": "B", "Q2": "C", "Q3": "C", "Q4": "D", "Q5": "A", "Q6": "A"},
}
# By hand: A scores 1,0,1 | 1,0,0 (v1 | v2); mean 1/2; the per-video sums of deviations are +1/2 and −1/2, so
# the clustered SE is sqrt(1/4 + 1/4) / 6.
A_SE = math.sqrt(0.5) / 6
# E2O: Q1, Q2 (v1), Q4 (v2) = 1, 0, 1: mean 2/3, sums −1/3 (v1) and +1/3 (v2): SE sqrt(2/9) / 3.
E2O_SE = math.sqrt(2 / 9) / 3
# O2E: Q3 (v1), Q5, Q6 (v2) = 1, 0, 0: mean 1/3, sums +2/3 and −2/3: SE sqrt(8/9) / 3.
O2E_SE = math.sqrt(8 / 9) / 3
# B scores 0,0,1 | 1,1,0. A − B = 1,0,0 | 0,−1,0: A alone right on Q1, B alone on Q5 → McNemar p = 1.
QUESTION = re.compile(r"Question: (Q\d)")


def responder(request):
    text = request.text
    if request.schema:  # the extractor: which option did the reply choose?
        for model in REPLIES.values():
            for reply in model.values():
                if isinstance(reply, tuple) and reply[0] in text:
                    return Reply.json({"choice": reply[1]})
        return Reply.json({"choice": "none"})
    reply = REPLIES[request.model][QUESTION.search(text).group(1)]
    return Reply.text(reply[0] if isinstance(reply, tuple) else reply)


@pytest.fixture
def release(tmp_path, settings):
    settings.LLM_CONCURRENCY = 1
    settings.LLM_MAX_ATTEMPTS = 2
    project = factories.ProjectFactory(kind="longvideobench", slug="evalproj")
    admin = factories.UserFactory()
    factories.MembershipFactory(project=project, user=admin, role="admin")
    videos = {}
    for name, scenes in (("v1", [SceneSpec(1.0), SceneSpec(1.0)]), ("v2", [SceneSpec(0.5), SceneSpec(1.5)])):
        path = tmp_path / f"{name}.mp4"
        make_scene_video(path, scenes, width=160, height=90, fps=25, audio=False)
        videos[name] = factories.video_from_file(
            project, path, name=name, duration_s=2.0, fps=25.0, frame_count=50, topic_category="LC"
        )
        factories.SubtitleCueFactory(video=videos[name], start_s=0.2, end_s=0.8, text=f"{name} subtitle", source="srt")
    for question, video, category, key in QUESTIONS:
        mcq = factories.MCQFactory(
            project=project,
            question=question,
            referring_query="",
            referring_start=None,
            referring_end=None,
            question_wo_referring_query=question,
            options=OPTIONS,
            correct_index=key,
            category=category,
            status="accepted",
            video=videos[video],
        )
        mcq.moments.create(video=videos[video], time_s=0.5, frame_index=12, order=0)
    built = release_build(
        release=release_create(
            project=project, by=admin, version="v1", formats=["longvideobench"], filters={"include_media": False}
        )
    )
    assert built.status == "ready", built.validation_errors
    return built


def _evaluate(release, model, **kwargs) -> EvaluationRun:
    run = evaluation_start(project=release.project, release=release, model=model, frames=2, **kwargs)
    evaluation_run(run.job_id)
    run.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED, run.job.error
    return run


def test_accuracy_categories_clustered_errors_and_paired_test_equal_the_hand_computation(release, fake_openai):
    fake_openai.set_default(responder)
    a = _evaluate(release, "model-a")
    assert a.protocol == Protocol.FRAMES_SUBTITLES and a.file == "longvideobench/lvb_test.json"
    assert a.status == RunStatus.FINISHED
    s = a.summary
    assert (s["items"], s["scored"], s["answered"], s["unreadable"], s["failed"]) == (6, 6, 5, 1, 0)
    assert s["accuracy"] == pytest.approx(0.5)
    assert s["se"] == pytest.approx(A_SE)
    assert s["clusters"] == 2
    assert s["interval_95"] == pytest.approx([0.5 - 1.959963984540054 * A_SE, 0.5 + 1.959963984540054 * A_SE])
    categories = {row["key"]: row for row in s["groups"]["category"]}
    assert categories["E2O"]["accuracy"] == pytest.approx(2 / 3) and categories["E2O"]["se"] == pytest.approx(E2O_SE)
    assert categories["O2E"]["accuracy"] == pytest.approx(1 / 3) and categories["O2E"]["se"] == pytest.approx(O2E_SE)

    # The extractor stepped in for Q3 and Q6, each call on record; Q6 is unreadable and scored wrong.
    q3 = Prediction.objects.get(run=a, record_id="v1_2")
    assert (q3.outcome, q3.method, q3.score, q3.chosen_index) == (Outcome.ANSWERED, "llm", 1.0, 2)
    assert q3.extract_call_id and q3.call_id and q3.mcq.question.startswith("Q3")
    q6 = Prediction.objects.get(run=a, record_id="v2_2")
    assert (q6.outcome, q6.score) == (Outcome.UNREADABLE, 0.0)

    # The prompt: two frames, each after the subtitle of its time, then the question.
    first = next(r for r in fake_openai.requests("chat") if "Q1" in r.text and not r.schema)
    kinds = [p["type"] for p in first.messages[0]["content"]]
    assert kinds == ["text", "image_url", "image_url", "text"]
    assert first.messages[0]["content"][0]["text"] == "v1 subtitle"

    b = _evaluate(release, "model-b")
    assert b.summary["accuracy"] == pytest.approx(0.5)
    result = compare_runs(a, b, resamples=500)
    assert result.common == 6
    assert result.difference["accuracy"] == pytest.approx(0.0)
    # A − B = 1,0,0 | 0,−1,0: per-video sums +1 and −1 about mean 0: SE sqrt(2) / 6.
    assert result.difference["se"] == pytest.approx(math.sqrt(2) / 6)
    assert result.mcnemar == {"a_only": 1, "b_only": 1, "p_value": 1.0}
    assert result.needed_for_2_points is not None and result.needed_for_2_points > 6
    assert [r.pk for r in leaderboard(project=release.project)] == [a.pk, b.pk]


def test_a_second_start_makes_no_call_and_failures_are_asked_again(release, fake_openai):
    fake_openai.set_default(responder)
    fake_openai.always("Q4", Reply.status(500))
    run = _evaluate(release, "model-a")
    assert run.status == RunStatus.INCOMPLETE and run.summary["failed"] == 1 and run.summary["scored"] == 5
    failed = Prediction.objects.get(run=run, outcome=Outcome.FAILED)
    assert failed.score is None and "HTTP 500" in failed.reason

    fake_openai.reset()
    fake_openai.set_default(responder)
    evaluation_resume(run=run)
    evaluation_run(run.job_id)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run.summary["scored"] == 6
    assert len([r for r in fake_openai.requests("chat") if not r.schema]) == 1  # only Q4 again
    assert Prediction.objects.filter(run=run).count() == 6

    evaluation_resume(run=run)
    evaluation_run(run.job_id)
    assert len([r for r in fake_openai.requests("chat") if not r.schema]) == 1  # finished: no call


def test_text_only_baseline_and_refusals(release, fake_openai):
    from evaluations.runs import EvaluationRefused

    fake_openai.set_default(responder)
    run = _evaluate(release, "model-b", protocol=Protocol.TEXT_ONLY)
    assert all(not r.images for r in fake_openai.requests("chat"))
    assert run.summary["accuracy"] == pytest.approx(0.5)
    with pytest.raises(EvaluationRefused, match="Name the model"):
        evaluation_start(project=release.project, release=release, model=" ")
    with pytest.raises(EvaluationRefused, match="multi-video"):
        evaluation_start(project=release.project, release=release, model="m", protocol=Protocol.MULTI_VIDEO)
    assert json.dumps(run.summary)  # stored as JSON
