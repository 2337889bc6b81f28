"""SVBench's open questions: the streaming protocol (a chain's turns as one conversation), answers
judged on SVBench's dimensions, scores per question and per chain; a resumed run replays the turns
already answered instead of asking them again."""

import re

import pytest

from evaluations.models import Outcome, Prediction, Protocol, RunStatus
from evaluations.runs import _Media, evaluation_resume, evaluation_start
from evaluations.tasks import evaluation_run
from releases.build import release_build
from tests.fakes.openai_server import Reply
from tests.releases.release_data import build_small_project

pytestmark = pytest.mark.django_db

FAKE_FRAME = b"\xff\xd8\xff\xe0fake-jpeg"
ANSWERED = re.compile(r"The model's answer: (.*)")
REFERENCE = re.compile(r"Reference answer: (.*)")


def _last_user_text(request) -> str:
    content = request.messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")


def responder(request):
    if request.schema:  # the judge: 80 when the answer is the reference, else 20
        same = ANSWERED.search(request.text).group(1).strip() == REFERENCE.search(request.text).group(1).strip()
        score = 80 if same else 20
        dims = [
            "semantic_accuracy",
            "contextual_coherence",
            "logical_consistency",
            "temporal_understanding",
            "informational_completeness",
            "overall",
        ]
        return Reply.json({"scores": dict.fromkeys(dims, score)})
    question = _last_user_text(request).splitlines()[0]
    return Reply.text("No idea" if question == "Why?" else f"Answer to: {question}")


@pytest.fixture
def release(settings, monkeypatch):
    settings.LLM_CONCURRENCY = 1
    settings.LLM_MAX_ATTEMPTS = 2
    # The small project's videos are placeholders: frames come from here (real sampling: test_runs.py).
    monkeypatch.setattr(_Media, "frames_until", lambda self, name, end: [(0.5, FAKE_FRAME)])
    small = build_small_project(kind="svbench")
    built = release_build(release=small.release(formats=["svbench"], filters={"include_media": False}))
    assert built.status == "ready", built.validation_errors
    return built


def _run(release, **kwargs):
    run = evaluation_start(project=release.project, release=release, model="sv-model", frames=2, **kwargs)
    evaluation_run(run.job_id)
    run.refresh_from_db()
    return run


def test_streaming_conversations_judged_per_question_and_per_chain(release, fake_openai):
    fake_openai.set_default(responder)
    run = _run(release)
    assert run.file == "svbench/Dialogue" and run.protocol == Protocol.SV_STREAMING
    assert run.status == RunStatus.FINISHED, run.summary
    s = run.summary
    assert (s["items"], s["scored"], s["failed"]) == (9, 9, 0)
    assert s["accuracy"] == pytest.approx((8 * 0.8 + 0.2) / 9)
    # Chains: alpha#0 (0.8, 0.8, 0.2), alpha#1, alpha#2 and beta#0 all 0.8.
    assert s["per_chain"]["accuracy"] == pytest.approx((0.6 + 0.8 * 3) / 4)
    assert s["dimensions"]["semantic_accuracy"]["accuracy"] == pytest.approx(s["accuracy"])
    why = Prediction.objects.get(run=run, record_id="alpha#0.2")
    assert (why.outcome, why.score, why.reply) == (Outcome.ANSWERED, 0.2, "No idea")
    assert why.judge_call_id and why.call_id and why.dimensions["overall"] == 20

    # The third turn of chain alpha#0 is one conversation: frames and turn 1, the model's reply, turn 2 …
    third = next(r for r in fake_openai.requests("chat") if not r.schema and _last_user_text(r).startswith("Why?"))
    roles = [m["role"] for m in third.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert third.messages[1]["content"] == "Answer to: Who enters the kitchen?"
    assert len(third.images) == 1  # the frames go with the first turn only


def test_a_resumed_conversation_replays_the_answered_turns(release, fake_openai):
    fake_openai.set_default(responder)
    fake_openai.always("What do they carry?", Reply.status(500))
    run = _run(release)
    assert run.status == RunStatus.INCOMPLETE
    failed = set(Prediction.objects.filter(run=run, outcome=Outcome.FAILED).values_list("record_id", flat=True))
    assert failed == {"alpha#0.1", "alpha#0.2"}  # the conversation cannot go on without turn 2's answer

    fake_openai.reset()
    fake_openai.set_default(responder)
    evaluation_resume(run=run)
    evaluation_run(run.job_id)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run.summary["scored"] == 9
    asked = [_last_user_text(r).splitlines()[0] for r in fake_openai.requests("chat") if not r.schema]
    assert asked == ["What do they carry?", "Why?"]  # turn 1 was replayed from its stored reply


def test_single_question_protocol_and_text_only_baseline(release, fake_openai):
    fake_openai.set_default(responder)
    single = _run(release, protocol=Protocol.SV_SINGLE)
    assert all(len(r.messages) == 1 for r in fake_openai.requests("chat") if not r.schema)
    assert single.summary["scored"] == 9
    blind = _run(release, protocol=Protocol.TEXT_ONLY)
    assert blind.summary["scored"] == 9


def test_the_run_page_shows_per_chain_and_the_dimensions(release, fake_openai, client):
    from django.urls import reverse

    from tests import factories

    fake_openai.set_default(responder)
    run = _run(release)
    admin = factories.UserFactory()
    factories.MembershipFactory(project=release.project, user=admin, role="admin")
    client.force_login(admin)
    page = client.get(reverse("evaluations:run", args=[release.project.slug, run.pk])).content.decode()
    assert "Per chain" in page and "semantic_accuracy" in page
    why = Prediction.objects.get(run=run, record_id="alpha#0.2")
    detail = client.get(
        reverse("evaluations:prediction", args=[release.project.slug, run.pk, why.index])
    ).content.decode()
    assert "Judge call" in detail and "overall 20" in detail
