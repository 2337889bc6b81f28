from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import override_settings
from django.utils import timezone

from projects import people as svc
from projects.models import Invitation, Membership, Role
from projects.people import PeopleRefused
from tests import factories

pytestmark = pytest.mark.django_db
User = get_user_model()


def test_roles_clean_reads_lists_and_separated_strings():
    assert svc.roles_clean("examiner; annotator|examiner") == ["annotator", "examiner"]
    assert svc.roles_clean(["ADMIN"]) == ["admin"]
    with pytest.raises(PeopleRefused) as exc:
        svc.roles_clean("annotator;boss")
    assert exc.value.code == "unknown_role" and "boss" in exc.value.message
    with pytest.raises(PeopleRefused):
        svc.roles_clean(" ; ")


def test_invitation_accept_gives_its_roles_once(project, people):
    inv = people_invite(project, people["admin"], roles=["annotator", "examiner"])
    newcomer = factories.UserFactory()
    invitation_accept = svc.invitation_accept
    invitation_accept(token=inv.token, user=newcomer)
    assert set(Membership.objects.filter(project=project, user=newcomer).values_list("role", flat=True)) == {
        "annotator",
        "examiner",
    }
    inv.refresh_from_db()
    assert inv.used_by == newcomer and inv.state() == "used"
    with pytest.raises(PeopleRefused) as exc:
        invitation_accept(token=inv.token, user=factories.UserFactory())
    assert exc.value.code == "invitation_closed" and "already been used" in exc.value.message


def people_invite(project, by, **kw):
    return svc.invitation_create(project=project, by=by, **kw)


def test_expired_revoked_and_unknown_links_say_why(project, people):
    invitation_open, invitation_revoke = svc.invitation_open, svc.invitation_revoke
    admin = people["admin"]
    expired = people_invite(project, admin, roles="annotator")
    Invitation.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    revoked = invitation_revoke(invitation=people_invite(project, admin, roles="annotator"), by=admin)
    for token, words in ((expired.token, "expired"), (revoked.token, "withdrawn"), ("nope", "not valid")):
        with pytest.raises(PeopleRefused) as exc:
            invitation_open(token=token)
        assert words in exc.value.message
    assert revoked.state() == "revoked"


def test_invitation_refuses_bad_expiry_and_address(project, people):
    with pytest.raises(PeopleRefused):
        people_invite(project, people["admin"], roles="annotator", expires_in_days=0)
    with pytest.raises(PeopleRefused):
        people_invite(project, people["admin"], roles="annotator", email="not-an-address")


@override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
def test_invitation_is_mailed_where_mail_is_configured(project, people):
    inv = people_invite(project, people["admin"], roles="reviser", email="new@example.org")
    assert svc.invitation_send(invitation=inv, link="http://testserver/join/x/")
    assert mail.outbox[-1].to == ["new@example.org"] and "http://testserver/join/x/" in mail.outbox[-1].body


@override_settings(EMAIL_BACKEND="django.core.mail.backends.dummy.EmailBackend")
def test_no_mail_configured_means_share_by_hand(project, people):
    inv = people_invite(project, people["admin"], roles="reviser", email="new@example.org")
    assert not svc.mail_configured()
    assert svc.invitation_send(invitation=inv, link="http://x/") is False


def test_sign_up_through_an_invitation(project, people):
    invitation_sign_up = svc.invitation_sign_up
    inv = people_invite(project, people["admin"], roles="annotator")
    user = invitation_sign_up(
        token=inv.token, username="lin", email="lin@example.org", name="林", password="a-long-pw-9"
    )
    assert user.check_password("a-long-pw-9") and user.first_name == "林"
    assert list(Membership.objects.filter(user=user).values_list("role", flat=True)) == ["annotator"]
    with pytest.raises(PeopleRefused):
        # The link is used up: nothing more is created.
        invitation_sign_up(token=inv.token, username="lin2", email="", name="", password="a-long-pw-9")
    assert not User.objects.filter(username="lin2").exists()


