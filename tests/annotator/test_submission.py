"""Submitting from the editors: through the LLM quality gate, and the submitter's lease completed."""

import json

import pytest
from django.urls import reverse

from annotator.chains import ChainInvalid, chain_submit
from annotator.lifecycle import item_history, item_transition
from annotator.mcqs import mcq_create, mcq_save, mcq_submit
from annotator.models import ItemStatus, QAPair, VideoRole
from annotator.relations import chain_pair_submit
from jobs.models import BackgroundJob
from reviewer.models import Assignment, AssignmentStatus
from reviewer.quality_gate import JUDGE_TASK, REASON_GATE_OFF
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sent(monkeypatch):
    """What reached the worker: nothing is really sent, the test reads the list."""
    messages = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task",
        lambda name, args: messages.append((name, args)) or type("R", (), {"id": "task-1"})(),
    )
    return messages


@pytest.fixture
def chain(project):
    chain = factories.QAChainFactory(clip__video__project=project, clip__index=0, status=ItemStatus.ANNOTATING)
    QAPair.objects.bulk_create(
        QAPair(chain=chain, index=i, question=f"What happens at step {i}?", answer=f"Step {i}.", skill="ECA")
        for i in range(5)
    )
    return chain


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, name="kitchen", duration_s=60.0, fps=25.0)


def ready_mcq(project, video, user):
    mcq = mcq_create(project=project, videos=[(video, VideoRole.MAIN)], user=user)
    return mcq_save(
        mcq=mcq,
        expected_version=mcq.version,
        user=user,
        question="When the chef lifts the pan, what colour is the sauce?",
        referring_start=0,
        referring_end=27,
        question_wo_referring_query=None,
        options=["Red", "Green", "Brown", "White"],
        correct_index=0,
        category="E2O",
        level="",
        videos=[{"video_id": video.pk, "role": "main", "order": 0}],
        moments=[{"video_id": video.pk, "time_s": 12.5, "frame_index": 0}],
    ).mcq


def lease(item, user, stage=ItemStatus.ANNOTATING, **kw):
    return factories.AssignmentFactory(item=item, assignee=user, stage=stage, **kw)


