"""The navigation's link to a project's benchmark import page, for its admins only."""

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from projects.models import Project
from projects.permissions import Action, can

register = template.Library()


@register.simple_tag(takes_context=True)
def benchmark_import_link(context) -> str:
    """A link when the page is about a project the visitor administers; nothing otherwise (no query)."""
    project = context.get("project")
    request = context.get("request")
    if not isinstance(project, Project) or request is None or not can(request.user, Action.ADMINISTER, project):
        return ""
    return format_html('<a href="{}">{}</a>', reverse("releases:import", args=[project.slug]), _("Import benchmark"))
