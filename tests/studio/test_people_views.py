from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotator.models import ItemStatus
from projects.models import Invitation, Membership
from reviewer.models import AssignmentStatus
from tests import factories

pytestmark = pytest.mark.django_db
User = get_user_model()


def _invite(client, project, **form):
    return client.post(
        reverse("studio:invitation_create", args=[project.slug]), {"roles": ["annotator"], "days": 7} | form
    )


def test_people_page_lists_members_and_roles(client, project, people):
    client.force_login(people["admin"])
    response = client.get(reverse("studio:people", args=[project.slug]))
    assert response.status_code == 200
    for role in ("annotator", "examiner", "reviser", "admin"):
        assert people[role].username in response.text
    assert people["outsider"].username not in response.text


@override_settings(EMAIL_BACKEND="django.core.mail.backends.dummy.EmailBackend")
def test_invitation_link_signs_a_new_person_up(client, project, people):
    client.force_login(people["admin"])
    response = _invite(client, project, roles=["annotator", "examiner"])
    assert response.status_code == 302
    invitation = Invitation.objects.get(project=project)
    page = client.get(reverse("studio:people", args=[project.slug]))
    assert "share it by hand" in page.text or "by hand" in page.text
    link = reverse("studio:join", args=[invitation.token])
    assert link in page.text

    client.logout()
    assert "Make your account" in client.get(link).text
    weak = client.post(link, {"username": "mei", "email": "", "name": "", "password1": "123", "password2": "123"})
    assert weak.status_code == 200 and not User.objects.filter(username="mei").exists()
    response = client.post(
        link,
        {
            "username": "mei",
            "email": "mei@example.org",
            "name": "Mei",
            "password1": "Xq-7-lantern",
            "password2": "Xq-7-lantern",
        },
    )
    assert response.status_code == 302 and response["Location"] == reverse("studio:project_home", args=[project.slug])
    mei = User.objects.get(username="mei")
    assert set(Membership.objects.filter(project=project, user=mei).values_list("role", flat=True)) == {
        "annotator",
        "examiner",
    }
    # Signed in as the new person; the used link now says so plainly.
    client.logout()
    closed = client.get(link)
    assert closed.status_code == 410 and "already been used" in closed.text


def test_signed_in_person_accepts(client, project, people):
    client.force_login(people["admin"])
    _invite(client, project, roles=["reviser"])
    invitation = Invitation.objects.get(project=project)
    outsider = people["outsider"]
    client.force_login(outsider)
    link = reverse("studio:join", args=[invitation.token])
    assert "Accept and join" in client.get(link).text
    assert client.post(link).status_code == 302
    assert Membership.objects.filter(project=project, user=outsider, role="reviser").exists()