def test_the_last_admin_stays(project, people):
    admin = people["admin"]
    with pytest.raises(PeopleRefused) as exc:
        svc.member_roles_set(project=project, user=admin, roles=["annotator"])
    assert exc.value.code == "last_admin"
    with pytest.raises(PeopleRefused):
        svc.member_remove(project=project, user=admin)
    svc.member_roles_add(project=project, user=people["annotator"], roles=["admin"])
    assert svc.member_remove(project=project, user=admin) == ["admin"]


def test_members_of_lists_roles_in_role_order(project, people):
    svc.member_roles_add(project=project, user=people["reviser"], roles="examiner;admin")
    rows = {row.user.username: row.roles for row in svc.members_of(project=project)}
    assert rows[people["reviser"].username] == ["admin", "examiner", "reviser"]
    assert people["outsider"].username not in rows


# --- CSV ---------------------------------------------------------------------------------------------------


def _csv(rows) -> str:
    return "username,email,name,roles\n" + "\n".join(",".join(r) for r in rows) + "\n"


def test_csv_of_30_with_3_bad_rows_adds_27_and_reports_3_by_row(project, people):
    existing = factories.UserFactory(username="already", email="already@example.org")
    rows = [[f"person{n:02d}", f"person{n:02d}@example.org", f"Person {n}", "annotator"] for n in range(30)]
    rows[3] = ["person03", "person03@example.org", "Person 3", "annotator;wizard"]  # unknown role
    rows[11] = ["bad name!", "bad@example.org", "Bad", "examiner"]  # invalid username
    rows[20] = ["person20", "not-an-address", "Person 20", "reviser|examiner"]  # invalid e-mail
    rows[25] = ["person25", "person25@example.org", "Person 25", "examiner|reviser"]
    users_before, memberships_before = User.objects.count(), Membership.objects.count()

    report = svc.members_import_csv(project=project, by=people["admin"], text=_csv(rows))

    assert len(report) == 30
    errors = [r for r in report if r.outcome == "error"]
    assert [(r.line, r.username) for r in errors] == [(5, "person03"), (13, "bad name!"), (22, "person20")]
    assert "wizard" in errors[0].message and "username" in errors[1].message and "e-mail" in errors[2].message
    added = [r for r in report if r.outcome == "added"]
    assert len(added) == 27 and all(r.created and r.password_link.startswith("/accounts/reset/") for r in added)
    # Nothing else changed: 27 new accounts, their memberships, no account for a bad row.
    assert User.objects.count() == users_before + 27
    assert not User.objects.filter(username__in=["person03", "bad name!", "person20"]).exists()
    assert Membership.objects.count() == memberships_before + 28  # person25 holds two roles
    assert set(Membership.objects.filter(user__username="person25").values_list("role", flat=True)) == {
        "examiner",
        "reviser",
    }
    new = User.objects.get(username="person07")
    assert not new.has_usable_password() and new.email == "person07@example.org"
    existing.refresh_from_db()
    assert existing.email == "already@example.org"


def test_csv_existing_accounts_get_roles_or_are_already_members(project, people):
    text = _csv(
        [
            [people["annotator"].username, "", "", "annotator"],
            [people["examiner"].username, "", "", "annotator;examiner"],
        ]
    )
    report = svc.members_import_csv(project=project, by=people["admin"], text=text)
    assert [(r.outcome, r.roles) for r in report] == [("member", ["annotator"]), ("added", ["annotator"])]
    assert people["examiner"].has_usable_password()


def test_csv_without_the_columns_is_refused_whole(project, people):
    with pytest.raises(PeopleRefused) as exc:
        svc.members_import_csv(project=project, by=people["admin"], text="name,email\nx,y\n")
    assert "username" in exc.value.message
    assert not Membership.objects.filter(project=project, role=Role.REVISER).exclude(user=people["reviser"]).exists()
