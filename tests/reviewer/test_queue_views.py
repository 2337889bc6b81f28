from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.models import ItemStatus
from projects.models import Role
from reviewer.models import Assignment, AssignmentStatus, ReviewQueue
from tests import factories

pytestmark = pytest.mark.django_db

S = ItemStatus


@pytest.fixture
def examiners(project):
    users = []
    for i in range(2):
        user = factories.UserFactory(username=f"exam{i}")
        factories.MembershipFactory(project=project, user=user, role=Role.EXAMINER)
        users.append(user)
    return users


@pytest.fixture
def queue(project, people, examiners):
    return factories.ReviewQueueFactory(project=project, name="Examine MCQs", members=[people["examiner"], *examiners])


def _mcq(project, **kwargs):
    mcq = factories.MCQFactory(project=project, status=kwargs.pop("status", S.SCORED), **kwargs)
    type(mcq).objects.filter(pk=mcq.pk).update(submitted_at=timezone.now() - timedelta(minutes=mcq.pk))
    return mcq


def _url(name, project, *args):
    return reverse(f"reviewer:{name}", args=[project.slug, *args])


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def test_who_sees_the_queue_pages(client, project, people, queue):
    urls = [_url("queues", project), _url("queue_detail", project, queue.pk)]
    assert client.get(urls[0])["Location"].startswith("/accounts/login/")
    client.force_login(people["outsider"])
    assert [client.get(u).status_code for u in urls] == [404, 404]
    client.force_login(people["examiner"])
    assert [client.get(u).status_code for u in urls] == [200, 403]
    client.force_login(people["admin"])
    assert [client.get(u).status_code for u in urls] == [200, 200]
    assert client.get(_url("queue_detail", project, 999999)).status_code == 404
    other = factories.ReviewQueueFactory()  # another project's queue under this project's slug
    assert client.get(_url("queue_detail", project, other.pk)).status_code == 404


def test_members_see_their_queues_and_a_claim_button_others_see_none(client, project, people, queue):
    factories.ReviewQueueFactory(project=project, name="Hidden from members")
    client.force_login(people["examiner"])
    page = client.get(_url("queues", project)).text
    assert "Examine MCQs" in page and "Hidden from members" not in page and 'data-key="n"' in page
    client.force_login(people["annotator"])
    page = client.get(_url("queues", project)).text
    assert "You are in no review queue" in page and 'data-key="n"' not in page and "New queue" not in page


def test_the_list_shows_depth_and_leases_in_a_fixed_number_of_queries(
    client, project, people, queue, examiners, django_assert_max_num_queries
):
    items = [_mcq(project) for _ in range(3)]
    factories.AssignmentFactory(item=items[0], assignee=examiners[0], queue=queue)
    factories.AssignmentFactory(
        item=items[1], assignee=examiners[1], queue=queue, leased_at=timezone.now() - timedelta(hours=1)
    )
    for kind in ("qa_chain", "chain_pair"):  # one count query per kind, so every kind from the start
        factories.ReviewQueueFactory(project=project, item_kind=kind)
    client.force_login(people["admin"])
    client.get(_url("queues", project))  # warm the session
    with django_assert_max_num_queries(12) as captured:
        response = client.get(_url("queues", project))
    row = response.text.split(f'id="queue-{queue.pk}"')[1].split("</tr>")[0]
    assert '<td class="depth">2</td>' in row and '<td class="active">1</td>' in row
    assert '<td class="expired">1</td>' in row
    for kind in ("mcq", "qa_chain", "chain_pair", "mcq"):  # more queues: the same number of queries
        factories.ReviewQueueFactory(project=project, item_kind=kind)
    with django_assert_max_num_queries(len(captured)):
        client.get(_url("queues", project))


