"""Who edits an item in revision: its author after the LLM judge sent it back, a reviser after a flag."""

import json

import pytest
from django.urls import reverse

from annotator.edit_rights import may_edit, why_not_editable
from annotator.lifecycle import item_transition
from annotator.models import ItemStatus, QAPair
from tests import factories

pytestmark = pytest.mark.django_db


def make(kind, project, author):
    if kind == "chain":
        item = factories.QAChainFactory(clip__video__project=project, status=ItemStatus.SUBMITTED, author=author)
        QAPair.objects.bulk_create(
            QAPair(chain=item, index=i, question=f"Q{i}?", answer=f"A{i}.", skill="ECA") for i in range(2)
        )
        return item
    if kind == "pair":
        chain = factories.QAChainFactory(clip__video__project=project, clip__index=0, status=ItemStatus.ACCEPTED)
        return factories.ChainPairFactory(chain_before=chain, status=ItemStatus.SUBMITTED, author=author)
    video = factories.VideoFactory(project=project, duration_s=60.0, fps=25.0)
    return factories.MCQFactory(project=project, video=video, status=ItemStatus.SUBMITTED, author=author)


def judge_sends_back(item):
    item_transition(item=item, to_status=ItemStatus.REVISING, reasons=["judge_below_threshold"], comment="Low.")


def examiner_flags(item, people):
    item_transition(item=item, to_status=ItemStatus.EXAMINING)
    item_transition(item=item, to_status=ItemStatus.FLAGGED, actor=people["examiner"], reasons=["wrong_answer"])
    item_transition(item=item, to_status=ItemStatus.REVISING, actor=people["reviser"])


KINDS = ["chain", "pair", "mcq"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_judge_sends_an_item_back_to_its_author(kind, project, people):
    item = make(kind, project, people["annotator"])
    judge_sends_back(item)
    other_annotator = factories.MembershipFactory(project=project, role="annotator").user
    assert may_edit(people["annotator"], project, item)
    assert may_edit(people["admin"], project, item)  # an admin may step in
    assert not may_edit(people["reviser"], project, item)
    assert not may_edit(other_annotator, project, item)
    assert not may_edit(people["examiner"], project, item)
    assert "back to the annotator who wrote it" in why_not_editable(people["reviser"], project, item)


@pytest.mark.parametrize("kind", KINDS)
def test_a_flagged_item_goes_to_a_reviser_never_its_author(kind, project, people):
    item = make(kind, project, people["annotator"])
    examiner_flags(item, people)
    assert may_edit(people["reviser"], project, item)
    assert not may_edit(people["annotator"], project, item)
    assert "You wrote this" in why_not_editable(people["annotator"], project, item, "item")
    factories.MembershipFactory(project=project, user=people["annotator"], role="reviser")
    assert not may_edit(people["annotator"], project, item)  # a reviser still never revises their own work


def test_drafts_are_any_annotators_and_reviewed_work_nobodys(project, people):
    item = make("mcq", project, people["annotator"])
    assert not may_edit(people["annotator"], project, item)  # submitted
    item.status = ItemStatus.ANNOTATING
    assert may_edit(people["annotator"], project, item) and may_edit(people["admin"], project, item)
    assert not may_edit(people["reviser"], project, item)


def post(client, target, body):
    return client.post(target, data=json.dumps(body), content_type="application/json")


def test_the_editors_follow_the_same_rule(client, project, people):
    """The chain, links and MCQ editors each let the author save a judge-returned item, not a reviser."""
    chain = make("chain", project, people["annotator"])
    cp = make("pair", project, people["annotator"])
    mcq = make("mcq", project, people["annotator"])
    for item in (chain, cp, mcq):
        judge_sends_back(item)
    pairs = list(chain.pairs.all())
    saves = [
        (
            reverse("annotator:chain_save", args=[project.slug, chain.pk]),
            {"version": 1, "pairs": [{"id": p.pk, "question": "New?", "answer": "Yes.", "skill": ""} for p in pairs]},
        ),
        (
            reverse("annotator:pair_link_add", args=[project.slug, cp.pk]),
            {
                "version": 1,
                "from": factories.QAPairFactory(chain=cp.chain_before, index=0).pk,
                "to": factories.QAPairFactory(chain=cp.chain_after, index=0).pk,
                "type": "action",
            },
        ),
        (reverse("annotator:mcq_save", args=[project.slug, mcq.pk]), {"version": 1, "data": {"question": "Why?"}}),
    ]
    client.force_login(people["reviser"])
    for target, body in saves:
        response = post(client, target, body)
        assert response.status_code == 403, target
        assert "back to the annotator who wrote it" in response.json()["error"]
    client.force_login(people["annotator"])
    assert [post(client, target, body).status_code for target, body in saves] == [200, 200, 200]
    page = client.get(reverse("annotator:chain_editor", args=[project.slug, chain.pk]))
    assert page.context["editable"] is True