def test_a_chain_goes_to_the_judge_and_the_job_is_sent_only_on_commit(
    chain, people, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = chain_submit(chain=chain, user=people["annotator"], expected_version=1)
    job = BackgroundJob.objects.get()
    assert (job.kind, job.target_type, job.target_id) == (JUDGE_TASK, "annotator.qachain", chain.pk)
    assert job.params["submitted_version"] == 1
    assert sent == []  # not before the transaction committed
    for callback in callbacks:
        callback()
    assert sent == [(JUDGE_TASK, [job.pk])]
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED  # waits for the judge
    assert result.outcome == "judge" and result.gate.job == job
    assert result.message("Chain").startswith("Chain submitted and sent to the LLM judge")


def test_with_the_gate_off_a_chain_goes_straight_to_examining(chain, people, sent):
    chain.project.judge_enabled = False
    chain.project.save()
    result = chain_submit(chain=chain, user=people["annotator"], expected_version=1)
    chain.refresh_from_db()
    assert chain.status == ItemStatus.EXAMINING and result.outcome == "examining"
    assert [(e.from_status, e.to_status) for e in item_history(item=chain)] == [
        (ItemStatus.ANNOTATING, ItemStatus.SUBMITTED),
        (ItemStatus.SUBMITTED, ItemStatus.EXAMINING),
    ]
    assert item_history(item=chain)[-1].reasons == [REASON_GATE_OFF]
    assert not BackgroundJob.objects.exists() and sent == []
    assert result.message("Chain") == "Chain submitted and passed on to examiners."


def test_mcqs_skip_the_judge_by_default_and_go_to_it_when_the_project_covers_them(project, video, people):
    mcq = ready_mcq(project, video, people["annotator"])
    mcq_submit(mcq=mcq, user=people["annotator"], expected_version=mcq.version)
    assert mcq.status == ItemStatus.EXAMINING and not BackgroundJob.objects.exists()

    project.models_per_step = {"judge_kinds": ["qa_chain", "mcq"]}
    project.save()
    other = ready_mcq(project, video, people["annotator"])
    result = mcq_submit(mcq=other, user=people["annotator"], expected_version=other.version)
    assert other.status == ItemStatus.SUBMITTED and result.outcome == "judge"
    assert BackgroundJob.objects.get().target_id == other.pk


def test_links_of_a_chain_pair_go_to_examining_unless_the_gate_covers_them(project, people):
    chain = factories.QAChainFactory(clip__video__project=project, clip__index=0, status=ItemStatus.ACCEPTED)
    cp = factories.ChainPairFactory(chain_before=chain, status=ItemStatus.ANNOTATING)
    result = chain_pair_submit(chain_pair=cp, user=people["annotator"], expected_version=1)
    assert cp.status == ItemStatus.EXAMINING and result.outcome == "examining"

    project.models_per_step = {"judge_kinds": ["chain_pair"]}
    project.save()
    chain2 = factories.QAChainFactory(clip__video=chain.clip.video, clip__index=5, status=ItemStatus.ACCEPTED)
    gated = factories.ChainPairFactory(chain_before=chain2, status=ItemStatus.ANNOTATING)
    assert chain_pair_submit(chain_pair=gated, user=people["annotator"], expected_version=1).outcome == "judge"
    assert gated.status == ItemStatus.SUBMITTED
    job = BackgroundJob.objects.get()
    assert (job.target_type, job.target_id) == ("annotator.chainpair", gated.pk)


def test_the_submitters_lease_is_completed_and_nobody_elses(chain, people):
    mine = lease(chain, people["annotator"])
    colleague = factories.MembershipFactory(project=chain.project, role="annotator").user
    theirs = lease(chain, colleague)  # someone else's lease on the same item stays theirs
    result = chain_submit(chain=chain, user=people["annotator"], expected_version=1)
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.status == AssignmentStatus.COMPLETED and mine.completed_at is not None
    assert theirs.status == AssignmentStatus.ACTIVE
    assert [a.pk for a in result.leases] == [mine.pk]


def test_a_reviser_resubmitting_completes_their_revising_lease(project, video, people):
    mcq = ready_mcq(project, video, people["annotator"])
    mcq_submit(mcq=mcq, user=people["annotator"], expected_version=mcq.version)
    item_transition(item=mcq, to_status=ItemStatus.FLAGGED, actor=people["examiner"])
    item_transition(item=mcq, to_status=ItemStatus.REVISING, actor=people["reviser"])
    held = lease(mcq, people["reviser"], stage=ItemStatus.REVISING)
    mcq_submit(mcq=mcq, user=people["reviser"])
    held.refresh_from_db()
    assert held.status == AssignmentStatus.COMPLETED and mcq.status == ItemStatus.EXAMINING


def test_a_refused_submit_leaves_no_job_and_the_lease_held(project, people):
    empty = factories.QAChainFactory(clip__video__project=project, clip__index=0, status=ItemStatus.ANNOTATING)
    held = lease(empty, people["annotator"])
    with pytest.raises(ChainInvalid):
        chain_submit(chain=empty, user=people["annotator"], expected_version=1)
    held.refresh_from_db()
    assert held.status == AssignmentStatus.ACTIVE and not BackgroundJob.objects.exists()


def post(client, target, body):
    return client.post(target, data=json.dumps(body), content_type="application/json")


def test_the_submit_endpoints_say_where_the_item_went(client, chain, project, video, people):
    client.force_login(people["annotator"])
    response = post(client, reverse("annotator:chain_submit", args=[project.slug, chain.pk]), {"version": 1})
    body = response.json()
    assert response.status_code == 200 and body["status"] == "submitted" and body["outcome"] == "judge"
    assert "sent to the LLM judge" in body["message"]
    # The editor stays on the chain and says it there: no message waits on the next page.
    page = client.get(reverse("annotator:work", args=[project.slug]))
    assert "Chain submitted and sent to the LLM judge" not in page.text

    mcq = ready_mcq(project, video, people["annotator"])
    response = post(client, reverse("annotator:mcq_submit", args=[project.slug, mcq.pk]), {"version": mcq.version})
    body = response.json()
    assert (body["status"], body["outcome"]) == ("examining", "examining")
    assert body["message"] == "MCQ submitted and passed on to examiners."
    assert Assignment.objects.filter(status=AssignmentStatus.ACTIVE).count() == 0
