import pytest

from annotator.concurrency import StaleVersion, version_claim
from annotator.lifecycle import (
    REVISION_AUTHOR,
    REVISION_REVISER,
    TransitionRefused,
    item_history,
    item_submit,
    item_transition,
    revision_owner,
)
from annotator.models import ItemStatus, ReviewEvent
from tests import factories

pytestmark = pytest.mark.django_db


def test_submit_logs_an_event_and_stamps_the_time(people):
    chain = factories.QAChainFactory(status=ItemStatus.ANNOTATING)
    result = item_submit(item=chain, user=people["annotator"])
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED and chain.submitted_at
    assert result.event.from_status == ItemStatus.ANNOTATING and result.event.actor == people["annotator"]
    assert [e.to_status for e in item_history(item=chain)] == [ItemStatus.SUBMITTED]


def test_refused_transitions_change_nothing():
    mcq = factories.MCQFactory(status=ItemStatus.ANNOTATING)
    with pytest.raises(TransitionRefused, match="cannot become accepted"):
        item_transition(item=mcq, to_status=ItemStatus.ACCEPTED)
    with pytest.raises(TransitionRefused, match="someone acted on it"):
        item_transition(item=mcq, to_status=ItemStatus.SUBMITTED, expect_from=ItemStatus.DRAFT)
    mcq.refresh_from_db()
    assert mcq.status == ItemStatus.ANNOTATING and not ReviewEvent.objects.exists()


def test_only_one_of_two_saves_from_the_same_version_wins(people):
    chain = factories.QAChainFactory()
    assert version_claim(item=chain, expected=1, user=people["annotator"]) == 2
    stale = type(chain).objects.get(pk=chain.pk)
    stale.version = 1
    with pytest.raises(StaleVersion) as excinfo:
        version_claim(item=stale, expected=1, user=people["admin"])
    assert excinfo.value.item.version == 2
    chain.refresh_from_db()
    assert chain.human_edited and chain.author == people["annotator"] and chain.version == 2


# --- whose an item in revision is (revision_owner) ---------------------------------------------------


def _to_revising_by_the_judge(item, user):
    item_submit(item=item, user=user)
    item_transition(item=item, to_status=ItemStatus.REVISING, reasons=["judge_below_threshold"])


def test_an_item_the_judge_sent_back_is_its_authors(people):
    chain = factories.QAChainFactory(status=ItemStatus.ANNOTATING, author=people["annotator"])
    _to_revising_by_the_judge(chain, people["annotator"])
    assert revision_owner(item=chain) == REVISION_AUTHOR
    # An admin's revert while it is being revised logs revising → revising: no move into revision.
    ReviewEvent.objects.create(
        project=chain.project, from_status="revising", to_status="revising", **ReviewEvent.ref_for(chain)
    )
    assert revision_owner(item=chain) == REVISION_AUTHOR


def test_a_flagged_or_reopened_item_is_for_revisers(people):
    mcq = factories.MCQFactory(status=ItemStatus.EXAMINING)
    item_transition(item=mcq, to_status=ItemStatus.FLAGGED, actor=people["examiner"])
    item_transition(item=mcq, to_status=ItemStatus.REVISING, actor=people["reviser"])
    assert revision_owner(item=mcq) == REVISION_REVISER

    chain = factories.QAChainFactory(status=ItemStatus.ANNOTATING)
    _to_revising_by_the_judge(chain, people["annotator"])
    item_submit(item=chain, user=people["annotator"])
    item_transition(item=chain, to_status=ItemStatus.EXAMINING)
    item_transition(item=chain, to_status=ItemStatus.ACCEPTED, actor=people["examiner"])
    item_transition(item=chain, to_status=ItemStatus.REVISING, actor=people["admin"], comment="Turn 2 is wrong.")
    assert revision_owner(item=chain) == REVISION_REVISER  # the latest move counts, not the first


def test_an_item_with_no_move_into_revision_on_record_is_for_revisers():
    assert revision_owner(item=factories.ChainPairFactory(status=ItemStatus.REVISING)) == REVISION_REVISER
