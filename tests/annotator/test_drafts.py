"""Machine draft runs against the fake OpenAI-compatible server on loopback, on real generated videos."""

import json
import re
from pathlib import Path

import pytest
from django.db.models import Max

from annotator import tasks
from annotator.drafts import DRAFT_STEPS, draft_run_start, draft_step_run, options_shuffle, seed_update
from annotator.models import (
    MCQ,
    ChainPair,
    ItemStatus,
    MCQVideo,
    Origin,
    QAChain,
    QAPair,
    ReferredMoment,
    Relation,
    SeedQuestion,
    SeedStatus,
    VideoDescription,
)
from jobs.models import BackgroundJob, JobStatus
from jobs.services import job_retry
from llm.models import CallOutcome, LLMCall
from tests import factories
from tests.fakes.openai_server import Reply, default_responder
from videos.ingest import video_import
from videos.models import Clip, CurationStatus, VideoStatus
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db

TASKS = [
    {"group": "coarse perception", "task": "video topic"},
    {"group": "fine perception", "task": "event recognition"},
]
ROLES = [
    {"role": "visual", "instruction": "Describe what is seen."},
    {"role": "audio", "instruction": "Describe what is heard."},
]
ITEM_MODELS = [QAChain, QAPair, ChainPair, Relation, VideoDescription, SeedQuestion, MCQ, MCQVideo, ReferredMoment]


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())


@pytest.fixture(autouse=True)
def llm_settings(settings):
    settings.LLM_CONCURRENCY = 1  # one thread: these tests' data lives in the test's own transaction
    settings.LLM_MAX_ATTEMPTS = 3
    settings.LLM_TIMEOUT_S = 5.0
    return settings


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("drafts") / "three_scenes.mp4"
    make_scene_video(path, [SceneSpec(2.0), SceneSpec(2.0), SceneSpec(2.0)], width=160, height=90)
    return path


def _step_of(request) -> str:
    return request.user.split(":")[1] if request.user.startswith("vidqa:") else ""


def chain_answer(tag: str, turns: int = 5) -> dict:
    skills = ["II", "PA", "CR", "STS", "ECA", "CSI"]
    return {
        "turns": [
            {"question": f"{tag}: what happens at step {n}?", "answer": f"It moves ({n}).", "skill": skills[n]}
            for n in range(turns)
        ]
    }


def model(request) -> Reply:
    """A cooperative model that writes distinct, plausible answers for every drafting step."""
    step, text = _step_of(request), request.text
    if step == "qa_chain":
        start = re.search(r"runs from (\S+) s to (\S+) s", text).group(1)
        return Reply.json(chain_answer(f"clip at {start}"))
    if step == "relations":
        return Reply.json(
            {
                "links": [
                    {"before": 1, "after": 2, "type": "action", "reason": "The same movement continues."},
                    {"before": 3, "after": 1, "type": "object", "reason": "The box appears again."},
                    {"before": 9, "after": 1, "type": "event", "reason": "A turn that does not exist."},
                ]
            }
        )
    if step == "description":
        role = re.search(r"Your role: (\w+)", text).group(1)
        return Reply.json({"description": f"The {role} view.", "moments": [{"time": 1.0, "text": "A box moves."}]})
    if step == "seed_questions":
        task = re.search(r"Task: (.+?) \(group", text).group(1)
        return Reply.json({"questions": [{"text": f"What does the {task} look like ({k})?"} for k in range(3)]})
    if step == "mcq":
        question = "When the red box appears, what moves across the screen?"
        return Reply.json(
            {
                "questions": [
                    {
                        "question": question,
                        "referring_query": "When the red box appears",
                        "question_without_referring_query": "What moves across the screen?",
                        "answer": "The white box",
                        "moments": [1.0, 99.0],
                    }
                ]
            }
        )
    if step == "distractors":
        return Reply.json({"correct_answer": "The white box", "distractors": ["The bars", "A fractal", "Nothing"]})
    return default_responder(request)


@pytest.fixture
def fake(fake_openai):
    fake_openai.set_default(model)
    return fake_openai


