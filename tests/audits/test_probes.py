"""Shortcut probes against the fake OpenAI server scripted as a model that knows some answers.

The fake model answers a known subset of the questions correctly from the text alone and guesses
"A" on the rest. The test's own record of what the model replied and whether that was the key (by
the option's text, not by any index the app computed) gives the expected per-item scores, the
intervals and the gate's decision; the probe job must arrive at exactly those.
"""

from __future__ import annotations

import re

import pytest

from annotator.models import ItemStatus, ReviewEvent
from audits.gate import release_gate
from audits.models import Probe, ProbeAnswer, ProbeRun
from audits.probes import probe_plan, shuffled_order
from audits.selectors import probe_summary
from audits.services import ProbeRunRefused, audit_send_to_review, probe_run_start
from audits.tasks import probe_run
from estimates.proportions import wilson_interval
from jobs.models import JobStatus
from llm.endpoints import NoModelEndpoint
from llm.models import LLMCall
from tests import factories
from tests.fakes.openai_server import Reply

pytestmark = pytest.mark.django_db

ITEMS = 24
KNOWN = set(range(0, ITEMS, 2))  # item numbers the fake model answers from the text alone
OPTION_LINE = re.compile(r"^([A-E])\. (.*)$", re.MULTILINE)
QUESTION = re.compile(r"Question: (.*)")


@pytest.fixture
def project(settings):
    settings.LLM_CONCURRENCY = 1  # the items live in the test's transaction: one thread sees them
    settings.LLM_MAX_ATTEMPTS = 2
    return factories.ProjectFactory(kind="longvideobench", probe_shuffles=3)


def _items(project, count=ITEMS):
    video = factories.VideoFactory(project=project)
    items = []
    for n in range(count):
        options = [f"opt{n}-{c}" for c in ("red", "green", "blue", "white")]
        items.append(
            factories.MCQFactory(
                project=project,
                question=f"Item {n}: what colour is the thing?",
                referring_query="",
                referring_start=None,
                referring_end=None,
                options=options,
                correct_index=n % 4,
                status=ItemStatus.EXAMINING,
                category="E2O" if n < ITEMS // 2 else "O2E",
                video=video,
            )
        )
    return items


class KnowingModel:
    """Answers the known items' keys, "A" on the rest; remembers each reply's truth by option text."""

    def __init__(self, items):
        self.key_text = {item.question: item.options[item.correct_index] for item in items}
        self.known = {items[n].question for n in KNOWN if n < len(items)}
        self.tally: dict[str, list[bool]] = {}

    def __call__(self, request):
        text = request.text
        question = QUESTION.search(text).group(1)
        shown = dict(OPTION_LINE.findall(text))
        key = self.key_text[question]
        letter = next(le for le, option in shown.items() if option == key) if question in self.known else "A"
        self.tally.setdefault(question, []).append(shown[letter] == key)
        return Reply.text(f"Answer: {letter}")


def _run(project, **kwargs) -> ProbeRun:
    run = probe_run_start(project=project, probes=[Probe.TEXT], **kwargs)
    probe_run(run.job_id)
    run.refresh_from_db()
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED, run.job.error
    return run


