"""Project dashboards for admins (filled in by the next commits)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse

from projects.permissions import Action, get_project_or_404


@login_required
def dashboard(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    return HttpResponse(f"Dashboards of {project.name}")


@login_required
def dashboard_csv(request, slug, panel):
    get_project_or_404(request.user, slug, Action.ADMINISTER)
    raise Http404("No such panel.")


@login_required
def dashboard_rows(request, slug, panel):
    get_project_or_404(request.user, slug, Action.ADMINISTER)
    raise Http404("No such panel.")
