"""The LLM quality gate against the fake OpenAI-compatible server, on a real generated video."""

from pathlib import Path

import pytest
from django.db.models import F
from django.urls import reverse

from annotator.lifecycle import item_history, item_transition
from annotator.models import ItemStatus, QAChain, ReviewEvent
from jobs.models import BackgroundJob, JobStatus
from jobs.services import job_retry
from llm.models import CallOutcome, LLMCall, PromptTemplate
from projects.models import JudgeFallback
from projects.taxonomies import CHAIN_JUDGE_DIMENSIONS
from reviewer import quality_gate, tasks_gate
from reviewer.models import QualityScore
from reviewer.quality_gate import (
    CAUSE_MODEL_FAILED,
    CAUSE_NO_ENDPOINT,
    CAUSE_UNUSABLE,
    JUDGE_TASK,
    REASON_BELOW,
    REASON_GATE_OFF,
    REASON_NOT_SCORED,
    JudgeFailed,
    gate_on_submit,
    gate_process_waiting,
    item_submit_and_gate,
    judge_kinds,
    verdict_parse,
)
from tests import factories
from tests.fakes.openai_server import Reply
from videos.ingest import video_import
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db

JUDGE = "vidqa:judge:"  # the user tag of every judge request
COMMENTS = "Turn 3 repeats the chef's name; use 'she'. Turn 5 contradicts turn 2 about the pan."


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    sent = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task",
        lambda name, args: sent.append((name, args)) or type("R", (), {"id": "x"})(),
    )
    return sent


@pytest.fixture(autouse=True)
def llm_settings(settings):
    settings.LLM_CONCURRENCY = 1
    settings.LLM_MAX_ATTEMPTS = 3
    settings.LLM_TIMEOUT_S = 5.0


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gate") / "two_scenes.mp4"
    make_scene_video(path, [SceneSpec(2.0), SceneSpec(2.0)], width=160, height=90)
    return path


@pytest.fixture
def chain(project, scene_file):
    video = video_import(project=project, source=scene_file, filename="kitchen.mp4", process=False)
    clip = factories.ClipFactory(video=video, index=0, start_s=0.0, end_s=3.5)
    chain = factories.QAChainFactory(clip=clip, project=project, status=ItemStatus.ANNOTATING)
    for n in range(5):
        factories.QAPairFactory(chain=chain, index=n, question=f"What does she do at step {n}?", answer=f"Step {n}.")
    return chain


MCQ_SCORES = {
    "correctness": 80,
    "answerability": 70,
    "distractor_quality": 40,
    "clarity": 60,
    "category_fit": 90,
    "referring": 55,
}
PAIR_SCORES = {"link_validity": 95, "cross_clip_dependency": 94, "rewrite_quality": 96, "type_accuracy": 97}


def verdict(overall: int, comments: str = COMMENTS, **scores) -> dict:
    dims = dict.fromkeys(CHAIN_JUDGE_DIMENSIONS, overall) | scores
    return {"scores": dims, "overall": overall, "comments": comments}


def wait_for_an_admin(project) -> None:
    """The fallback that keeps an item the judge cannot score in "submitted" (not the default)."""
    project.judge_fallback = JudgeFallback.WAIT
    project.save(update_fields=["judge_fallback"])


def run_job(job: BackgroundJob) -> BackgroundJob:
    tasks_gate.judge(job.pk)
    job.refresh_from_db()
    return job


def submit_and_judge(item, user) -> BackgroundJob:
    outcome = item_submit_and_gate(item=item, user=user)
    assert outcome.job is not None and outcome.job.kind == JUDGE_TASK
    return run_job(outcome.job)


