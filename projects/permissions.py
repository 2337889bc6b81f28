"""The one place that answers "may this user do X in this project (to this item)?".

Views, API views and services ask here; templates only mirror the answers for display.
"""

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from .models import Membership, Project, Role


class Action:
    VIEW = "view"  # see the project, its videos, media and items
    ANNOTATE = "annotate"  # edit drafts and submit
    EXAMINE = "examine"  # pass or flag submitted items
    REVISE = "revise"  # fix flagged items
    ADMINISTER = "administer"  # import, configure, assign, release, override


_ROLES_FOR_ACTION = {
    Action.VIEW: {Role.ADMIN, Role.ANNOTATOR, Role.EXAMINER, Role.REVISER},
    Action.ANNOTATE: {Role.ADMIN, Role.ANNOTATOR},
    Action.EXAMINE: {Role.ADMIN, Role.EXAMINER},
    Action.REVISE: {Role.ADMIN, Role.REVISER},
    Action.ADMINISTER: {Role.ADMIN},
}

# Review is independent: nobody examines or revises what they wrote themselves.
_NOT_BY_AUTHOR = {Action.EXAMINE, Action.REVISE}


def roles_allowed(action: str) -> frozenset[str]:
    """The roles that may do `action` (for queries that list such people)."""
    return frozenset(_ROLES_FOR_ACTION[action])


def roles_of(user, project: Project) -> frozenset[str]:
    """The user's roles in the project, memoised on the user object for the request."""
    if not user.is_authenticated:
        return frozenset()
    cache = user.__dict__.setdefault("_vidqa_roles", {})
    if project.pk not in cache:
        cache[project.pk] = frozenset(
            Membership.objects.filter(project=project, user=user).values_list("role", flat=True)
        )
    return cache[project.pk]


def can(user, action: str, project: Project, item=None) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    allowed = user.is_superuser or bool(roles_of(user, project) & _ROLES_FOR_ACTION[action])
    if allowed and item is not None and action in _NOT_BY_AUTHOR:
        allowed = getattr(item, "author_id", None) != user.pk
    return allowed


def may_create_project(user) -> bool:
    """Site administrators, and people granted Django's `projects.add_project` permission."""
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_staff or user.is_superuser or user.has_perm("projects.add_project")


def projects_for(user) -> QuerySet[Project]:
    """Projects the user may see: every list in the product starts from here."""
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def get_project_or_404(user, slug: str, action: str = Action.VIEW) -> Project:
    """Fetch and authorise in one step; "missing" and "not yours" give the same 404."""
    try:
        project = Project.objects.get(slug=slug)
    except Project.DoesNotExist:
        raise Http404("No such project.") from None
    if not can(user, action, project):
        if can(user, Action.VIEW, project):
            # A member without the role gets a plain refusal: they know the project exists.
            raise PermissionDenied(_("Your role in %(project)s does not allow this.") % {"project": project.name})
        raise Http404("No such project.")
    return project


def may_manage_accounts(user) -> bool:
    """Site administrators (staff) create, deactivate and reactivate accounts; project admins do not."""
    return user.is_authenticated and user.is_active and (user.is_staff or user.is_superuser)