def make_project(**fields):
    fields.setdefault("kind", "livibench")
    project = factories.ProjectFactory(frames_per_clip=3, **fields)
    project.taxonomies = {**project.taxonomies, "tasks": TASKS, "agent_roles": ROLES}
    project.save()
    factories.people_for(project)
    return project


def make_video(project, scene_file, *, name="scenes", clips=3):
    video = video_import(project=project, source=scene_file, filename=f"{name}.mp4", process=False)
    video.status = VideoStatus.READY
    video.save(update_fields=["status"])
    for i in range(clips):
        Clip.objects.create(video=video, index=i, start_s=2.0 * i, end_s=2.0 * i + 2.0)
    factories.SubtitleCueFactory(video=video, start_s=0.5, end_s=1.5, text="A red box slides.")
    factories.SubtitleCueFactory(video=video, start_s=2.5, end_s=3.5, text="Colour bars.")
    return video


@pytest.fixture
def project():
    return make_project()


@pytest.fixture
def video(project, scene_file):
    return make_video(project, scene_file)


def run_job(project, step, **kwargs) -> BackgroundJob:
    job = draft_run_start(project=project, step=step, **kwargs)
    getattr(tasks, f"draft_{step}")(job.pk)
    job.refresh_from_db()
    return job


def snapshot() -> dict:
    return {m.__name__: m.objects.count() for m in [*ITEM_MODELS, LLMCall]}


def run_pipeline(project):
    jobs = {}
    for step in ("chains", "relations", "descriptions", "seeds"):
        jobs[step] = run_job(project, step)
    first = SeedQuestion.objects.filter(task="video topic").order_by("id").first()
    seed_update(seed=first, status=SeedStatus.KEPT)
    for step in ("mcqs", "options"):
        jobs[step] = run_job(project, step)
    return jobs


# --- The whole pipeline ---------------------------------------------------------------------------


