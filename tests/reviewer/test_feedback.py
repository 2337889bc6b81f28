"""Why an item came back (reviewer.feedback) and the panel the three editors show at the top."""

import sys
import types

import pytest
from django.urls import reverse

from annotator.lifecycle import item_submit, item_transition
from annotator.models import ItemStatus, QAPair, ReviewEvent
from reviewer.feedback import ADMIN, EXAMINER, JUDGE, item_feedback, reason_labels
from tests import factories

pytestmark = pytest.mark.django_db

COMMENTS = "Turn 3 repeats the chef's name; use 'she'."


@pytest.fixture
def chain(project, people):
    chain = factories.QAChainFactory(
        clip__video__project=project, clip__index=0, status=ItemStatus.ANNOTATING, author=people["annotator"]
    )
    QAPair.objects.bulk_create(
        QAPair(chain=chain, index=i, question=f"Q{i}?", answer=f"A{i}.", skill="ECA") for i in range(2)
    )
    return chain


@pytest.fixture
def checklists(monkeypatch):
    """A stand-in for reviewer.examination (written elsewhere) with the checklist labels."""
    module = types.ModuleType("reviewer.examination")
    module.CHECKLISTS = {
        "mcq": [
            {"code": "wrong_answer", "label": "The marked answer is wrong"},
            {"code": "bad_category", "label": "Wrong category"},
        ]
    }
    monkeypatch.setitem(sys.modules, "reviewer.examination", module)
    return module


def judge_fails(item, user, *, overall=62, threshold=90, old_score=False):
    if old_score:
        # A failing verdict of an earlier round: not what this round is about.
        factories.QualityScoreFactory(item=item, overall=10, comments="Old round.", threshold=threshold)
    item_submit(item=item, user=user)
    factories.QualityScoreFactory(
        item=item,
        overall=overall,
        threshold=threshold,
        dimensions={"accuracy": 95, "fluency": 40, "temporal_understanding": 70},
        comments=COMMENTS,
    )
    item_transition(item=item, to_status=ItemStatus.REVISING, reasons=["judge_below_threshold"], comment=COMMENTS)


def flag(item, people, reasons=("wrong_answer", "unknown_code"), comment="Option C is also right."):
    item_transition(item=item, to_status=ItemStatus.EXAMINING)
    item_transition(
        item=item, to_status=ItemStatus.FLAGGED, actor=people["examiner"], reasons=list(reasons), comment=comment
    )


def test_the_judges_scores_and_comments_of_this_round(chain, people, django_assert_num_queries):
    judge_fails(chain, people["annotator"], old_score=True)
    chain.refresh_from_db()
    with django_assert_num_queries(2):
        found = item_feedback(item=chain)
    assert found.source == JUDGE and (found.overall, found.threshold) == (62, 90)
    assert found.comment == COMMENTS and found.actor == ""
    assert [(d.name, d.score, d.below) for d in found.dimensions] == [  # weakest first
        ("fluency", 40, True),
        ("temporal_understanding", 70, True),
        ("accuracy", 95, False),
    ]
    assert found.dimensions[1].label == "Temporal understanding"
    assert found.headline == "The LLM judge scored this 62/100, below the threshold of 90."


def test_the_examiners_flag_with_checklist_labels(project, people, checklists, django_assert_num_queries):
    mcq = factories.MCQFactory(project=project, status=ItemStatus.SUBMITTED, author=people["annotator"])
    flag(mcq, people)
    with django_assert_num_queries(1):
        flagged = item_feedback(item=mcq)
    item_transition(item=mcq, to_status=ItemStatus.REVISING, actor=people["reviser"])
    # The revision started from the flag: the flag is what is shown.
    with django_assert_num_queries(1):
        revising = item_feedback(item=mcq)
    for found in (flagged, revising):
        assert found.source == EXAMINER and found.actor == people["examiner"].get_username()
        assert [(r.code, r.label) for r in found.reasons] == [
            ("wrong_answer", "The marked answer is wrong"),
            ("unknown_code", "unknown_code"),  # a code the checklist does not know is shown as it is
        ]
        assert found.comment == "Option C is also right."


def test_flag_reasons_are_codes_while_no_checklist_exists(project, people, monkeypatch):
    monkeypatch.setitem(sys.modules, "reviewer.examination", None)  # import fails: not written yet
    assert reason_labels() == {}
    mcq = factories.MCQFactory(project=project, status=ItemStatus.SUBMITTED)
    flag(mcq, people, reasons=["wrong_answer"])
    assert [r.label for r in item_feedback(item=mcq).reasons] == ["wrong_answer"]