def test_a_passing_chain_is_scored_and_ready_for_examining(chain, people, fake_openai):
    fake_openai.script(JUDGE, [Reply.json(verdict(94, "Fluent and consistent.", fluency=97))])
    outcome = item_submit_and_gate(item=chain, user=people["annotator"])
    assert chain.status == ItemStatus.SUBMITTED
    job = run_job(outcome.job)

    assert job.status == JobStatus.SUCCEEDED, job.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SCORED
    score = QualityScore.objects.get()
    assert (score.qa_chain, score.item_version, score.overall, score.threshold, score.passed) == (
        chain,
        chain.version,
        94,
        90,
        True,
    )
    assert set(score.dimensions) == set(CHAIN_JUDGE_DIMENSIONS) and score.dimensions["fluency"] == 97
    assert score.comments == "Fluent and consistent."
    assert score.llm_call.step == "judge" and score.llm_call.outcome == CallOutcome.OK
    assert job.result["score_id"] == score.pk and job.result["to_status"] == ItemStatus.SCORED
    events = item_history(item=chain)
    assert [(e.from_status, e.to_status) for e in events] == [
        (ItemStatus.ANNOTATING, ItemStatus.SUBMITTED),
        (ItemStatus.SUBMITTED, ItemStatus.SCORED),
    ]
    assert events[1].actor is None and events[1].item_version == chain.version

    # The judge saw the clip's frames and every turn, numbered so its comments can name them.
    (request,) = fake_openai.requests()
    assert len(request.images) == chain.project.frames_per_clip
    assert "Turn 5. Q: What does she do at step 4?" in request.text
    assert "runs from 0 s to 3.5 s" in request.text