def test_a_run_over_a_small_project_makes_every_kind_of_draft(project, video, fake):
    project.models_per_step = {"description": ["gpt-4o", "fake-vision"]}
    project.save()

    jobs = run_pipeline(project)

    for step, job in jobs.items():
        assert job.status == JobStatus.SUCCEEDED, (step, job.error)
        assert job.result["failed"] == [], step
    # Chains: one per clip, 5 turns each, kept as the machine wrote them.
    chains = list(QAChain.objects.filter(clip__video=video).order_by("clip__index"))
    assert len(chains) == 3
    for chain in chains:
        pairs = list(chain.pairs.order_by("index").values("question", "answer", "skill"))
        assert len(pairs) == 5 and chain.machine_draft == {"pairs": pairs}
        assert (chain.status, chain.origin, chain.human_edited, chain.version) == ("draft", "machine", False, 1)
        assert chain.draft_call.step == "qa_chain" and chain.draft_call.outcome == CallOutcome.OK
        assert chain.draft_call.request["images"]["count"] == 3
        assert f"at {chain.clip.start_s:g}" in pairs[0]["question"]
    assert [p["skill"] for p in chains[0].machine_draft["pairs"]] == ["II", "PA", "CR", "STS", "ECA"]
    # The clip's own subtitles went into its prompt, the other clips' did not.
    first_prompt = next(r for r in fake.requests() if "runs from 0 s to 2 s" in r.text)
    assert "A red box slides." in first_prompt.text and "Colour bars." not in first_prompt.text
    assert len(first_prompt.images) == 3

    # Relations: a chain pair per adjacent clips, candidates checked against the real chains.
    chain_pairs = list(ChainPair.objects.filter(video=video).order_by("before_index"))
    assert [p.before_index for p in chain_pairs] == [0, 1]
    for cp in chain_pairs:
        assert cp.machine_draft["relations"] == [
            {"from": 0, "to": 1, "type": "action", "rationale": "The same movement continues."},
            {"from": 2, "to": 0, "type": "object", "rationale": "The box appears again."},
        ]
        assert "turn 9 of the earlier chain does not exist (it has 5)" in cp.machine_draft["dropped"][0]
        relations = list(cp.relations.order_by("from_pair__index"))
        assert [(r.from_pair.chain_id, r.to_pair.chain_id) for r in relations] == [
            (cp.chain_before_id, cp.chain_after_id)
        ] * 2
        assert {(r.decision, r.origin) for r in relations} == {("candidate", "machine")}
        assert all(r.draft_call_id == cp.draft_call_id for r in relations)
    assert jobs["relations"].result["counts"] == {"relations": 4, "dropped_links": 2}

    # Descriptions: agent roles × models, each from its own call with that model.
    descriptions = set(VideoDescription.objects.filter(video=video).values_list("agent_role", "model"))
    assert descriptions == {(r, m) for r in ("visual", "audio") for m in ("gpt-4o", "fake-vision")}
    described = VideoDescription.objects.get(video=video, agent_role="audio", model="fake-vision")
    assert described.text.startswith("The audio view.") and "[1 s] A box moves." in described.text
    assert described.draft_call.model == "fake-vision"
    assert {r.model for r in fake.requests() if _step_of(r) == "description"} == {"gpt-4o", "fake-vision"}

    # Seeds: proposed per task for curation.
    assert SeedQuestion.objects.filter(status=SeedStatus.PROPOSED, origin=Origin.MACHINE).count() == 5
    assert set(SeedQuestion.objects.values_list("task", flat=True)) == {"video topic", "event recognition"}

    # MCQs: only for the task with a kept seed; the other is reported as not ready.
    assert jobs["mcqs"].result["skipped"] == [
        {
            "item": f"{video.name} · event recognition",
            "video": video.pk,
            "task": "event recognition",
            "reason": "no kept seed questions for event recognition: curate seeds first",
        }
    ]
    mcq = MCQ.objects.get()
    assert (mcq.category, mcq.task_group, mcq.level, mcq.status, mcq.origin) == (
        "video topic",
        "coarse perception",
        "",
        "draft",
        "machine",
    )
    assert mcq.question[mcq.referring_start : mcq.referring_end] == "When the red box appears"
    assert mcq.question_wo_referring_query == "What moves across the screen?"
    assert list(mcq.mcq_videos.values_list("video_id", "role", "order")) == [(video.pk, "main", 0)]
    assert list(mcq.moments.values_list("time_s", "frame_index")) == [(1.0, 25)]
    assert "moment 99.0 s lies outside the video" in jobs["mcqs"].result["warnings"][0]["warning"]
    mcq_prompt = next(r for r in fake.requests() if _step_of(r) == "mcq")
    assert "What does the video topic look like (0)?" in mcq_prompt.text and "The visual view." in mcq_prompt.text
    assert mcq.draft_call.step == "mcq"

    # Answers and distractors: four options in a fixed order, the correct one marked.
    assert len(mcq.options) == 4 and mcq.options[mcq.correct_index] == "The white box"
    assert (mcq.options, mcq.correct_index) == options_shuffle(
        mcq_id=mcq.pk, correct="The white box", distractors=["The bars", "A fractal", "Nothing"]
    )
    assert (mcq.version, mcq.human_edited) == (2, False)
    assert LLMCall.objects.get(pk=mcq.machine_draft["options_call"]).step == "distractors"

    # Every request the model got is one recorded call, and each call belongs to a step's job.
    calls = LLMCall.objects.filter(project=project)
    assert calls.count() == len(fake.requests()) == 3 + 2 + 4 + 2 + 1 + 1
    assert sum(job.result["calls"]["count"] for job in jobs.values()) == calls.count()
    for job in jobs.values():
        ids = calls.filter(pk__gte=job.result["calls"]["min_id"], pk__lte=job.result["calls"]["max_id"])
        assert ids.count() == job.result["calls"]["count"]


