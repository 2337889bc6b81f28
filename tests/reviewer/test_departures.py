import pytest

from annotator.models import ItemStatus
from projects.models import Membership
from reviewer import departures
from reviewer.models import Assignment, AssignmentStatus, ExamVerdict
from tests import factories

pytestmark = pytest.mark.django_db


def _lease(project, user, stage):
    mcq = factories.MCQFactory(project=project, status=stage)
    return factories.AssignmentFactory(item=mcq, assignee=user, stage=stage)


def test_deactivate_returns_leases_and_keeps_work(project, people):
    examiner = people["examiner"]
    held = _lease(project, examiner, ItemStatus.EXAMINING)
    elsewhere = _lease(factories.ProjectFactory(), examiner, ItemStatus.EXAMINING)
    written = factories.MCQFactory(project=project, author=examiner, status=ItemStatus.ACCEPTED)

    assert departures.member_deactivate(project=project, user=examiner) == 1

    held.refresh_from_db()
    elsewhere.refresh_from_db()
    assert held.status == AssignmentStatus.RELEASED
    assert elsewhere.status == AssignmentStatus.ACTIVE  # another project's lease is not this project's business
    assert not Membership.objects.filter(project=project, user=examiner).exists()
    written.refresh_from_db()
    assert written.author == examiner and written.status == ItemStatus.ACCEPTED


def test_losing_a_role_returns_only_the_leases_it_allowed(project, people):
    person = people["examiner"]
    factories.MembershipFactory(project=project, user=person, role="reviser")
    examining = _lease(project, person, ItemStatus.EXAMINING)
    revising = _lease(project, person, ItemStatus.REVISING)

    assert departures.member_roles_change(project=project, user=person, roles=["reviser"]) == ["reviser"]

    assert Assignment.objects.get(pk=examining.pk).status == AssignmentStatus.RELEASED
    assert Assignment.objects.get(pk=revising.pk).status == AssignmentStatus.ACTIVE
    assert not ExamVerdict.objects.exists()