def test_an_admin_creates_a_queue_and_bad_input_is_kept_with_reasons(client, project, people, examiners):
    video = factories.VideoFactory(project=project, name="cooking_01")
    client.force_login(people["admin"])
    data = {
        "name": "E2O examiners",
        "stage": "examining",
        "item_kind": "mcq",
        "categories": "E2O, S2A",
        "duration_groups": ["600"],
        "score_min": "",
        "score_max": "",
        "video_ids": "cooking_01\nno_such_video",
        "members": [str(examiners[0].pk), str(people["annotator"].pk)],
        "priority": "3",
        "overlap": "2",
        "lease_minutes": "20",
        "is_active": "on",
    }
    response = client.post(_url("queues", project), data)
    assert response.status_code == 200 and "No video named no_such_video in this project." in response.text
    assert 'value="E2O, S2A"' in response.text  # the input is kept
    assert not ReviewQueue.objects.exists()
    data["video_ids"] = f"cooking_01, {video.pk}"
    response = client.post(_url("queues", project), data)
    assert "cannot work at the examining stage" in response.text and not ReviewQueue.objects.exists()
    data["members"] = [str(examiners[0].pk)]
    response = client.post(_url("queues", project), data)
    queue = ReviewQueue.objects.get()
    assert response["Location"] == _url("queue_detail", project, queue.pk)
    assert queue.filters == {"categories": ["E2O", "S2A"], "duration_groups": [600], "video_ids": [video.pk]}
    assert (queue.overlap, queue.lease_seconds, queue.priority) == (2, 1200, 3)
    assert list(queue.members.all()) == [examiners[0]]
    client.force_login(people["examiner"])
    assert client.post(_url("queues", project), data).status_code == 403


def test_an_admin_edits_a_queue(client, project, people, queue):
    client.force_login(people["admin"])
    page = client.get(_url("queue_detail", project, queue.pk)).text
    assert 'value="Examine MCQs"' in page
    data = {
        "name": "Examine MCQs",
        "stage": "examining",
        "item_kind": "mcq",
        "score_min": "120",
        "members": [str(people["examiner"].pk)],
        "priority": "0",
        "overlap": "1",
        "lease_minutes": "30",
    }
    response = client.post(_url("queue_detail", project, queue.pk), data)
    assert response.status_code == 200 and "Ensure this value is less than or equal to 100." in response.text
    data["score_min"] = "80"
    assert client.post(_url("queue_detail", project, queue.pk), data).status_code == 302
    queue.refresh_from_db()
    assert queue.filters == {"score_min": 80} and not queue.is_active
    assert list(queue.members.all()) == [people["examiner"]]


def test_bulk_assign_reports_what_was_and_was_not_assigned(client, project, people, queue, examiners):
    ok = _mcq(project)
    written = _mcq(project, author=examiners[0])
    client.force_login(people["admin"])
    response = client.post(
        _url("queue_assign", project, queue.pk), {"item": [ok.pk, written.pk], "assignee": examiners[0].pk}, follow=True
    )
    notes = _messages(response)
    assert "Assigned 1 item to exam0." in notes
    assert any(f"#{written.pk}: exam0 wrote it" in n for n in notes)
    assert Assignment.objects.get().mcq == ok and Assignment.objects.get().assigned_by == people["admin"]
    page = response.text
    assert f'id="lease-{Assignment.objects.get().pk}"' in page
    response = client.post(_url("queue_assign", project, queue.pk), {"item": [ok.pk]}, follow=True)
    assert "Tick at least one item and choose who gets them." in _messages(response)
    response = client.post(
        _url("queue_assign", project, queue.pk), {"item": [ok.pk], "assignee": people["annotator"].pk}, follow=True
    )
    assert "Tick at least one item and choose who gets them." in _messages(response)  # not an examiner: no choice