def test_a_second_run_adds_nothing_and_asks_the_model_nothing(project, video, fake):
    run_pipeline(project)
    before, requests, updated = snapshot(), len(fake.requests()), _updated_stamps()

    again = {step: run_job(project, step) for step in DRAFT_STEPS}

    assert snapshot() == before
    assert len(fake.requests()) == requests
    assert _updated_stamps() == updated
    for step, job in again.items():
        assert job.status == JobStatus.SUCCEEDED, (step, job.error)
        assert job.result["created"] == 0 and job.result["failed"] == [], step
        assert job.result["calls"]["count"] == 0, step
    assert again["chains"].result["skipped_existing"] == 3
    assert again["relations"].result["skipped_existing"] == 2
    assert again["descriptions"].result["skipped_existing"] == 2
    assert again["seeds"].result["skipped_existing"] == 2
    assert again["mcqs"].result["skipped_existing"] == 1
    assert again["options"].result["total"] == 0  # the MCQ has its options now


def test_a_run_over_the_demo_project_fills_the_gaps_and_leaves_the_rest_alone(fake):
    from demo.services import demo_project_load

    project = demo_project_load(force=True).project
    kept_models = (QAChain, QAPair, ChainPair, Relation, MCQ, MCQVideo, SeedQuestion, VideoDescription)
    before = {m.__name__: list(m.objects.order_by("pk").values()) for m in kept_models}
    tasks_without_machine_seeds = {t["task"] for t in project.taxonomy("tasks")} - {
        "event recognition",
        "temporal querying",
    }

    summaries = {step: draft_step_run(project=project, step=step) for step in DRAFT_STEPS}

    assert {step: s.failed for step, s in summaries.items()} == dict.fromkeys(DRAFT_STEPS, [])
    # Everything the demo held (accepted, submitted, annotating and untouched draft work alike) is unchanged.
    for m in kept_models:
        old = before[m.__name__]
        assert list(m.objects.filter(pk__in=[r["id"] for r in old]).order_by("pk").values()) == old, m.__name__
    # What was missing got drafted: chains and chain pairs of the two short videos, descriptions by the
    # default model, seeds for tasks without machine seeds, MCQs for the tasks with kept seeds, options.
    chains = summaries["chains"]
    assert (chains.created, chains.skipped_existing, chains.skipped_human) == (4, 4, 4)
    assert (summaries["relations"].created, summaries["relations"].skipped_human) == (2, 3)
    assert summaries["descriptions"].created == 3 * 4
    assert summaries["seeds"].created == 3 * len(tasks_without_machine_seeds)
    assert summaries["mcqs"].created == 3 * 2  # scene recognition and event recognition, on 3 videos
    assert summaries["options"].created == 6
    # And a second run adds nothing.
    counts, requests = snapshot(), len(fake.requests())
    for step in DRAFT_STEPS:
        assert draft_step_run(project=project, step=step).created == 0
    assert snapshot() == counts and len(fake.requests()) == requests


def _updated_stamps():
    return [m.objects.aggregate(latest=Max("updated_at"))["latest"] for m in (QAChain, ChainPair, MCQ, Relation)]


def test_human_work_is_left_exactly_as_it_was(project, video, fake):
    run_job(project, "chains")
    chains = list(QAChain.objects.filter(clip__video=video).order_by("clip__index"))
    # An annotator rewrote chain 0 (still a draft, but edited) and submitted chain 1.
    QAPair.objects.filter(chain=chains[0]).update(question="Edited by a person?")
    QAChain.objects.filter(pk=chains[0].pk).update(human_edited=True, version=2)
    QAChain.objects.filter(pk=chains[1].pk).update(status=ItemStatus.SUBMITTED)
    chains[2].delete()  # a draft someone deleted is drafted again
    # A chain pair a person opened and emptied, and a human MCQ without options.
    run_job(project, "relations", video=video)
    cp = ChainPair.objects.get(video=video, before_index=0)
    cp.relations.all().delete()
    ChainPair.objects.filter(pk=cp.pk).update(human_edited=True, machine_draft=None, version=3)
    ChainPair.objects.filter(video=video, before_index=1).delete()
    human_mcq = factories.MCQFactory(
        project=project, options=[], correct_index=None, status=ItemStatus.DRAFT, human_edited=True, video=video
    )
    frozen = _rows(chains[0].pk, chains[1].pk, cp.pk, human_mcq.pk)
    calls_before = LLMCall.objects.count()

    chains_job = run_job(project, "chains")
    options_job = run_job(project, "options")

    assert _rows(chains[0].pk, chains[1].pk, cp.pk, human_mcq.pk) == frozen
    assert chains_job.result["skipped_human"] == 2 and chains_job.result["created"] == 1
    assert options_job.result["skipped_human"] == 1 and options_job.result["calls"]["count"] == 0
    assert LLMCall.objects.count() == calls_before + 1  # only the deleted chain's clip
    # The pair 1→2 is gone and chain 2 is new: relations fill that gap only, never the edited pair.
    relations_job = run_job(project, "relations")
    assert relations_job.result["skipped_human"] == 1 and relations_job.result["created"] == 1
    assert _rows(chains[0].pk, chains[1].pk, cp.pk, human_mcq.pk) == frozen


