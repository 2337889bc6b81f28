from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from jobs.models import BackgroundJob
from jobs.selectors import job_get
from jobs.services import JobAlreadyRunning, job_retry
from projects.permissions import Action, can, get_project_or_404, projects_for, roles_of

from .selectors import STAGE_COLUMNS, project_overview


@login_required
def project_list(request):
    projects = list(projects_for(request.user).order_by("name"))
    rows = [
        (p, sorted(roles_of(request.user, p)) or (["superuser"] if request.user.is_superuser else [])) for p in projects
    ]
    if len(projects) == 1 and not request.GET.get("all"):
        # One project is the common case for an annotator: go straight to it.
        return redirect("studio:project_home", slug=projects[0].slug)
    return render(request, "studio/project_list.html", {"rows": rows})


@login_required
def project_home(request, slug):
    project = get_project_or_404(request.user, slug)
    overview = project_overview(project=project, user=request.user)
    return render(
        request,
        "studio/project_home.html",
        {
            "project": project,
            "overview": overview,
            "stage_labels": [label for label, _ in STAGE_COLUMNS],
            "roles": sorted(roles_of(request.user, project)),
            "is_admin": can(request.user, Action.ADMINISTER, project),
        },
    )


@login_required
def project_settings(request, slug):
    """Project admins tune curation, scenes, drafts and the quality gate (not only staff in /admin/)."""
    from django.db import IntegrityError, transaction

    from .forms import ProjectSettingsForm

    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                form.save()
        except IntegrityError:
            # A check constraint across fields (e.g. min scenes above max): say so, keep the input.
            form.add_error(
                None, "These numbers contradict each other (a minimum above its maximum, or a value out of range)."
            )
        else:
            messages.success(request, _("Settings saved. They apply to the next processing, curation or draft run."))
            return redirect("studio:project_settings", slug=slug)
    return render(request, "studio/project_settings.html", {"project": project, "form": form})


def _job_or_404(project, job_id) -> BackgroundJob:
    job = job_get(project=project, job_id=job_id)
    if job is None:
        raise Http404("No such job in this project.")
    return job


def _job_for(request, slug, job_id) -> tuple:
    project = get_project_or_404(request.user, slug)
    return project, _job_or_404(project, job_id)


@login_required
def job_status(request, slug, job_id):
    """One job's progress; the htmx fragment polls itself until the job ends."""
    project, job = _job_for(request, slug, job_id)
    template = "studio/_job.html#job" if request.htmx else "studio/job_detail.html"
    return render(
        request, template, {"project": project, "job": job, "is_admin": can(request.user, Action.ADMINISTER, project)}
    )


@login_required
@require_POST
def job_retry_view(request, slug, job_id):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    job = _job_or_404(project, job_id)
    try:
        new_job = job_retry(job=job, user=request.user)
    except JobAlreadyRunning as exc:
        new_job = exc.job
        messages.info(request, _("That job is already running again."))
    except ValueError as exc:
        messages.error(request, str(exc))
        new_job = job
    if request.htmx:
        return render(request, "studio/_job.html#job", {"project": project, "job": new_job, "is_admin": True})
    return redirect("studio:job_status", slug=slug, job_id=new_job.pk)
