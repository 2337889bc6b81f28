"""The navigation's link to a project's stuck work, for its admins only."""

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from projects.models import Project
from projects.permissions import Action, can

register = template.Library()


@register.simple_tag(takes_context=True)
def stuck_work_link(context) -> str:
    """A link when the page is about a project the visitor administers; nothing otherwise.

    `can` reads the roles the page's own authorisation already memoised on the user: no query.
    """
    project = context.get("project")
    request = context.get("request")
    if not isinstance(project, Project) or request is None or not can(request.user, Action.ADMINISTER, project):
        return ""
    return format_html('<a href="{}">{}</a>', reverse("reviewer:stuck_work", args=[project.slug]), _("Stuck work"))