def _rows(chain_a, chain_b, chain_pair, mcq):
    return (
        list(QAChain.objects.filter(pk__in=[chain_a, chain_b]).order_by("pk").values()),
        list(QAPair.objects.filter(chain_id__in=[chain_a, chain_b]).order_by("pk").values()),
        list(ChainPair.objects.filter(pk=chain_pair).values()),
        list(Relation.objects.filter(chain_pair_id=chain_pair).values()),
        list(MCQ.objects.filter(pk=mcq).values()),
    )


# --- Failures: each ends in success after retry, or a failed item with its reason ---------------------

CLIP_1 = "runs from 2 s to 4 s"


def _chain_call(marker: str) -> LLMCall:
    return next(c for c in LLMCall.objects.filter(step="qa_chain") if marker in json.dumps(c.request))


def test_malformed_json_is_repaired(project, video, fake):
    fake.script(CLIP_1, [Reply.text('{"turns": [{"question": "oops'), Reply.json(chain_answer("repaired"))])

    job = run_job(project, "chains")

    assert job.result["created"] == 3 and job.result["failed"] == []
    chain = QAChain.objects.get(clip__video=video, clip__index=1)
    assert chain.pairs.first().question.startswith("repaired")
    assert chain.draft_call.outcome == CallOutcome.REPAIRED
    assert "not valid JSON" in chain.draft_call.request["repair"]["problem"]


def test_truncated_answer_is_repaired(project, video, fake):
    fake.script(CLIP_1, [Reply.truncated(chain_answer("cut")), Reply.json(chain_answer("whole"))])

    job = run_job(project, "chains")

    assert job.result["created"] == 3
    chain = QAChain.objects.get(clip__video=video, clip__index=1)
    assert chain.draft_call.outcome == CallOutcome.REPAIRED and chain.pairs.first().question.startswith("whole")


def test_malformed_twice_is_a_failed_item_with_its_reason_and_call(project, video, fake):
    fake.script(CLIP_1, [Reply.text("Sure! Here are the questions."), Reply.text("not json either")])

    job = run_job(project, "chains")

    assert job.status == JobStatus.SUCCEEDED  # the other clips were drafted
    assert job.result["created"] == 2
    [failed] = job.result["failed"]
    clip = Clip.objects.get(video=video, index=1)
    assert (failed["item"], failed["clip"]) == (f"{video.name} clip 1", clip.pk)
    assert "not valid JSON" in failed["reason"]
    call = LLMCall.objects.get(pk=failed["call"])
    assert (call.outcome, call.step) == (CallOutcome.INVALID, "qa_chain")
    assert "1 failed" in job.message and "clip 1" in job.message
    assert not QAChain.objects.filter(clip=clip).exists()


def test_rate_limit_then_success(project, video, fake):
    fake.script(CLIP_1, [Reply.status(429, retry_after=0), Reply.json(chain_answer("after 429"))])

    job = run_job(project, "chains")

    assert job.result["created"] == 3 and job.result["failed"] == []
    call = QAChain.objects.get(clip__video=video, clip__index=1).draft_call
    assert (call.outcome, call.attempts) == (CallOutcome.OK, 2)
    assert call.request["attempt_log"][0]["status"] == 429