def test_scores_intervals_and_gate_are_exactly_what_the_model_did(project, fake_openai):
    items = _items(project)
    model = KnowingModel(items)
    fake_openai.set_default(model)

    run = _run(project)

    assert run.counts == {
        "items": ITEMS,
        "calls": ITEMS * 3,
        "reused": 0,
        "asked": ITEMS * 3,
        "answered": ITEMS * 3,
        "failed": 0,
        "skipped": 0,
    }
    assert len(fake_openai.requests("chat")) == ITEMS * 3
    summary = probe_summary(project=project)
    for item in items:
        truth = model.tally[item.question]
        score = summary.items[item.pk]
        assert (score.answered, score.correct) == (3, sum(truth)), item.question
        assert score.probes == ({"text"} if any(truth) else set())
    # Known items are always right, whatever order their options were shown in.
    assert all(summary.items[items[n].pk].score == 1.0 for n in KNOWN)

    correct = sum(sum(t) for t in model.tally.values())
    blind = summary.blind
    assert (blind.answered, blind.correct, blind.failed) == (ITEMS * 3, correct, 0)
    assert blind.chance == pytest.approx(0.25)
    assert blind.interval == pytest.approx(wilson_interval(correct, ITEMS * 3))
    assert blind.above_chance  # half the items known: far above 25 %

    per_category = {a.key: a for a in summary.by_category["text"]}
    for category, numbers in (("E2O", range(ITEMS // 2)), ("O2E", range(ITEMS // 2, ITEMS))):
        expected = sum(sum(model.tally[items[n].question]) for n in numbers)
        assert (per_category[category].answered, per_category[category].correct) == (len(numbers) * 3, expected)

    # The gate: blind accuracy is far more than 5 points over chance.
    project.audit_gate = "refuse"
    gate = release_gate(project=project, mcq_ids=[i.pk for i in items])
    assert gate.blind_exceeds and gate.refuses
    assert gate.manifest()["blind"]["correct"] == correct
    assert gate.manifest()["passed"] is False
    # Only the items the model could not know: its guesses of "A" hit the key about a quarter of the time.
    guessed = [items[n].pk for n in range(ITEMS) if n not in KNOWN]
    guessed_correct = sum(sum(model.tally[items[n].question]) for n in range(ITEMS) if n not in KNOWN)
    gate = release_gate(project=project, mcq_ids=guessed)
    expected_points = round(100 * (guessed_correct / len(guessed) / 3 - 0.25), 1)
    assert gate.blind.points_over_chance == expected_points
    assert gate.blind_exceeds is (expected_points > 5.0)


def test_a_second_run_makes_no_call_and_an_edit_asks_again(project, fake_openai):
    items = _items(project, 6)
    fake_openai.set_default(KnowingModel(items))
    _run(project)
    asked = len(fake_openai.requests("chat"))
    calls = LLMCall.objects.count()

    again = _run(project)
    assert again.counts["asked"] == 0 and again.counts["reused"] == 18
    assert len(fake_openai.requests("chat")) == asked
    assert LLMCall.objects.count() == calls

    item = items[1]
    item.options = [*item.options[:3], "a different white"]
    item.save()
    fake_openai.set_default(KnowingModel(items))
    third = _run(project)
    assert third.counts["asked"] == 3 and third.counts["reused"] == 15
    assert ProbeAnswer.objects.filter(mcq=item).count() == 3


def test_fewer_orders_drop_the_answers_no_longer_planned(project, fake_openai):
    items = _items(project, 2)
    fake_openai.set_default(KnowingModel(items))
    _run(project)
    project.probe_shuffles = 1
    project.save()
    run = _run(project)
    assert run.counts["asked"] == 0
    assert set(ProbeAnswer.objects.values_list("variant", flat=True)) == {"order 1"}


def test_failures_are_per_item_and_never_a_score(project, fake_openai, settings):
    settings.LLM_TIMEOUT_S = 0.5
    items = _items(project, 5)
    model = KnowingModel(items)
    fake_openai.set_default(model)
    fake_openai.always("Item 1:", Reply.status(429, retry_after=0))
    fake_openai.always("Item 2:", Reply.delay(3.0))
    fake_openai.always("Item 3:", Reply.text("Either A or C, I cannot tell."))

    run = _run(project)
    assert run.counts["failed"] == 9 and run.counts["answered"] == 6

    rows = {a.mcq_id: a for a in ProbeAnswer.objects.filter(variant="order 1")}
    rate_limited, timed_out, unreadable = rows[items[1].pk], rows[items[2].pk], rows[items[3].pk]
    for row in (rate_limited, timed_out, unreadable):
        assert row.ok is False and row.correct is None and row.chosen_index is None
    assert "HTTP 429" in rate_limited.reason
    assert "no answer within 0.5 s" in timed_out.reason
    assert "could not be read" in unreadable.reason and unreadable.reply.startswith("Either A or C")
    assert rate_limited.call_id and unreadable.call_id  # every call is on record

    summary = probe_summary(project=project)
    for n in (1, 2, 3):
        score = summary.items[items[n].pk]
        assert (score.answered, score.failed, score.score) == (0, 3, None)
    assert summary.blind.answered == 6 and summary.blind.failed == 9

    # The next run asks the failed calls again, and only those.
    fake_openai.reset()
    fake_openai.set_default(KnowingModel(items))
    again = _run(project)
    assert again.counts["asked"] == 9 and again.counts["answered"] == 9
    assert len(fake_openai.requests("chat")) == 9


def test_shuffled_orders_move_the_key():
    orders = [shuffled_order(42, k, 4) for k in range(4)]
    assert len(set(orders)) == 4
    assert sorted(order.index(0) for order in orders) == [0, 1, 2, 3]
    assert shuffled_order(42, 1, 4) == orders[1]  # the same every time


def test_no_endpoint_refuses_before_a_job_exists(settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    project = factories.ProjectFactory()
    with pytest.raises(NoModelEndpoint):
        probe_run_start(project=project)
    assert not ProbeRun.objects.exists()


def test_unknown_probe_and_foreign_item_are_refused(project, fake_openai):
    with pytest.raises(ProbeRunRefused, match="Unknown probe"):
        probe_run_start(project=project, probes=["telepathy"])
    other = factories.MCQFactory()
    with pytest.raises(ProbeRunRefused, match=str(other.pk)):
        probe_run_start(project=project, mcq_ids=[other.pk])


def test_transcript_and_frame_plans(project):
    video = factories.VideoFactory(project=project, duration_s=100.0)
    with_moments = factories.MCQFactory(project=project, video=video)
    with_moments.moments.create(video=video, time_s=12.5, frame_index=312, order=0)
    without = factories.MCQFactory(project=project, video=video, question="Which came first?")
    factories.SubtitleCueFactory(video=video, start_s=1.0, end_s=2.0, text="the sauce is red", source="srt")
    plan = probe_plan(project=project, probes=[Probe.TRANSCRIPT, Probe.FRAME, Probe.OPTIONS], frames=4)
    by = {(u.mcq_id, u.probe, u.variant): u for u in plan.units}
    assert "the sauce is red" in by[(with_moments.pk, "transcript", "")].text
    assert [u.frames[0].time_s for k, u in by.items() if k[0] == with_moments.pk and k[1] == "frame"] == [12.5]
    uniform = sorted(u.frames[0].time_s for k, u in by.items() if k[0] == without.pk and k[1] == "frame")
    assert uniform == [12.5, 37.5, 62.5, 87.5]
    options_only = by[(without.pk, "options", "")]
    assert len(options_only.frames) == 4 and "Which came first?" not in options_only.text


def test_send_to_review_flags_with_the_findings(project):
    user = factories.UserFactory()
    examining = factories.MCQFactory(project=project, status=ItemStatus.EXAMINING)
    accepted = factories.MCQFactory(project=project, status=ItemStatus.ACCEPTED)
    drafting = factories.MCQFactory(project=project, status=ItemStatus.ANNOTATING)
    outcome = audit_send_to_review(
        project=project,
        user=user,
        reasons={examining.pk: ["shortcut: text"], accepted.pk: ["duplicate_options"], drafting.pk: ["x"]},
    )
    assert outcome.sent == [examining.pk, accepted.pk]
    assert "annotating" in outcome.refused[drafting.pk]
    examining.refresh_from_db()
    accepted.refresh_from_db()
    assert examining.status == ItemStatus.FLAGGED and accepted.status == ItemStatus.REVISING
    event = ReviewEvent.objects.filter(mcq=examining).latest("id")
    assert event.reasons == ["shortcut: text"] and event.actor == user


def test_the_command_runs_the_probes_in_process_and_shows_the_figures(project, fake_openai, capsys):
    from django.core.management import call_command

    items = _items(project, 4)
    fake_openai.set_default(KnowingModel(items))
    call_command("audit", "run", project.slug, "--probe", "text")
    out = capsys.readouterr().out
    assert "12 calls made (12 answered, 0 failed), 0 reused, 0 skipped" in out
    assert ProbeRun.objects.get().job.status == JobStatus.SUCCEEDED

    call_command("audit", "show", project.slug)
    out = capsys.readouterr().out
    summary = probe_summary(project=project)
    assert f"probe text: {summary.blind.correct}/12 = " in out
    assert "release gate on 0 accepted MCQs: passes" in out


def test_the_command_says_what_is_missing_without_an_endpoint(capsys, settings):
    from django.core.management import call_command

    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    project = factories.ProjectFactory()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "run", project.slug)
    assert exited.value.code == 1
    assert "No model endpoint is set" in capsys.readouterr().err


@pytest.mark.django_db(transaction=True)
def test_threads_sample_frames_and_ask_in_parallel(settings, fake_openai, tmp_path):
    """The parallel path: frames from a real video, several calls in flight, every answer written."""
    from videos.synthetic import SceneSpec, make_scene_video

    settings.LLM_CONCURRENCY = 3
    path = tmp_path / "two-scenes.mp4"
    make_scene_video(path, [SceneSpec(2.0), SceneSpec(2.0)], width=160, height=90, fps=25, audio=False)
    settings.LLM_MAX_ATTEMPTS = 2
    project = factories.ProjectFactory(kind="longvideobench", probe_shuffles=2)
    video = factories.video_from_file(project, path, name="two-scenes", duration_s=4.0, fps=25.0)
    items = _items(project, 4)
    for mcq in items:
        mcq.mcq_videos.update(video=video)
        mcq.moments.create(video=video, time_s=1.0, frame_index=25, order=0)
    fake_openai.latency_ms = 100
    fake_openai.set_default(KnowingModel(items))

    run = probe_run_start(project=project, probes=[Probe.TEXT, Probe.FRAME])
    probe_run(run.job_id)
    run.refresh_from_db()
    assert run.counts["asked"] == 4 * 3 and run.counts["failed"] == 0, run.counts
    assert fake_openai.max_in_flight > 1
    frame_calls = [r for r in fake_openai.requests("chat") if r.images]
    assert len(frame_calls) == 4 and all(r.images[0][:2] == b"\xff\xd8" for r in frame_calls)  # JPEG
    assert ProbeAnswer.objects.filter(probe="frame", ok=True).count() == 4
