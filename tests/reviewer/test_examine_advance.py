"""After a verdict the examiner stays unless they (or the queue) chose to open the next item."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.models import ItemStatus
from reviewer.models import ReviewQueue
from reviewer.queues import DEFAULT_LEASE_SECONDS, queue_claim_next
from tests import factories

pytestmark = pytest.mark.django_db
CHECKBOX = 'name="then_next" value="1"'


def _mcq(project, people):
    mcq = factories.MCQFactory(
        project=project,
        status=ItemStatus.SCORED,
        author=people["annotator"],
        video=factories.VideoFactory(project=project),
    )
    type(mcq).objects.filter(pk=mcq.pk).update(submitted_at=timezone.now() - timedelta(minutes=5))
    return mcq


def _checked(page: str) -> bool:
    return CHECKBOX + " checked" in page


def test_a_queue_lasts_a_working_session_and_does_not_advance_by_default(project):
    queue = ReviewQueue.objects.create(project=project, name="q", stage=ItemStatus.EXAMINING, item_kind="mcq")
    assert queue.lease_seconds == DEFAULT_LEASE_SECONDS >= 4 * 3600
    assert queue.auto_advance is False and queue.heartbeat_seconds == 60


def test_no_next_item_unless_chosen_then_the_choice_is_remembered(client, project, people):
    first, second = _mcq(project, people), _mcq(project, people)
    client.force_login(people["examiner"])
    page = client.get(reverse("reviewer:examine_item", args=[project.slug, "mcq", first.pk])).text
    assert not _checked(page)

    ok = ["category_right", "referring_query_marked", "moments_stamped", "options_plausible", "one_correct"]
    ok += ["needs_video", "other"]
    url = reverse("reviewer:examine_verdict", args=[project.slug, "mcq", first.pk])
    response = client.post(url, {"decision": "pass", "ok": ok, "version": first.version})
    # Back to the examiner's page (n there takes the next one): nothing is claimed meanwhile.
    assert response["Location"] == reverse("reviewer:examine_home", args=[project.slug])

    # Ticking "then open the next item" is remembered for the next verdicts.
    url = reverse("reviewer:examine_verdict", args=[project.slug, "mcq", second.pk])
    response = client.post(url, {"decision": "pass", "ok": ok, "version": second.version, "then_next": "1"})
    assert response.status_code == 302
    third = _mcq(project, people)
    page = client.get(reverse("reviewer:examine_item", args=[project.slug, "mcq", third.pk])).text
    assert _checked(page)


def test_a_queue_may_choose_to_advance(client, project, people):
    queue = factories.ReviewQueueFactory(
        project=project, members=[people["examiner"]], auto_advance=True, heartbeat_seconds=45
    )
    mcq = _mcq(project, people)
    queue_claim_next(queue=queue, user=people["examiner"])
    client.force_login(people["examiner"])
    page = client.get(reverse("reviewer:examine_item", args=[project.slug, "mcq", mcq.pk])).text
    assert _checked(page)
    assert 'data-heartbeat-s="45"' in page