def test_revoked_and_expired_links_give_a_plain_message(client, project, people):
    client.force_login(people["admin"])
    _invite(client, project)
    _invite(client, project)
    first, second = Invitation.objects.filter(project=project).order_by("pk")
    client.post(reverse("studio:invitation_revoke", args=[project.slug, first.pk]))
    Invitation.objects.filter(pk=second.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    client.logout()
    assert "withdrawn" in client.get(reverse("studio:join", args=[first.token])).text
    assert "expired" in client.get(reverse("studio:join", args=[second.token])).text
    assert client.get(reverse("studio:join", args=["garbage"])).status_code == 404


@override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
def test_invitation_by_mail(client, project, people):
    client.force_login(people["admin"])
    _invite(client, project, email="new@example.org")
    invitation = Invitation.objects.get(project=project)
    assert mail.outbox[-1].to == ["new@example.org"]
    assert f"http://testserver/join/{invitation.token}/" in mail.outbox[-1].body


def test_change_roles_and_deactivate(client, project, people):
    examiner = people["examiner"]
    lease = factories.AssignmentFactory(
        item=factories.MCQFactory(project=project, status=ItemStatus.EXAMINING),
        assignee=examiner,
        stage=ItemStatus.EXAMINING,
    )
    client.force_login(people["admin"])
    url = reverse("studio:member_roles", args=[project.slug, examiner.pk])
    assert client.post(url, {"roles": ["examiner", "reviser"]}).status_code == 302
    assert set(Membership.objects.filter(project=project, user=examiner).values_list("role", flat=True)) == {
        "examiner",
        "reviser",
    }
    response = client.post(reverse("studio:member_deactivate", args=[project.slug, examiner.pk]), follow=True)
    assert "1 item(s) they held went back" in response.text
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.RELEASED
    assert not Membership.objects.filter(project=project, user=examiner).exists()
    # The only admin cannot take their own last admin role.
    response = client.post(reverse("studio:member_deactivate", args=[project.slug, people["admin"].pk]), follow=True)
    assert "only admin" in response.text


def test_import_view_reports_rows(client, project, people):
    client.force_login(people["admin"])
    text = "username,email,name,roles\nnew1,new1@example.org,New One,annotator\n,x@example.org,Nobody,annotator\n"
    upload = SimpleUploadedFile("people.csv", text.encode(), content_type="text/csv")
    response = client.post(reverse("studio:people_import", args=[project.slug]), {"file": upload})
    assert response.status_code == 200
    assert "1 added, 0 already members, 1 with errors" in response.text
    assert "http://testserver/accounts/reset/" in response.text
    assert User.objects.filter(username="new1").exists()


def test_my_page_shows_statistics_and_a_token_once(client, project, people):
    annotator = people["annotator"]
    factories.MCQFactory(project=project, author=annotator, status=ItemStatus.ACCEPTED)
    client.force_login(annotator)
    page = client.get(reverse("studio:me"))
    assert page.status_code == 200 and project.name in page.text
    assert [s.accepted for s in page.context["statistics"]] == [1]

    client.post(reverse("studio:me_token_rotate"))
    key = Token.objects.get(user=annotator).key
    assert key in client.get(reverse("studio:me")).text
    assert key not in client.get(reverse("studio:me")).text  # shown once
    client.post(reverse("studio:me_token_revoke"))
    assert not Token.objects.filter(user=annotator).exists()


@override_settings(EMAIL_BACKEND="django.core.mail.backends.dummy.EmailBackend")
def test_site_admin_manages_accounts(client, people):
    staff = factories.UserFactory(is_staff=True)
    client.force_login(people["admin"])
    assert client.get(reverse("studio:accounts")).status_code == 403
    client.force_login(staff)
    assert client.get(reverse("studio:accounts")).status_code == 200
    response = client.post(reverse("studio:accounts"), {"username": "fresh", "email": "", "name": "Fresh"}, follow=True)
    assert "set-password link by hand" in response.text
    fresh = User.objects.get(username="fresh")
    assert not fresh.has_usable_password()
    lease = factories.AssignmentFactory(assignee=fresh)
    client.post(reverse("studio:account_active", args=[fresh.pk]), {"active": "0"})
    fresh.refresh_from_db()
    assert not fresh.is_active
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.RELEASED
    client.post(reverse("studio:account_active", args=[fresh.pk]), {"active": "1"})
    fresh.refresh_from_db()
    assert fresh.is_active
    response = client.post(reverse("studio:account_password_link", args=[fresh.pk]), follow=True)
    assert "/accounts/reset/" in response.text


def test_a_set_password_link_works_once(client, project, people):
    from projects.people import account_create, password_link_path

    user = account_create(username="newbie", email="", name="")
    link = password_link_path(user=user)
    form_page = client.get(link, follow=True)
    assert "Set your password" in form_page.text
    response = client.post(
        form_page.redirect_chain[-1][0], {"new_password1": "Xq-7-lantern", "new_password2": "Xq-7-lantern"}, follow=True
    )
    assert "Password set" in response.text
    user.refresh_from_db()
    assert user.check_password("Xq-7-lantern")
    assert "already been used" in client.get(link, follow=True).text


def test_join_page_offers_login_that_comes_back(client, project, people):
    from projects.people import invitation_create

    invitation = invitation_create(project=project, by=people["admin"], roles="annotator")
    link = reverse("studio:join", args=[invitation.token])
    page = client.get(link)
    assert f'href="{reverse("login")}?next=/join/{invitation.token}/"' in page.text