def test_timeout_fails_that_item_while_the_others_succeed_and_a_retry_fills_the_gap(project, video, fake, llm_settings):
    llm_settings.LLM_TIMEOUT_S = 0.4
    llm_settings.LLM_MAX_ATTEMPTS = 2
    fake.always(CLIP_1, Reply.delay(2.0))

    job = run_job(project, "chains")

    assert job.status == JobStatus.SUCCEEDED and job.result["created"] == 2
    [failed] = job.result["failed"]
    assert "gave up after 2 attempts; last: no answer within 0.4 s" in failed["reason"]
    assert LLMCall.objects.get(pk=failed["call"]).outcome == CallOutcome.TIMEOUT
    assert set(QAChain.objects.values_list("clip__index", flat=True)) == {0, 2}

    # The endpoint recovers; running the step again drafts only the clip that failed.
    fake.reset()
    fake.set_default(model)
    llm_settings.LLM_TIMEOUT_S = 5.0
    calls = LLMCall.objects.count()
    again = run_job(project, "chains")
    assert (again.result["created"], again.result["skipped_existing"]) == (1, 2)
    assert LLMCall.objects.count() == calls + 1 and len(fake.requests()) == 1
    assert set(QAChain.objects.values_list("clip__index", flat=True)) == {0, 1, 2}


def test_when_every_item_fails_the_job_fails_and_still_lists_each_reason(project, video, fake):
    fake.always(None, Reply.status(400, message="model not found"))

    job = run_job(project, "chains")

    assert job.status == JobStatus.FAILED
    assert "every item failed" in job.error and "model not found" in job.error
    assert len(job.result["failed"]) == 3
    assert all("model not found" in f["reason"] and f["call"] for f in job.result["failed"])
    # A retry of the failed job runs the same step over the same scope.
    fake.reset()
    fake.set_default(model)
    retried = job_retry(job=job)
    tasks.draft_chains(retried.pk)
    retried.refresh_from_db()
    assert retried.status == JobStatus.SUCCEEDED and retried.result["created"] == 3


def test_a_chain_of_the_wrong_length_is_refused_after_the_repair_round(project, video, fake):
    fake.always(CLIP_1, Reply.json(chain_answer("short", turns=3)))

    job = run_job(project, "chains")

    [failed] = job.result["failed"]
    assert "too short" in failed["reason"]
    # The repair request told the model what was wrong.
    repair = fake.requests(match=CLIP_1)[1]
    assert "too short" in repair.text
    assert LLMCall.objects.get(pk=failed["call"]).outcome == CallOutcome.INVALID


def test_the_schema_sent_carries_the_projects_turn_range_and_skills(video, project, fake):
    project.chain_min_turns, project.chain_max_turns = 5, 5
    project.taxonomies = {**project.taxonomies, "skills": [{"code": "II", "name": "Intention Inference"}]}
    project.save()
    fake.set_default(default_responder)  # the fake's own schema-valid example answer

    job = run_job(project, "chains", video=video)

    assert job.result["created"] == 3
    schema = fake.requests()[0].schema
    assert (schema["properties"]["turns"]["minItems"], schema["properties"]["turns"]["maxItems"]) == (5, 5)
    assert schema["properties"]["turns"]["items"]["properties"]["skill"]["enum"] == ["II"]
    assert set(QAPair.objects.values_list("skill", flat=True)) == {"II"}


def test_relations_skip_pairs_whose_chains_are_missing(project, video, fake):
    run_job(project, "chains")
    QAChain.objects.get(clip__video=video, clip__index=2).delete()

    job = run_job(project, "relations")

    assert job.result["created"] == 1
    assert job.result["skipped"] == [
        {
            "item": f"{video.name} chains 1→2",
            "video": video.pk,
            "before_index": 1,
            "reason": "no QA chain yet for clip 2",
        }
    ]


