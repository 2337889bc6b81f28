"""When a person leaves a project or loses a role: the items they held go back to the queues.

Membership itself is projects' (projects.people); the leases are this app's. Their work (items,
verdicts, review events) stays as it is: only what they were holding is handed back.
"""

from django.db import transaction

from annotator.models import ItemStatus
from projects import people
from projects.models import Project
from projects.permissions import Action, can

from .models import Assignment, AssignmentStatus

# Which action a lease at each stage needs; a lease the holder may no longer act on goes back.
_STAGE_ACTION = {
    ItemStatus.ANNOTATING: Action.ANNOTATE,
    ItemStatus.EXAMINING: Action.EXAMINE,
    ItemStatus.FLAGGED: Action.REVISE,
    ItemStatus.REVISING: Action.REVISE,
}


def leases_return(*, project: Project, user, only_unusable: bool = False) -> int:
    """Release `user`'s active leases in `project` (with `only_unusable`, those their roles no longer
    allow); returns how many went back."""
    user.__dict__.pop("_vidqa_roles", None)
    active = Assignment.objects.filter(project=project, assignee=user, status=AssignmentStatus.ACTIVE)
    ids = [
        a.pk
        for a in active.only("pk", "stage")
        if not only_unusable or not can(user, _STAGE_ACTION.get(a.stage, Action.VIEW), project)
    ]
    if not ids:
        return 0
    return Assignment.objects.filter(pk__in=ids, status=AssignmentStatus.ACTIVE).update(
        status=AssignmentStatus.RELEASED
    )


@transaction.atomic
def member_deactivate(*, project: Project, user) -> int:
    """`user` leaves `project`: every role goes, their leases return; returns the leases returned."""
    people.member_remove(project=project, user=user)
    return leases_return(project=project, user=user)


@transaction.atomic
def member_roles_change(*, project: Project, user, roles) -> list[str]:
    """Set `user`'s roles to exactly `roles`; leases at stages they may no longer work return."""
    held = people.member_roles_set(project=project, user=user, roles=roles)
    leases_return(project=project, user=user, only_unusable=True)
    return held


@transaction.atomic
def member_roles_take(*, project: Project, user, roles) -> list[str]:
    """Take some roles; returns those left. Leases they may no longer work return."""
    held = people.member_roles_remove(project=project, user=user, roles=roles)
    leases_return(project=project, user=user, only_unusable=True)
    return held


def account_leases_return(*, user) -> int:
    """A deactivated account holds nothing: its active leases in every project go back to the queues."""
    return Assignment.objects.filter(assignee=user, status=AssignmentStatus.ACTIVE).update(
        status=AssignmentStatus.RELEASED
    )