def test_admins_reassign_and_release_leases(client, project, people, queue, examiners):
    item = _mcq(project)
    lease = factories.AssignmentFactory(item=item, assignee=examiners[0], queue=queue)
    client.force_login(people["admin"])
    url = _url("queue_leases", project, queue.pk)
    response = client.post(url, {"lease": [lease.pk], "assignee": examiners[1].pk, "action": "reassign"}, follow=True)
    assert "Reassigned 1 item to exam1." in _messages(response)
    moved = Assignment.objects.get(status=AssignmentStatus.ACTIVE)
    assert moved.assignee == examiners[1] and Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.RELEASED
    response = client.post(url, {"lease": [moved.pk], "action": "release"}, follow=True)
    assert "Released 1 lease; the items are free." in _messages(response)
    assert not Assignment.objects.filter(status=AssignmentStatus.ACTIVE).exists()
    client.force_login(people["examiner"])
    assert client.post(url, {"lease": [moved.pk], "action": "release"}).status_code == 403


def test_claim_opens_the_item_and_says_so_when_nothing_is_left(client, project, people, queue):
    chain_queue = factories.ReviewQueueFactory(
        project=project, item_kind="qa_chain", priority=9, members=[people["examiner"]]
    )
    chain = factories.QAChainFactory(clip__video__project=project, status=S.SCORED)
    mcq = _mcq(project)
    client.force_login(people["examiner"])
    assert client.get(_url("claim_next", project)).status_code == 405  # claims change state: POST only
    # Examining: the examine page, where the verdict keys are (the editor is read-only at this stage).
    assert client.post(_url("claim_next", project))["Location"] == f"/p/{project.slug}/examine/qa_chain/{chain.pk}/"
    assert client.post(_url("queue_claim", project, queue.pk))["Location"] == f"/p/{project.slug}/examine/mcq/{mcq.pk}/"
    response = client.post(_url("queue_claim", project, chain_queue.pk), follow=True)
    assert response.redirect_chain[-1][0] == _url("queues", project)
    assert f"Nothing is waiting for you in {chain_queue.name}." in _messages(response)
    page = response.text
    assert f"/p/{project.slug}/mcqs/{mcq.pk}/" in page and "Your leases" in page
    client.force_login(people["annotator"])
    response = client.post(_url("queue_claim", project, queue.pk), follow=True)
    assert any("does not include examining" in n for n in _messages(response))


def test_a_reviser_claims_a_flagged_item_into_revision_and_its_editor_opens_editable(client, project, people):
    """The queues page's claim does what "Start revising" does: flagged → revising, then the editor."""
    flagged = _mcq(project, status=S.FLAGGED)
    factories.ReviewQueueFactory(project=project, stage=S.REVISING, members=[people["reviser"]])
    client.force_login(people["reviser"])
    response = client.post(_url("claim_next", project), follow=True)
    assert response.redirect_chain[-1][0] == f"/p/{project.slug}/mcqs/{flagged.pk}/"
    assert "You are revising this item: fix what was flagged, then submit it again." in _messages(response)
    flagged.refresh_from_db()
    assert flagged.status == S.REVISING
    assert Assignment.objects.get().assignee == people["reviser"]


def test_people_give_back_their_own_leases_only(client, project, people, queue, examiners):
    lease = factories.AssignmentFactory(item=_mcq(project), assignee=examiners[0], queue=queue)
    url = _url("lease_release", project, lease.pk)
    client.force_login(examiners[1])
    assert client.post(url).status_code == 403
    client.force_login(examiners[0])
    response = client.post(url, follow=True)
    assert "Lease released; the item is back in its queue." in _messages(response)
    response = client.post(url, follow=True)
    assert "This lease is already released." in _messages(response)
    client.force_login(people["outsider"])
    assert client.post(url).status_code == 404


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_pressing_n_claims_the_next_item_and_opens_it(page, live_server, project, people, queue):
    mcq = _mcq(project)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", people["examiner"].username)
    page.fill("input[name=password]", factories.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.goto(f"{live_server.url}{_url('queues', project)}")
    page.keyboard.press("n")
    page.wait_for_url(f"{live_server.url}/p/{project.slug}/examine/mcq/{mcq.pk}/")
    lease = Assignment.objects.get()
    assert (lease.mcq_id, lease.assignee_id, lease.status) == (mcq.pk, people["examiner"].pk, AssignmentStatus.ACTIVE)
