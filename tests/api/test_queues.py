from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.models import ItemStatus
from projects.models import Role
from reviewer.models import Assignment, AssignmentStatus
from tests import factories

from .error_shape import assert_error

pytestmark = pytest.mark.django_db

S = ItemStatus
A = AssignmentStatus
ASSIGNMENT_KEYS = {
    "id",
    "queue",
    "stage",
    "status",
    "assignee",
    "assigned_by",
    "leased_at",
    "lease_expires_at",
    "heartbeat_at",
    "completed_at",
    "item",
    "links",
}


@pytest.fixture
def second_examiner(project):
    user = factories.UserFactory(username="second-examiner")
    factories.MembershipFactory(project=project, user=user, role=Role.EXAMINER)
    return user


@pytest.fixture
def queue(project, people, second_examiner):
    return factories.ReviewQueueFactory(
        project=project, name="Examine", members=[people["examiner"], second_examiner], lease_seconds=600
    )


def _mcq(project, **kwargs):
    return factories.MCQFactory(project=project, status=kwargs.pop("status", S.SCORED), **kwargs)


def _base(project):
    return f"/api/projects/{project.slug}"


def _claim(client, project, queue, headers):
    return client.post(f"{_base(project)}/queues/{queue.pk}/claim/", headers=headers)


def _lease_url(project, lease, action):
    return f"{_base(project)}/assignments/{lease.pk}/{action}/"


def test_queue_list_shows_admins_every_queue_and_members_their_own(client, project, people, queue, token_for):
    other = factories.ReviewQueueFactory(project=project, name="Revise", stage=S.REVISING, priority=5)
    _mcq(project)
    url = f"{_base(project)}/queues/"
    body = client.get(url, headers=token_for(people["admin"])).json()
    assert [q["name"] for q in body["results"]] == ["Revise", "Examine"] and body["count"] == 2
    examine = body["results"][1]
    assert examine == {
        "id": queue.pk,
        "name": "Examine",
        "stage": "examining",
        "item_kind": "mcq",
        "filters": {},
        "priority": 0,
        "overlap": 1,
        "lease_seconds": 600,
        "is_active": True,
        "is_member": False,
        "depth": 1,
        "active_leases": 0,
        "expired_leases": 0,
        "links": {
            "claim": f"http://testserver{_base(project)}/queues/{queue.pk}/claim/",
            "assign": f"http://testserver{_base(project)}/queues/{queue.pk}/assign/",
        },
    }
    mine = client.get(url, headers=token_for(people["examiner"])).json()["results"]
    assert [(q["id"], q["is_member"]) for q in mine] == [(queue.pk, True)]
    assert other.pk not in [q["id"] for q in mine]
    assert client.get(url, headers=token_for(people["annotator"])).json()["results"] == []
    assert_error(client.get(url, headers=token_for(people["outsider"])), 404, "not_found")
    assert_error(client.get(url), 401, "not_authenticated")


def test_queue_list_costs_the_same_queries_for_more_queues(
    client, project, people, queue, token_for, django_assert_max_num_queries
):
    headers = token_for(people["admin"])
    url = f"{_base(project)}/queues/"
    for kind in ("qa_chain", "chain_pair"):
        factories.ReviewQueueFactory(project=project, item_kind=kind)
    client.get(url, headers=headers)
    with django_assert_max_num_queries(20) as captured:
        client.get(url, headers=headers)
    for kind in ("mcq", "qa_chain", "chain_pair"):
        factories.ReviewQueueFactory(project=project, item_kind=kind)
    with django_assert_max_num_queries(len(captured)):
        assert client.get(url, headers=headers).json()["count"] == 6