def test_below_the_threshold_goes_back_to_revision_with_the_comments(chain, people, fake_openai):
    fake_openai.script(JUDGE, [Reply.json(verdict(72))])
    job = submit_and_judge(chain, people["annotator"])

    assert job.status == JobStatus.SUCCEEDED, job.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.REVISING
    score = QualityScore.objects.get()
    assert score.overall == 72 and not score.passed and score.comments == COMMENTS
    event = item_history(item=chain)[-1]
    assert (event.from_status, event.to_status) == (ItemStatus.SUBMITTED, ItemStatus.REVISING)
    assert event.reasons == [REASON_BELOW] and event.comment == COMMENTS
    assert "below the threshold" in job.message

    # Revised and submitted again: judged anew, and this time it passes.
    item_transition(item=chain, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    fake_openai.script(JUDGE, [Reply.json(verdict(91, "Better."))])
    (second,) = [gate_on_submit(item=chain, user=people["annotator"]).job]
    assert run_job(second).status == JobStatus.SUCCEEDED
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SCORED
    assert list(QualityScore.objects.order_by("pk").values_list("overall", "passed")) == [(72, False), (91, True)]


def test_the_threshold_is_the_projects_at_scoring_time_and_inclusive(chain, people, fake_openai):
    chain.project.judge_threshold = 80
    chain.project.save()
    fake_openai.script(JUDGE, [Reply.json(verdict(80))])
    job = submit_and_judge(chain, people["annotator"])
    assert job.status == JobStatus.SUCCEEDED
    score = QualityScore.objects.get()
    assert (score.overall, score.threshold, score.passed) == (80, 80, True)


def test_a_malformed_answer_is_repaired(chain, people, fake_openai):
    fake_openai.script(JUDGE, [Reply.text('{"scores": {"accuracy": 95}, "overall": '), Reply.json(verdict(93))])
    job = submit_and_judge(chain, people["annotator"])

    assert job.status == JobStatus.SUCCEEDED, job.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SCORED
    score = QualityScore.objects.get()
    assert score.overall == 93 and score.llm_call.outcome == CallOutcome.REPAIRED
    assert len(fake_openai.requests()) == 2


def test_a_failing_judge_leaves_the_item_submitted_and_a_retry_scores_it(chain, people, fake_openai):
    wait_for_an_admin(chain.project)
    fake_openai.always(JUDGE, Reply.status(500))
    job = submit_and_judge(chain, people["annotator"])

    assert job.status == JobStatus.FAILED
    assert "500" in job.error and "stays submitted" in job.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED
    assert not QualityScore.objects.exists()
    assert LLMCall.objects.get(step="judge").outcome == CallOutcome.ERROR
    assert len(fake_openai.requests()) == 3  # LLM_MAX_ATTEMPTS

    fake_openai.reset()
    fake_openai.script(JUDGE, [Reply.json(verdict(96))])
    retried = run_job(job_retry(job=job, user=people["admin"]))
    assert retried.status == JobStatus.SUCCEEDED, retried.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SCORED
    assert QualityScore.objects.get().overall == 96


def test_an_answer_without_an_overall_score_fails_the_job_clearly(chain, people, fake_openai, monkeypatch):
    # An admin-edited template whose schema no longer asks for "overall": the answer passes the schema.
    from llm.prompts import template_update

    template_update(project=chain.project, key="judge", body="Judge {chain}.", schema={"type": "object"})
    wait_for_an_admin(chain.project)
    fake_openai.script(JUDGE, [Reply.json({"scores": {}, "comments": "fine"})])
    job = submit_and_judge(chain, people["annotator"])
    assert job.status == JobStatus.FAILED and "no overall score" in job.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED


def test_a_verdict_on_a_version_that_changed_meanwhile_is_discarded(chain, people, fake_openai, monkeypatch):
    """A relation rewrite changes a submitted chain while the judge is answering."""
    real_chat_json = quality_gate.chat_json
    calls = []

    def chat_json_then_edit(**kwargs):
        result = real_chat_json(**kwargs)
        calls.append(kwargs["context"]["chain"])
        if len(calls) == 1:
            chain.pairs.filter(index=0).update(question="Rewritten: why does she stop?")
            QAChain.objects.filter(pk=chain.pk).update(version=F("version") + 1)
        return result

    monkeypatch.setattr(quality_gate, "chat_json", chat_json_then_edit)
    fake_openai.script(JUDGE, [Reply.json(verdict(40, "About the old text.")), Reply.json(verdict(95))])
    submitted_version = chain.version
    job = submit_and_judge(chain, people["annotator"])

    assert job.status == JobStatus.SUCCEEDED, job.error
    score = QualityScore.objects.get()
    assert score.item_version == submitted_version + 1 and score.overall == 95
    assert "Rewritten: why does she stop?" in calls[1] and "Rewritten" not in calls[0]
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SCORED
    assert not ReviewEvent.objects.filter(to_status=ItemStatus.REVISING).exists()


def test_an_item_that_keeps_changing_fails_the_job_and_stays_submitted(chain, people, fake_openai, monkeypatch):
    real_chat_json = quality_gate.chat_json

    def always_edited(**kwargs):
        result = real_chat_json(**kwargs)
        QAChain.objects.filter(pk=chain.pk).update(version=F("version") + 1)
        return result

    monkeypatch.setattr(quality_gate, "chat_json", always_edited)
    fake_openai.always(JUDGE, Reply.json(verdict(95)))
    job = submit_and_judge(chain, people["annotator"])
    assert job.status == JobStatus.FAILED and "kept changing" in job.error
    assert not QualityScore.objects.exists()
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED


def test_an_item_that_moved_on_before_the_job_ran_is_left_alone(chain, people, fake_openai):
    outcome = item_submit_and_gate(item=chain, user=people["annotator"])
    item_transition(item=chain, to_status=ItemStatus.EXAMINING, actor=people["admin"])
    job = run_job(outcome.job)
    assert job.status == JobStatus.SUCCEEDED and "examining now" in job.message
    assert not fake_openai.requests() and not QualityScore.objects.exists()


def test_a_job_delivered_twice_scores_once(chain, people, fake_openai):
    fake_openai.script(JUDGE, [Reply.json(verdict(99))])
    outcome = item_submit_and_gate(item=chain, user=people["annotator"])
    run_job(outcome.job)
    BackgroundJob.objects.filter(pk=outcome.job.pk).update(status=JobStatus.RUNNING)  # as if the worker died
    run_job(outcome.job)
    assert QualityScore.objects.count() == 1 and len(fake_openai.requests()) == 1
    assert ReviewEvent.objects.filter(to_status=ItemStatus.SCORED).count() == 1


def test_with_the_gate_off_a_submit_goes_straight_to_examining(chain, people, fake_openai):
    chain.project.judge_enabled = False
    chain.project.save()
    outcome = item_submit_and_gate(item=chain, user=people["annotator"])
    assert outcome.job is None and outcome.transition is not None
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING
    event = item_history(item=chain)[-1]
    assert (event.from_status, event.to_status, event.reasons) == (
        ItemStatus.SUBMITTED,
        ItemStatus.EXAMINING,
        [REASON_GATE_OFF],
    )
    assert not BackgroundJob.objects.exists() and not fake_openai.requests()


def test_a_gate_switched_off_while_the_job_waited_passes_the_item_on(chain, people, fake_openai):
    outcome = item_submit_and_gate(item=chain, user=people["annotator"])
    chain.project.judge_enabled = False
    chain.project.save()
    job = run_job(outcome.job)
    assert job.status == JobStatus.SUCCEEDED
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING and not fake_openai.requests()


def test_mcqs_skip_the_gate_unless_the_project_covers_them(people, project, fake_openai, scene_file):
    video = video_import(project=project, source=scene_file, filename="mcq.mp4", process=False)
    mcq = factories.MCQFactory(project=project, video=video)
    assert judge_kinds(project) == ["qa_chain"]
    outcome = item_submit_and_gate(item=mcq, user=people["annotator"])
    assert outcome.job is None
    mcq.refresh_from_db()
    assert mcq.status == ItemStatus.EXAMINING

    project.models_per_step = {"judge": "gpt-4o", "judge_kinds": ["qa_chain", "mcq"]}
    project.save()
    other = factories.MCQFactory(project=project, video=video)
    fake_openai.script(
        JUDGE,
        [Reply.json({"scores": MCQ_SCORES, "overall": 55, "comments": "Option B is implausible."})],
    )
    job = submit_and_judge(other, people["annotator"])
    assert job.status == JobStatus.SUCCEEDED, job.error
    other.refresh_from_db()
    assert other.status == ItemStatus.REVISING
    score = QualityScore.objects.get(mcq=other)
    assert score.dimensions == MCQ_SCORES and score.llm_call.model == "gpt-4o"
    # Its prompt is a template like any other: made on first use, editable afterwards.
    assert PromptTemplate.objects.filter(key="judge_mcq", is_active=True).count() == 1
    (request,) = fake_openai.requests()
    assert "A. red  (marked correct)" in request.text and "When the chef lifts the pan" in request.text


def test_chain_pairs_can_be_gated_too(people, project, fake_openai):
    project.models_per_step = {"judge_kinds": ["chain_pair"]}
    project.save()
    video = factories.VideoFactory(project=project)
    before = factories.QAChainFactory(clip=factories.ClipFactory(video=video))
    pair = factories.ChainPairFactory(chain_before=before, status=ItemStatus.ANNOTATING)
    factories.RelationFactory(chain_pair=pair, decision="accepted")
    fake_openai.script(JUDGE, [Reply.json({"scores": PAIR_SCORES, "overall": 95, "comments": ""})])
    job = submit_and_judge(pair, people["annotator"])
    assert job.status == JobStatus.SUCCEEDED, job.error
    pair.refresh_from_db()
    assert pair.status == ItemStatus.SCORED
    (request,) = fake_openai.requests()
    assert "earlier turn 1 → later turn 1: action" in request.text


def test_waiting_items_are_judged_or_passed_on_in_bulk(chain, people, project, fake_openai):
    # Submitted without the gate (another path), and one whose judge failed.
    item_transition(item=chain, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    mcq = factories.MCQFactory(project=project)
    item_transition(item=mcq, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    counts = gate_process_waiting(project=project, user=people["admin"])
    assert counts == {"queued": 1, "to_examining": 1, "already_queued": 0}
    assert gate_process_waiting(project=project, user=people["admin"])["already_queued"] == 1
    mcq.refresh_from_db()
    assert mcq.status == ItemStatus.EXAMINING
    job = BackgroundJob.objects.get(kind=JUDGE_TASK)
    assert (job.target_type, job.target_id) == ("annotator.qachain", chain.pk)


def test_a_double_submit_reuses_the_queued_job(chain, people):
    first = item_submit_and_gate(item=chain, user=people["annotator"]).job
    again = gate_on_submit(item=chain, user=people["annotator"]).job
    assert again.pk == first.pk and BackgroundJob.objects.count() == 1


def test_the_judge_task_is_registered_for_the_worker():
    from config.celery import app

    assert "reviewer.judge" in app.tasks


@pytest.mark.parametrize(
    "answer, problem",
    [
        ("not an object", "not a JSON object"),
        ({"overall": 101, "scores": {}}, "no overall score"),
        ({"overall": True, "scores": {}}, "no overall score"),
        ({"scores": {"accuracy": 90}}, "no overall score"),
    ],
)
def test_unusable_verdicts_are_refused(answer, problem):
    with pytest.raises(JudgeFailed, match=problem):
        verdict_parse(answer, dimensions=CHAIN_JUDGE_DIMENSIONS)


def test_verdicts_keep_the_dimensions_in_order_and_drop_nonsense():
    parsed = {
        "scores": {"fluency": 80.6, "accuracy": 90, "extra": 50, "relevance": "high", "completeness": -3},
        "overall": 88.4,
        "comments": "  Fine.  ",
    }
    v = verdict_parse(parsed, dimensions=CHAIN_JUDGE_DIMENSIONS)
    assert list(v.dimensions.items()) == [("accuracy", 90), ("fluency", 81), ("extra", 50)]
    assert (v.overall, v.comments) == (88, "Fine.")


def test_gate_kinds_come_from_the_project(project):
    project.models_per_step = {"judge_kinds": ["mcq", "nonsense", "chain_pair"]}
    assert judge_kinds(project) == ["chain_pair", "mcq"]
    project.models_per_step = {"judge_kinds": "mcq"}
    assert judge_kinds(project) == ["qa_chain"]


NO_ENDPOINT = "No model endpoint is set for this project: a project admin can set one under Settings → Model endpoint."


def test_with_no_endpoint_a_submit_waits_for_the_judge_and_creates_no_job(chain, people, settings, client):
    from annotator.chains import chain_submit

    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    wait_for_an_admin(chain.project)
    before = BackgroundJob.objects.count()

    submitted = chain_submit(chain=chain, user=people["annotator"], expected_version=chain.version)

    assert BackgroundJob.objects.count() == before
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED  # waiting for the judge, not passed on unjudged
    assert submitted.outcome == "waiting"
    assert submitted.message("Chain") == f"Chain submitted; it waits for the judge. {NO_ENDPOINT}"

    # "Judge waiting items" and "judge again" leave it waiting too, and say why.
    assert gate_process_waiting(project=chain.project, user=people["admin"])["no_endpoint"] == 1
    client.force_login(people["admin"])
    page = client.post(reverse("reviewer:item_judge", args=[chain.project.slug, "qa_chain", chain.pk]), follow=True)
    assert [str(m) for m in page.context["messages"]] == [NO_ENDPOINT]
    assert BackgroundJob.objects.count() == before

    # Once an endpoint is set, the waiting item goes to the judge.
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    assert gate_process_waiting(project=chain.project, user=people["admin"]) == {
        "queued": 1,
        "to_examining": 0,
        "already_queued": 0,
    }


# --- when the judge cannot score an item: the project's fallback ----------------------------------------


def moves(item) -> list[tuple[str, str, list, str]]:
    return [(e.from_status, e.to_status, e.reasons, e.comment) for e in item_history(item=item)[1:]]


def test_by_default_a_failing_judge_passes_the_item_on_marked_not_scored(chain, people, fake_openai):
    from reviewer.stuck_work import not_scored_note

    fake_openai.always(JUDGE, Reply.status(500))
    job = submit_and_judge(chain, people["annotator"])

    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.result["not_scored"] == CAUSE_MODEL_FAILED and "Not scored" in job.message
    assert len(fake_openai.requests()) == 3  # the LLM layer's retries came first
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING
    ((from_status, to_status, reasons, comment),) = moves(chain)
    assert (from_status, to_status, reasons) == (
        ItemStatus.SUBMITTED,
        ItemStatus.EXAMINING,
        [REASON_NOT_SCORED, CAUSE_MODEL_FAILED],
    )
    assert "500" in comment and "stays submitted" not in comment
    note = not_scored_note(chain)
    assert note.cause == CAUSE_MODEL_FAILED and note.reason == comment
    assert not QualityScore.objects.exists()


def test_a_project_can_send_items_the_judge_cannot_score_back_to_the_author(chain, people, fake_openai):
    from annotator.lifecycle import REVISION_AUTHOR, revision_owner

    chain.project.judge_fallback = JudgeFallback.AUTHOR
    chain.project.save()
    template_key_schema_free(chain.project)
    fake_openai.always(JUDGE, Reply.json({"scores": {}, "comments": "fine"}))
    job = submit_and_judge(chain, people["annotator"])

    assert job.status == JobStatus.SUCCEEDED, job.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.REVISING and revision_owner(item=chain) == REVISION_AUTHOR
    ((_from, _to, reasons, comment),) = moves(chain)
    assert reasons == [REASON_NOT_SCORED, CAUSE_UNUSABLE] and "no overall score" in comment


def template_key_schema_free(project) -> None:
    # An admin-edited template whose schema no longer asks for "overall": the answer passes the schema.
    from llm.prompts import template_update

    template_update(project=project, key="judge", body="Judge {chain}.", schema={"type": "object"})


def test_an_unusable_answer_goes_on_marked_not_scored_by_default(chain, people, fake_openai):
    template_key_schema_free(chain.project)
    fake_openai.always(JUDGE, Reply.json({"scores": {}, "comments": "fine"}))
    job = submit_and_judge(chain, people["annotator"])
    assert job.status == JobStatus.SUCCEEDED, job.error
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING
    assert moves(chain)[0][2] == [REASON_NOT_SCORED, CAUSE_UNUSABLE]


def test_an_item_that_keeps_changing_is_not_moved_by_the_fallback(chain, people, fake_openai, monkeypatch):
    real_chat_json = quality_gate.chat_json

    def always_edited(**kwargs):
        result = real_chat_json(**kwargs)
        QAChain.objects.filter(pk=chain.pk).update(version=F("version") + 1)
        return result

    monkeypatch.setattr(quality_gate, "chat_json", always_edited)
    fake_openai.always(JUDGE, Reply.json(verdict(95)))
    assert submit_and_judge(chain, people["annotator"]).status == JobStatus.FAILED
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED


def test_with_no_endpoint_a_submit_goes_on_marked_not_scored_by_default(chain, people, settings, client):
    from annotator.chains import chain_submit

    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    before = BackgroundJob.objects.count()

    submitted = chain_submit(chain=chain, user=people["annotator"], expected_version=chain.version)

    assert BackgroundJob.objects.count() == before
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING
    assert submitted.outcome == "examining"
    assert submitted.message("Chain") == f"Chain submitted and passed on to examiners, marked not scored. {NO_ENDPOINT}"
    assert moves(chain) == [
        (ItemStatus.SUBMITTED, ItemStatus.EXAMINING, [REASON_NOT_SCORED, CAUSE_NO_ENDPOINT], NO_ENDPOINT)
    ]

    # Examiners see the mark and the reason on the item.
    client.force_login(people["examiner"])
    page = client.get(reverse("reviewer:examine_item", args=[chain.project.slug, "qa_chain", chain.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Not scored by the judge: no model endpoint" in text and "No model endpoint is set" in text
    home = client.get(reverse("reviewer:examine_home", args=[chain.project.slug])).content.decode()
    assert "Not scored" in home


def test_with_no_endpoint_and_the_author_fallback_the_item_goes_back(chain, people, settings):
    from annotator.chains import chain_submit

    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    chain.project.judge_fallback = JudgeFallback.AUTHOR
    chain.project.save()
    submitted = chain_submit(chain=chain, user=people["annotator"], expected_version=chain.version)
    chain.refresh_from_db()
    assert chain.status == ItemStatus.REVISING and submitted.outcome == "revising"
    assert "back with you" in submitted.message("Chain")


def test_judging_waiting_items_with_no_endpoint_applies_the_fallback(chain, people, project, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    item_transition(item=chain, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    counts = gate_process_waiting(project=project, user=people["admin"])
    assert counts == {"queued": 0, "to_examining": 0, "already_queued": 0, "not_scored": 1}
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING


# --- the gate switched off releases what it held -------------------------------------------------------


def test_switching_the_gate_off_releases_every_waiting_item_with_a_reason(chain, people, project):
    from projects.services import project_update

    wait_for_an_admin(project)
    mcq = factories.MCQFactory(project=project)
    project.models_per_step = {"judge_kinds": ["qa_chain", "mcq"]}
    project.save()
    for item in (chain, mcq):
        item_transition(item=item, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    accepted = factories.MCQFactory(project=project, status=ItemStatus.ACCEPTED)

    project_update(project=project, user=people["admin"], judge_threshold=80)  # not about the gate
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED

    project_update(project=project, user=people["admin"], judge_enabled=False)
    for item in (chain, mcq):
        item.refresh_from_db()
        assert item.status == ItemStatus.EXAMINING
        (event,) = moves(item)[-1:]
        assert event[2] == [REASON_GATE_OFF] and "switched off" in event[3]
        assert item_history(item=item)[-1].actor == people["admin"]
    accepted.refresh_from_db()
    assert accepted.status == ItemStatus.ACCEPTED


def test_narrowing_the_judged_kinds_releases_the_kinds_left_out(chain, people, project):
    from projects.services import project_update

    mcq = factories.MCQFactory(project=project)
    project.models_per_step = {"judge_kinds": ["qa_chain", "mcq"]}
    project.save()
    for item in (chain, mcq):
        item_transition(item=item, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    project_update(project=project, user=people["admin"], models_per_step={"judge_kinds": ["qa_chain"]})
    chain.refresh_from_db()
    mcq.refresh_from_db()
    assert (chain.status, mcq.status) == (ItemStatus.SUBMITTED, ItemStatus.EXAMINING)


def test_the_settings_page_switching_the_gate_off_releases_waiting_items(chain, people, project, client):
    from studio.forms import ProjectSettingsForm

    item_transition(item=chain, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    form = ProjectSettingsForm(instance=project)
    data = {}
    for name, bound in form.fields.items():
        value = form.initial.get(name, bound.initial)
        if name == "judge_enabled":
            continue  # unticked
        if isinstance(value, list) and name == "judge_kinds":
            data[name] = value
        elif isinstance(value, dict | list):
            import json

            data[name] = json.dumps(value)
        elif value is not None:
            data[name] = value
    client.force_login(people["admin"])
    page = client.post(reverse("studio:project_settings", args=[project.slug]), data)
    assert page.status_code == 302, page.content.decode()[:2000]
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING
