import pytest

from annotator.concurrency import StaleVersion, version_claim
from annotator.models import ItemStatus
from reviewer.models import ReviewEvent
from reviewer.workflow import TransitionRefused, item_history, item_submit, item_transition
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
