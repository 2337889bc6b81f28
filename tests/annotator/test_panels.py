"""What the editors show above the item: the person's lease, as static/js/lease.js expects it."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.models import ItemStatus
from reviewer.models import AssignmentStatus
from reviewer.workspace import panels_context
from tests import factories

pytestmark = pytest.mark.django_db


def lease_element(page: str) -> str:
    return page.split('<p class="lease"')[1].split("</p>")[0]


def test_the_chain_editor_renders_the_lease_of_the_person_holding_it(client, project, people):
    chain = factories.QAChainFactory(clip__video__project=project, status=ItemStatus.ANNOTATING)
    queue = factories.ReviewQueueFactory(project=project, stage="annotating", item_kind="qa_chain", lease_seconds=90)
    lease = factories.AssignmentFactory(item=chain, assignee=people["annotator"], stage="annotating", queue=queue)
    target = reverse("annotator:chain_editor", args=[project.slug, chain.pk])
    client.force_login(people["annotator"])
    page = client.get(target).text
    element = lease_element(page)
    heartbeat = reverse("api:assignment-heartbeat", kwargs={"slug": project.slug, "assignment_id": lease.pk})
    assert f'data-heartbeat-url="{heartbeat}"' in element and 'data-lease-seconds="90"' in element
    assert "data-lease " in element and f'data-lease-expires="{lease.lease_expires_at.isoformat()}' in element
    assert "Held for you until" in element and "js/lease.js" in page
    # Someone else looking at the same chain holds no lease: no element.
    client.force_login(people["admin"])
    assert 'class="lease"' not in client.get(target).text


@pytest.mark.parametrize("kind", ["pair", "mcq"])
def test_the_links_and_mcq_editors_render_it_too(client, project, people, kind):
    if kind == "pair":
        chain = factories.QAChainFactory(clip__video__project=project, clip__index=0, status=ItemStatus.ACCEPTED)
        item = factories.ChainPairFactory(chain_before=chain, status=ItemStatus.ANNOTATING)
        target = reverse("annotator:pair_editor", args=[project.slug, item.pk])
    else:
        video = factories.VideoFactory(project=project, duration_s=60.0, fps=25.0)
        item = factories.MCQFactory(project=project, video=video)
        target = reverse("annotator:mcq_editor", args=[project.slug, item.pk])
    lease = factories.AssignmentFactory(item=item, assignee=people["annotator"], stage="annotating")
    client.force_login(people["annotator"])
    element = lease_element(client.get(target).text)
    assert f"/assignments/{lease.pk}/heartbeat/" in element
    assert 'data-lease-seconds="14400"' in element  # no queue: the default lease length


def test_only_an_active_lease_counts_and_finding_it_is_one_query(project, people, django_assert_num_queries):
    chain = factories.QAChainFactory(clip__video__project=project, status=ItemStatus.ANNOTATING)
    user = people["annotator"]
    done = factories.AssignmentFactory(item=chain, assignee=user, stage="annotating", status=AssignmentStatus.COMPLETED)
    with django_assert_num_queries(1):
        context = panels_context(item=chain, user=user)
    assert {k: context[k] for k in ("feedback", "lease", "presence")} == {
        "feedback": None,
        "lease": None,
        "presence": [],
    }
    # Lapsed but still active (nobody took the item over): shown, and the page's heartbeat decides.
    past = timezone.now() - timedelta(hours=1)
    lapsed = factories.AssignmentFactory(
        item=chain, assignee=user, stage="annotating", leased_at=past, lease_expires_at=past + timedelta(minutes=1)
    )
    with django_assert_num_queries(1):
        found = panels_context(item=chain, user=user)["lease"]
    assert found == lapsed and found != done and found.seconds == 14400