@pytest.mark.parametrize(
    "checklists, expected",
    [
        ({"mcq": [{"code": "a", "label": "A"}], "qa_chain": [{"code": "b", "name": "B"}]}, {"a": "A", "b": "B"}),
        ({"mcq": [("a", "A"), ("b", "B")]}, {"a": "A", "b": "B"}),
        ({"a": "A", "b": "B"}, {"a": "A", "b": "B"}),
        ([types.SimpleNamespace(code="a", label="A")], {"a": "A"}),
    ],
)
def test_checklist_labels_are_read_from_any_plain_shape(monkeypatch, checklists, expected):
    module = types.ModuleType("reviewer.examination")
    module.CHECKLISTS = checklists
    monkeypatch.setitem(sys.modules, "reviewer.examination", module)
    assert reason_labels() == expected


def test_an_admins_reopen_of_accepted_work(project, people):
    cp = factories.ChainPairFactory(
        chain_before=factories.QAChainFactory(clip__video__project=project), status=ItemStatus.EXAMINING
    )
    item_transition(item=cp, to_status=ItemStatus.ACCEPTED, actor=people["examiner"])
    item_transition(item=cp, to_status=ItemStatus.REVISING, actor=people["admin"], comment="Link 2 is an Event.")
    # An admin's revert while revising logs revising → revising: still the reopen that counts.
    ReviewEvent.objects.create(
        project=project, from_status="revising", to_status="revising", comment="Reverted.", **ReviewEvent.ref_for(cp)
    )
    found = item_feedback(item=cp)
    assert (found.source, found.actor, found.comment) == (ADMIN, people["admin"].get_username(), "Link 2 is an Event.")
    assert found.headline == f"Admin {people['admin'].get_username()} reopened this for revision."


def test_nothing_to_say_outside_revision(chain, people, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert item_feedback(item=chain) is None  # annotating
    item_submit(item=chain, user=people["annotator"])
    with django_assert_num_queries(0):
        assert item_feedback(item=chain) is None
    bare = factories.QAChainFactory(status=ItemStatus.REVISING)
    assert item_feedback(item=bare) is None  # no move on record


# --- the panel in the editors ---------------------------------------------------------------------


def test_the_chain_editor_shows_the_judges_verdict_at_the_top(client, chain, people):
    judge_fails(chain, people["annotator"])
    client.force_login(people["annotator"])
    page = client.get(reverse("annotator:chain_editor", args=[chain.project.slug, chain.pk])).text
    panel = page.split('id="feedback"')[1].split("</section>")[0]
    assert "Why it came back" in panel and "scored this 62/100, below the threshold of 90" in panel
    assert '<tr class="below"><th scope="row">Fluency</th><td>40</td></tr>' in panel
    assert "use &#x27;she&#x27;" in panel and "the judge scores it afresh" in panel
    assert page.index('id="feedback"') < page.index('id="turns"')


def test_the_mcq_and_links_editors_show_the_flag_and_the_reopen(client, project, people, checklists):
    video = factories.VideoFactory(project=project, duration_s=60.0, fps=25.0)
    mcq = factories.MCQFactory(project=project, video=video, status=ItemStatus.SUBMITTED, author=people["annotator"])
    flag(mcq, people)
    item_transition(item=mcq, to_status=ItemStatus.REVISING, actor=people["reviser"])
    cp = factories.ChainPairFactory(
        chain_before=factories.QAChainFactory(clip__video__project=project), status=ItemStatus.ACCEPTED
    )
    item_transition(item=cp, to_status=ItemStatus.REVISING, actor=people["admin"], comment="Link 2 is an Event.")
    client.force_login(people["reviser"])
    page = client.get(reverse("annotator:mcq_editor", args=[project.slug, mcq.pk])).text
    panel = page.split('id="feedback"')[1].split("</section>")[0]
    assert f"Examiner {people['examiner'].get_username()} flagged this." in panel
    assert '<li data-code="wrong_answer">The marked answer is wrong</li>' in panel
    assert "Option C is also right." in panel
    page = client.get(reverse("annotator:pair_editor", args=[project.slug, cp.pk])).text
    assert "reopened this for revision" in page and "Link 2 is an Event." in page


def test_no_panel_while_annotating(client, chain, people):
    client.force_login(people["annotator"])
    page = client.get(reverse("annotator:chain_editor", args=[chain.project.slug, chain.pk])).text
    assert 'id="feedback"' not in page


def test_the_panel_costs_the_same_however_long_the_history(client, chain, people, django_assert_num_queries):
    judge_fails(chain, people["annotator"])
    client.force_login(people["annotator"])
    target = reverse("annotator:chain_editor", args=[chain.project.slug, chain.pk])
    client.get(target)
    with django_assert_num_queries(14) as first:  # the editor's 11, whose revision it is (1), the panel (2)
        client.get(target)
    for _ in range(3):
        item_submit(item=chain, user=people["annotator"])
        judge_fails_again = factories.QualityScoreFactory(item=chain, overall=50, comments="Still weak.")
        item_transition(item=chain, to_status=ItemStatus.REVISING, comment=judge_fails_again.comments)
    with django_assert_num_queries(len(first.captured_queries)):
        page = client.get(target).text
    assert "Still weak." in page