def test_claim_gives_a_lease_then_204_when_the_queue_is_empty(client, project, people, queue, token_for):
    item = _mcq(project)
    headers = token_for(people["examiner"])
    before = timezone.now()
    response = _claim(client, project, queue, headers)
    assert response.status_code == 201, response.content
    lease = response.json()
    assert set(lease) == ASSIGNMENT_KEYS
    assert (lease["queue"], lease["stage"], lease["status"]) == (queue.pk, "examining", "active")
    assert (lease["assignee"], lease["assigned_by"], lease["heartbeat_at"]) == (people["examiner"].username, None, None)
    assert lease["item"] == {
        "kind": "mcq",
        "id": item.pk,
        "editor_url": f"http://testserver/p/{project.slug}/mcqs/{item.pk}/",
    }
    stored = Assignment.objects.get(pk=lease["id"])
    assert timedelta(seconds=599) < stored.lease_expires_at - before < timedelta(seconds=601)
    assert lease["links"]["heartbeat"] == f"http://testserver{_base(project)}/assignments/{stored.pk}/heartbeat/"
    empty = _claim(client, project, queue, token_for(factories.UserFactory()))  # not even in the project
    assert_error(empty, 404, "not_found")
    response = _claim(client, project, queue, token_for(people["examiner"]))
    assert response.status_code == 204 and response.content == b""


def test_claim_is_refused_to_people_outside_the_queue(client, project, people, queue, token_for):
    _mcq(project)
    error = assert_error(_claim(client, project, queue, token_for(people["annotator"])), 403, "claim_refused")
    assert "does not include examining" in error["message"]
    admin = assert_error(_claim(client, project, queue, token_for(people["admin"])), 403, "claim_refused")
    assert "not a member of the queue Examine" in admin["message"]
    assert_error(_claim(client, project, queue, {}), 401, "not_authenticated")
    other = factories.ReviewQueueFactory(members=[people["examiner"]])
    assert_error(_claim(client, project, other, token_for(people["examiner"])), 404, "not_found")
    assert (
        client.get(f"{_base(project)}/queues/{queue.pk}/claim/", headers=token_for(people["examiner"])).status_code
        == 405
    )
    assert not Assignment.objects.exists()


def test_heartbeat_renews_only_the_holders_active_lease(client, project, people, queue, second_examiner, token_for):
    _mcq(project)
    holder = token_for(people["examiner"])
    lease = Assignment.objects.get(pk=_claim(client, project, queue, holder).json()["id"])
    Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=timezone.now() + timedelta(seconds=5))
    response = client.post(_lease_url(project, lease, "heartbeat"), headers=holder)
    assert response.status_code == 200, response.content
    lease.refresh_from_db()
    assert lease.lease_expires_at > timezone.now() + timedelta(seconds=590) and response.json()["heartbeat_at"]
    error = assert_error(
        client.post(_lease_url(project, lease, "heartbeat"), headers=token_for(second_examiner)),
        403,
        "not_lease_holder",
    )
    assert error["message"] == "Only the person holding this lease can renew it."
    Assignment.objects.filter(pk=lease.pk).update(status=A.EXPIRED)
    assert_error(client.post(_lease_url(project, lease, "heartbeat"), headers=holder), 409, "lease_expired")
    Assignment.objects.filter(pk=lease.pk).update(status=A.COMPLETED)
    assert_error(client.post(_lease_url(project, lease, "heartbeat"), headers=holder), 409, "lease_not_active")
    assert_error(
        client.post(_lease_url(project, lease, "heartbeat"), headers=token_for(people["outsider"])), 404, "not_found"
    )
    missing = f"{_base(project)}/assignments/999999/heartbeat/"
    assert (
        assert_error(client.post(missing, headers=holder), 404, "not_found")["message"]
        == "No such lease in this project."
    )