def test_an_empty_chain_pair_someone_opened_is_filled_and_its_version_moves_on(project, fake):
    video = factories.VideoFactory(project=project)
    chains = [
        factories.QAChainFactory(project=project, clip=factories.ClipFactory(video=video, index=i)) for i in range(2)
    ]
    for chain in chains:
        for i in range(3):
            factories.QAPairFactory(chain=chain, index=i)
    cp = ChainPair.objects.create(
        project=project, video=video, before_index=0, chain_before=chains[0], chain_after=chains[1], origin="human"
    )

    job = run_job(project, "relations")

    cp.refresh_from_db()
    assert job.result["created"] == 1
    # An editor still holding version 1 (no links) now gets a conflict instead of erasing the candidates.
    assert (cp.version, cp.human_edited, cp.status) == (2, False, "draft")
    assert [(r["from"], r["to"]) for r in cp.machine_draft["relations"]] == [(0, 1), (2, 0)]
    assert cp.relations.count() == 2 and cp.draft_call.step == "relations"


def test_relation_types_are_the_projects_own(project, video, fake):
    project.taxonomies = {
        **project.taxonomies,
        "relation_types": [{"code": "emotion", "label": "Emotion", "guideline": "Ask how the feeling changes."}],
    }
    project.save()
    run_job(project, "chains")
    fake.script(
        "Earlier clip",
        [Reply.json({"links": [{"before": 1, "after": 1, "type": "emotion", "reason": "Same mood."}]})],
        repeat=True,
    )

    job = run_job(project, "relations")

    assert job.result["counts"]["relations"] == 2
    assert set(Relation.objects.values_list("relation_type", flat=True)) == {"emotion"}
    request = fake.requests(match="Earlier clip")[0]
    assert request.schema["properties"]["links"]["items"]["properties"]["type"]["enum"] == ["emotion"]
    assert "emotion (Emotion): Ask how the feeling changes." in request.text


# --- Scope --------------------------------------------------------------------------------------------


def test_scope_one_video_a_selection_or_the_project(project, scene_file, fake):
    a = make_video(project, scene_file, name="a", clips=2)
    b = make_video(project, _copy(scene_file, "b"), name="b", clips=2)
    rejected = make_video(project, _copy(scene_file, "c"), name="c", clips=2)
    rejected.curation_status = CurationStatus.REJECTED
    rejected.save(update_fields=["curation_status"])

    one = run_job(project, "chains", video=a)
    assert one.target_id == a.pk and one.result["created"] == 2
    assert set(QAChain.objects.values_list("clip__video__name", flat=True)) == {"a"}

    selection = run_job(project, "chains", video_ids=[b.pk, rejected.pk])
    assert selection.params["video_ids"] == sorted([b.pk, rejected.pk])
    assert selection.result["created"] == 2
    assert selection.result["excluded_videos"] == [
        {"video": rejected.pk, "name": "c", "reason": "rejected by curation"}
    ]

    whole = run_job(project, "chains")
    assert whole.result["created"] == 0 and whole.result["skipped_existing"] == 4
    assert not QAChain.objects.filter(clip__video=rejected).exists()


def _copy(path: Path, stem: str) -> Path:
    """The same pictures as another file (a different hash), so a project can hold it twice."""
    target = path.with_name(f"{stem}.mp4")
    if not target.exists():
        target.write_bytes(path.read_bytes() + stem.encode())
    return target


def test_start_refuses_bad_input_with_a_clear_message(project, video):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="Unknown draft step"):
        draft_run_start(project=project, step="everything")
    with pytest.raises(ValidationError, match="Not a task of this project: cooking"):
        draft_run_start(project=project, step="seeds", tasks=["cooking"])
    with pytest.raises(ValidationError, match="holds no video"):
        draft_run_start(project=project, step="chains", video_ids=[])
    with pytest.raises(ValidationError, match="not in this project"):
        draft_run_start(project=project, step="chains", video=factories.VideoFactory())
    assert not BackgroundJob.objects.exists()


