import pytest
from django.urls import reverse

from annotator.models import ItemStatus
from projects.models import Invitation, Membership
from reviewer.models import AssignmentStatus
from tests import factories
from tests.api.error_shape import assert_error

pytestmark = pytest.mark.django_db


def _roles(project, user) -> set[str]:
    return set(Membership.objects.filter(project=project, user=user).values_list("role", flat=True))


def test_members_list_add_and_remove_roles(client, project, people, token_for):
    headers = token_for(people["admin"])
    url = reverse("api:member-list", args=[project.slug])
    listing = client.get(url, headers=headers)
    assert listing.status_code == 200
    rows = {r["username"]: r["roles"] for r in listing.json()["results"]}
    assert rows[people["annotator"].username] == ["annotator"]
    assert people["outsider"].username not in rows

    outsider = people["outsider"]
    added = client.post(
        url,
        {"username": outsider.username, "roles": ["examiner", "reviser"]},
        content_type="application/json",
        headers=headers,
    )
    assert added.status_code == 200 and added.json()["roles"] == ["examiner", "reviser"]
    assert _roles(project, outsider) == {"examiner", "reviser"}

    remove = reverse("api:member-roles-remove", args=[project.slug, outsider.pk])
    answer = client.post(remove, {"roles": ["examiner"]}, content_type="application/json", headers=headers)
    assert answer.status_code == 200 and answer.json()["roles"] == ["reviser"]


def test_member_add_refusals_use_the_error_shape(client, project, people, token_for):
    headers = token_for(people["admin"])
    url = reverse("api:member-list", args=[project.slug])
    bad_role = client.post(
        url, {"username": "x", "roles": ["wizard"]}, content_type="application/json", headers=headers
    )
    assert_error(bad_role, 400, "validation_error")
    nobody = client.post(
        url, {"username": "nobody", "roles": ["annotator"]}, content_type="application/json", headers=headers
    )
    assert_error(nobody, 400, "validation_error")
    last_admin = client.post(
        reverse("api:member-roles-remove", args=[project.slug, people["admin"].pk]),
        {"roles": ["admin"]},
        content_type="application/json",
        headers=headers,
    )
    assert_error(last_admin, 409, "last_admin")
    stranger = client.post(
        reverse("api:member-roles-remove", args=[project.slug, people["outsider"].pk]),
        {"roles": ["admin"]},
        content_type="application/json",
        headers=headers,
    )
    assert_error(stranger, 404, "not_found")


def test_member_remove_returns_leases(client, project, people, token_for):
    examiner = people["examiner"]
    lease = factories.AssignmentFactory(
        item=factories.MCQFactory(project=project, status=ItemStatus.EXAMINING),
        assignee=examiner,
        stage=ItemStatus.EXAMINING,
    )
    response = client.delete(
        reverse("api:member-detail", args=[project.slug, examiner.pk]), headers=token_for(people["admin"])
    )
    assert response.status_code == 204
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.RELEASED
    assert not _roles(project, examiner)


def test_invitations_create_list_revoke(client, project, people, token_for):
    headers = token_for(people["admin"])
    url = reverse("api:invitation-list", args=[project.slug])
    created = client.post(
        url, {"roles": ["annotator"], "expires_in_days": 3}, content_type="application/json", headers=headers
    )
    assert created.status_code == 201
    body = created.json()
    invitation = Invitation.objects.get(pk=body["id"])
    assert body["state"] == "open" and body["link"] == f"http://testserver/join/{invitation.token}/"

    listing = client.get(url, headers=headers).json()
    assert [r["id"] for r in listing["results"]] == [invitation.pk]

    revoke = reverse("api:invitation-revoke", args=[project.slug, invitation.pk])
    assert client.post(revoke, headers=headers).json()["state"] == "revoked"
    assert_error(
        client.post(reverse("api:invitation-revoke", args=[project.slug, 99999]), headers=headers), 404, "not_found"
    )
    bad = client.post(url, {"roles": [], "expires_in_days": 0}, content_type="application/json", headers=headers)
    assert_error(bad, 400, "validation_error")
    assert set(bad.json()["error"]["details"]) == {"roles", "expires_in_days"}


def test_members_api_is_for_admins(client, project, people, token_for):
    response = client.get(reverse("api:member-list", args=[project.slug]), headers=token_for(people["annotator"]))
    assert_error(response, 403, "permission_denied")


def test_token_status_never_shows_the_key(client, people, token_for):
    from api.tokens import token_revoke

    user = people["annotator"]
    headers = token_for(user)
    response = client.get(reverse("api:token-status"), headers=headers)
    body = response.json()
    assert body["exists"] is True and body["created_at"]
    assert headers["Authorization"].split()[1] not in response.text
    token_revoke(user=user)
    client.force_login(user)
    assert client.get(reverse("api:token-status")).json() == {"exists": False, "created_at": None}


def test_people_paths_are_in_the_schema():
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    assert {
        "/api/auth/token/status/",
        "/api/projects/{slug}/members/",
        "/api/projects/{slug}/members/{user_id}/",
        "/api/projects/{slug}/members/{user_id}/remove-roles/",
        "/api/projects/{slug}/invitations/",
        "/api/projects/{slug}/invitations/{invitation_id}/revoke/",
    } <= set(paths)
    assert {"get", "post"} <= set(paths["/api/projects/{slug}/members/"])


def test_people_lists_take_a_fixed_number_of_queries(client, project, people, token_for):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    headers = token_for(people["admin"])
    urls = [reverse("api:member-list", args=[project.slug]), reverse("api:invitation-list", args=[project.slug])]

    def counts():
        result = []
        for url in urls:
            with CaptureQueriesContext(connection) as ctx:
                assert client.get(url, headers=headers).status_code == 200
            result.append(len(ctx))
        return result

    from projects.people import invitation_create

    invitation_create(project=project, by=people["admin"], roles="annotator")
    few = counts()
    for _ in range(8):
        factories.MembershipFactory(project=project, role="annotator")
        invitation_create(project=project, by=factories.UserFactory(), roles="examiner")
    assert counts() == few


def test_revoking_a_used_invitation_is_a_conflict(client, project, people, token_for):
    from projects.people import invitation_accept, invitation_create

    invitation = invitation_create(project=project, by=people["admin"], roles="annotator")
    invitation_accept(token=invitation.token, user=people["outsider"])
    response = client.post(
        reverse("api:invitation-revoke", args=[project.slug, invitation.pk]), headers=token_for(people["admin"])
    )
    assert_error(response, 409, "used")
