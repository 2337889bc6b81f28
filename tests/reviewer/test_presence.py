"""Who else has an item open: leases and presence marks, merged per person; the beat endpoint."""

import datetime as dt

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from annotator.models import ItemStatus
from reviewer.models import Assignment, AssignmentStatus
from reviewer.presence import PRESENCE_TTL_S, item_presence, presence_clear, presence_label, presence_mark
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def setup():
    project = factories.ProjectFactory()
    people = factories.people_for(project)
    mcq = factories.MCQFactory(project=project, status=ItemStatus.EXAMINING)
    return project, people, mcq


def test_an_open_page_is_seen_by_others_not_by_oneself(setup):
    project, people, mcq = setup
    t0 = timezone.now()
    presence_mark(kind="mcq", item_id=mcq.pk, user=people["annotator"], now=t0)
    presence_mark(kind="mcq", item_id=mcq.pk, user=people["annotator"], now=t0 + dt.timedelta(seconds=30))
    assert item_presence(item=mcq, user=people["annotator"]) == []
    others = item_presence(item=mcq, user=people["admin"], now=t0 + dt.timedelta(seconds=40))
    assert [o["name"] for o in others] == [people["annotator"].get_full_name() or people["annotator"].username]
    assert abs((others[0]["since"] - t0).total_seconds()) < 1  # since it was opened, not since the last beat
    assert presence_label(others).startswith("Open by ")
    # Not renewed: gone.
    later = t0 + dt.timedelta(seconds=30 + PRESENCE_TTL_S)
    assert item_presence(item=mcq, user=people["admin"], now=later) == []
    presence_mark(kind="mcq", item_id=mcq.pk, user=people["annotator"])
    presence_clear(kind="mcq", item_id=mcq.pk, user=people["annotator"])
    assert item_presence(item=mcq, user=people["admin"]) == []


def test_a_live_lease_of_someone_else_counts(setup, django_assert_num_queries):
    project, people, mcq = setup
    now = timezone.now()
    Assignment.objects.create(
        project=project,
        stage=ItemStatus.EXAMINING,
        assignee=people["examiner"],
        status=AssignmentStatus.ACTIVE,
        leased_at=now - dt.timedelta(minutes=5),
        lease_expires_at=now + dt.timedelta(hours=1),
        **Assignment.ref_for(mcq),
    )
    with django_assert_num_queries(1):
        others = item_presence(item=mcq, user=people["admin"])
    assert [o["since"] for o in others] == [now - dt.timedelta(minutes=5)]
    assert item_presence(item=mcq, user=people["examiner"]) == []


def test_the_beat_marks_and_answers_with_the_others(client, setup):
    project, people, mcq = setup
    url = reverse("reviewer:item_presence", args=[project.slug, "mcq", mcq.pk])
    client.force_login(people["annotator"])
    assert client.post(url).json() == {"others": [], "label": ""}
    client.force_login(people["admin"])
    body = client.post(url).json()
    assert len(body["others"]) == 1 and body["label"].startswith("Open by ")
    client.force_login(people["annotator"])
    client.post(url, {"closed": "1"})
    client.force_login(people["admin"])
    assert client.post(url).json()["others"] == []
    assert client.post(reverse("reviewer:item_presence", args=[project.slug, "nope", mcq.pk])).status_code == 404