def test_release_and_complete(client, project, people, queue, second_examiner, token_for):
    first, second = _mcq(project), _mcq(project)
    holder = token_for(people["examiner"])
    a = Assignment.objects.get(pk=_claim(client, project, queue, holder).json()["id"])
    b = Assignment.objects.get(pk=_claim(client, project, queue, holder).json()["id"])
    assert {a.mcq_id, b.mcq_id} == {first.pk, second.pk}
    assert_error(
        client.post(_lease_url(project, a, "release"), headers=token_for(second_examiner)), 403, "not_lease_holder"
    )
    response = client.post(_lease_url(project, a, "release"), headers=holder)
    assert response.status_code == 200 and response.json()["status"] == "released"
    assert_error(client.post(_lease_url(project, a, "complete"), headers=holder), 409, "lease_not_active")
    assert_error(
        client.post(_lease_url(project, b, "complete"), headers=token_for(second_examiner)), 403, "not_lease_holder"
    )
    done = client.post(_lease_url(project, b, "complete"), headers=holder).json()
    assert done["status"] == "completed" and done["completed_at"]
    # The released item went back to the queue: the other examiner gets it, the completed one stays taken.
    assert _claim(client, project, queue, token_for(second_examiner)).json()["item"]["id"] == a.mcq_id
    assert _claim(client, project, queue, token_for(second_examiner)).status_code == 204
    # An admin releases anyone's lease.
    c = Assignment.objects.get(status=A.ACTIVE)
    assert client.post(_lease_url(project, c, "release"), headers=token_for(people["admin"])).status_code == 200


def test_admin_assign_reports_assigned_and_refused_items(client, project, people, queue, second_examiner, token_for):
    ok = _mcq(project)
    written = _mcq(project, author=second_examiner)
    draft = _mcq(project, status=S.DRAFT)
    url = f"{_base(project)}/queues/{queue.pk}/assign/"
    admin = token_for(people["admin"])
    body = {"items": [ok.pk, written.pk, draft.pk, 999999], "assignee": second_examiner.username}
    response = client.post(url, body, content_type="application/json", headers=admin)
    assert response.status_code == 200, response.content
    out = response.json()
    assert [(a["item"]["id"], a["assignee"], a["assigned_by"]) for a in out["assigned"]] == [
        (ok.pk, second_examiner.username, people["admin"].username)
    ]
    assert set(out["assigned"][0]) == ASSIGNMENT_KEYS
    assert out["refused"] == [
        {"item_id": written.pk, "reason": "second-examiner wrote it; reviewers never review their own work."},
        {"item_id": draft.pk, "reason": "Its status is machine draft, not one waiting for examining."},
        {"item_id": 999999, "reason": "No MCQ 999999 in this project."},
    ]
    bad = client.post(url, {"items": [ok.pk], "assignee": "nobody"}, content_type="application/json", headers=admin)
    assert assert_error(bad, 400, "validation_error")["details"] == {"assignee": ["No active user named 'nobody'."]}
    no_role = client.post(
        url,
        {"items": [ok.pk], "assignee": people["annotator"].username},
        content_type="application/json",
        headers=admin,
    )
    assert "has no role for examining" in assert_error(no_role, 400, "validation_error")["details"]["assignee"][0]
    empty = client.post(url, {"items": [], "assignee": "x"}, content_type="application/json", headers=admin)
    assert "items" in assert_error(empty, 400, "validation_error")["details"]
    by_examiner = client.post(url, body, content_type="application/json", headers=token_for(people["examiner"]))
    assert_error(by_examiner, 403, "permission_denied")
    assert Assignment.objects.count() == 1


def test_admin_reassigns_a_lease(client, project, people, queue, second_examiner, token_for):
    _mcq(project)
    lease = Assignment.objects.get(pk=_claim(client, project, queue, token_for(people["examiner"])).json()["id"])
    url = _lease_url(project, lease, "reassign")
    body = {"assignee": second_examiner.username}
    assert_error(
        client.post(url, body, content_type="application/json", headers=token_for(people["examiner"])),
        403,
        "permission_denied",
    )
    response = client.post(url, body, content_type="application/json", headers=token_for(people["admin"]))
    assert response.status_code == 200, response.content
    assert response.json()["assignee"] == second_examiner.username and response.json()["id"] != lease.pk
    lease.refresh_from_db()
    assert lease.status == A.RELEASED
    again = client.post(url, body, content_type="application/json", headers=token_for(people["admin"]))
    assert "is released" in assert_error(again, 409, "not_reassignable")["message"]
