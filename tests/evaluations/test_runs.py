"""Evaluation runs against the fake OpenAI server scripted as models with known answers.

Six LongVideoBench questions over two real videos. Model A answers two right, one wrong, one in words
the rules cannot read (the extractor model reads it: right), one wrong and one unreadable even to
the extractor (scored wrong). The accuracy, the per-category table, the clustered standard errors and
the paired test against model B are checked against numbers computed by hand (tests/evaluations/world.py).
"""

import json
import math

import pytest

from evaluations.models import EvaluationRun, Outcome, Prediction, Protocol, RunStatus
from evaluations.runs import evaluation_resume, evaluation_start
from evaluations.selectors import compare_runs, leaderboard
from evaluations.tasks import evaluation_run
from jobs.models import JobStatus
from tests.evaluations.world import A_SE, E2O_SE, O2E_SE, responder
from tests.fakes.openai_server import Reply

pytestmark = pytest.mark.django_db


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


def test_the_command_runs_shows_and_compares(release, fake_openai, capsys):
    from django.core.management import call_command

    fake_openai.set_default(responder)
    call_command("evaluate", "run", release.project.slug, "v1", "--model", "model-a", "--frames", "2")
    call_command("evaluate", "run", release.project.slug, "v1", "--model", "model-b", "--frames", "2")
    out = capsys.readouterr().out
    assert "accuracy 0.5000, SE 0.1179 clustered over 2 videos" in out
    a, b = EvaluationRun.objects.order_by("pk")
    call_command("evaluate", "compare", str(a.pk), str(b.pk))
    assert "McNemar p = 1 (1 vs 1)" in capsys.readouterr().out
    calls = len(fake_openai.requests("chat"))
    call_command("evaluate", "resume", str(a.pk))
    assert len(fake_openai.requests("chat")) == calls
    capsys.readouterr()
    call_command("evaluate", "show", str(a.pk), "--json")
    shown = json.loads(capsys.readouterr().out)
    assert shown["accuracy"] == 0.5 and shown["status"] == "finished"