def test_seeds_more_asks_again_showing_the_library_and_skips_repeats(project, fake):
    run_job(project, "seeds", tasks=["video topic"])
    assert SeedQuestion.objects.count() == 3
    seed_update(seed=SeedQuestion.objects.first(), status=SeedStatus.REJECTED)
    fake.script(
        "Task: video topic",
        [Reply.json({"questions": [{"text": "What does the video topic look like (0)?"}, {"text": "Who speaks?"}]})],
    )

    skipped = run_job(project, "seeds", tasks=["video topic"])
    more = run_job(project, "seeds", tasks=["video topic"], more=True)

    assert skipped.result["skipped_existing"] == 1 and skipped.result["calls"]["count"] == 0
    assert more.result["created"] == 1  # the rejected text is not proposed again
    assert "What does the video topic look like (1)?" in fake.requests()[-1].text
    assert SeedQuestion.objects.filter(text="Who speaks?", status=SeedStatus.PROPOSED).exists()


def test_longvideobench_projects_draft_per_category_code(scene_file, fake):
    project = make_project(kind="longvideobench")
    video = make_video(project, scene_file)
    SeedQuestion.objects.create(
        project=project, task="E2O", text="When X happens, what object is there?", status="kept"
    )

    job = run_job(project, "mcqs", tasks=["E2O", "SSS"])

    assert job.result["created"] == 1 and job.result["skipped"][0]["task"] == "SSS"
    mcq = MCQ.objects.get()
    assert (mcq.category, mcq.level, mcq.task_group) == ("E2O", "L1-Perception", "")
    assert "Task: E2O (event-referred object)" in fake.requests()[0].text
    assert mcq.mcq_videos.get().video == video


def test_options_are_refused_when_the_model_repeats_itself(project, video, fake):
    mcq = MCQ.objects.create(project=project, question="What moves?", machine_draft={"answer": "A box"})
    MCQVideo.objects.create(mcq=mcq, video=video)
    fake.script(None, [Reply.json({"correct_answer": "A box", "distractors": ["a box", "A  BOX", "The bars"]})])

    job = run_job(project, "options")

    assert job.status == JobStatus.FAILED
    assert "only 1 distinct distractors" in job.result["failed"][0]["reason"]
    assert "Correct answer as proposed so far (may be empty; then propose it): A box" in fake.requests()[0].text
    mcq.refresh_from_db()
    assert (mcq.options, mcq.correct_index, mcq.version) == ([], None, 1)


# --- Parallel items --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_items_are_drafted_in_parallel_up_to_the_concurrency(scene_file, fake_openai, llm_settings):
    llm_settings.LLM_CONCURRENCY = 3
    fake_openai.set_default(model)
    fake_openai.latency_ms = 300
    project = make_project()
    video = video_import(project=project, source=scene_file, filename="six.mp4", process=False)
    video.status = VideoStatus.READY
    video.save(update_fields=["status"])
    for i in range(6):
        Clip.objects.create(video=video, index=i, start_s=float(i), end_s=float(i) + 1.0)

    summary = draft_step_run(project=project, step="chains")

    assert (summary.created, summary.failed) == (6, [])
    assert 2 <= fake_openai.max_in_flight <= 3
    assert QAChain.objects.count() == 6 and QAPair.objects.count() == 30
    assert LLMCall.objects.count() == 6
    # Each chain got its own clip's answer, whichever thread drafted it.
    for chain in QAChain.objects.select_related("clip"):
        assert chain.pairs.get(index=0).question.startswith(f"clip at {chain.clip.start_s:g}:")


def test_long_lists_in_a_result_are_cut_but_the_counts_stay_exact():
    from annotator.drafts import FAILED, LIST_LIMIT, DraftSummary, ItemResult

    summary = DraftSummary(step="chains")
    for n in range(LIST_LIMIT + 100):
        summary.record(f"clip {n}", {"clip": n}, ItemResult(FAILED, reason="HTTP 503"))

    result = summary.as_json()

    assert result["failed_count"] == LIST_LIMIT + 100 and len(result["failed"]) == LIST_LIMIT
    assert result["failed"][0] == {"item": "clip 0", "clip": 0, "reason": "HTTP 503", "call": None}
    assert summary.message().startswith(f"0 created; {LIST_LIMIT + 100} failed (first: clip 0: HTTP 503)")
