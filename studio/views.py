from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from jobs.models import BackgroundJob
from jobs.selectors import job_get
from jobs.services import JobAlreadyRunning, job_retry
from llm.prompts import prompt_templates_copy
from projects.models import Role
from projects.permissions import Action, can, get_project_or_404, may_create_project, projects_for, roles_of
from projects.presets import PRESETS
from projects.refusals import Refused, refusal_redirect
from projects.services import project_archive, project_create, project_unarchive, project_update

from .selectors import STAGE_COLUMNS, project_overview

JOB_FINISHED_EVENT = "job-finished"  # listened for in templates (videos/video_list.html)


@login_required
def project_list(request):
    show_archived = request.GET.get("archived") == "1"
    visible = projects_for(request.user).order_by("name")
    archived_count = visible.filter(archived_at__isnull=False).count()
    if not show_archived:
        visible = visible.filter(archived_at__isnull=True)
    projects = list(visible)
    rows = [
        (p, sorted(roles_of(request.user, p)) or (["superuser"] if request.user.is_superuser else [])) for p in projects
    ]
    may_create = may_create_project(request.user)
    if len(projects) == 1 and not request.GET.get("all") and not show_archived and not may_create:
        # One project is the common case for an annotator: go straight to it. Someone who may create
        # projects stays on the list, where "New project" is.
        return redirect("studio:project_home", slug=projects[0].slug)
    return render(
        request,
        "studio/project_list.html",
        {
            "rows": rows,
            "may_create": may_create,
            "show_archived": show_archived,
            "archived_count": archived_count,
        },
    )


def _administered(user):
    """Projects whose settings `user` may copy: the ones they administer."""
    if user.is_superuser:
        return projects_for(user)
    return projects_for(user).filter(memberships__user=user, memberships__role=Role.ADMIN).distinct()


@login_required
def project_new(request):
    """Create a project from a preset, or from the settings of a project you administer."""
    from .forms import NewProjectForm

    if not may_create_project(request.user):
        raise PermissionDenied(_("Only site administrators and people allowed to create projects can do this."))
    form = NewProjectForm(request.POST or None, copy_sources=_administered(request.user).order_by("name"))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                project = project_create(
                    user=request.user,
                    name=data["name"],
                    slug=data["slug"],
                    preset=data["preset"],
                    description=data["description"],
                    primary_language=data["primary_language"],
                    copy_from=data.get("copy_from"),
                )
                if data.get("copy_from"):
                    prompt_templates_copy(source=data["copy_from"], target=project, user=request.user)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]:
                form.add_error(field if field in form.fields else None, errors)
        except Refused as exc:
            return refusal_redirect(request, exc, redirect("studio:project_new"))
        else:
            messages.success(
                request,
                _("%(name)s is ready. Check its settings and taxonomies, then import videos.") % {"name": project.name},
            )
            return redirect("studio:project_settings", slug=project.slug)
    return render(request, "studio/project_new.html", {"form": form, "presets": list(PRESETS.values())})


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
    """Project admins tune curation, scenes, drafts, the quality gate and the taxonomies."""
    from .forms import ProjectSettingsForm, taxonomy_formsets

    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    data = request.POST if request.method == "POST" else None
    form = ProjectSettingsForm(data, instance=project)
    formsets = taxonomy_formsets(project, data)
    posted = [(key, fs) for key, _t, fs in formsets if fs.is_bound]
    if data is not None and form.is_valid() and all(fs.is_valid() for _k, fs in posted):
        values = form.settings_values()
        values["taxonomies"] = {**(project.taxonomies or {}), **{key: fs.rows(key) for key, fs in posted}}
        try:
            with transaction.atomic():
                project_update(project=project, user=request.user, **values)
        except ValidationError as exc:
            # A check constraint across fields (e.g. min scenes above max): say so, keep the input.
            form.add_error(None, exc.messages)
        else:
            messages.success(request, _("Settings saved. They apply to the next processing, curation or draft run."))
            return redirect("studio:project_settings", slug=slug)
    return render(
        request, "studio/project_settings.html", {"project": project, "form": form, "taxonomy_formsets": formsets}
    )


@login_required
@require_POST
def project_archive_view(request, slug):
    """Archive (or, with action=unarchive, bring back) a project; its data stays readable."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    if request.POST.get("action") == "unarchive":
        project_unarchive(project=project, user=request.user)
        messages.success(request, _("%(name)s takes new work again.") % {"name": project.name})
    else:
        project_archive(project=project, user=request.user)
        messages.success(
            request,
            _("%(name)s is archived: it stays readable and releasable but takes no new work.") % {"name": project.name},
        )
    return redirect("studio:project_settings", slug=slug)


def _model_endpoint_page(request, project, form, report=None):
    from llm.endpoints import NoModelEndpoint, endpoint_for, model_endpoint_of

    endpoint = model_endpoint_of(project)
    try:
        effective = endpoint_for(project=project, use="drafts")
    except NoModelEndpoint:
        effective = None
    context = {
        "project": project,
        "form": form,
        "report": report,
        "effective": effective,
        # Whether a key is stored, never the key: the page cannot show what it is not given.
        "key_is_set": bool(endpoint and endpoint.api_key),
        "environment_key_is_set": bool(settings.OPENAI_API_KEY),
        "own_base_url": bool(endpoint and endpoint.base_url),
    }
    if request.htmx and report is not None:
        return render(request, "studio/model_endpoint.html#connection_report", context)
    return render(request, "studio/model_endpoint.html", context)


@login_required
def model_endpoint(request, slug):
    """Project admins set where the project's model calls go, with which key, models and prices."""
    from llm.endpoints import model_endpoint_of, model_endpoint_save

    from .forms import ModelEndpointForm

    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = ModelEndpointForm(request.POST or None, endpoint=model_endpoint_of(project))
    if request.method == "POST" and form.is_valid():
        model_endpoint_save(
            project=project,
            user=request.user,
            base_url=form.cleaned_data["base_url"],
            models=form.models(),
            prices=form.prices(),
            new_key=form.cleaned_data["new_key"],
            clear_key=form.cleaned_data["clear_key"],
        )
        messages.success(request, _("Model endpoint saved. It applies to the next model call."))
        return redirect("studio:model_endpoint", slug=slug)
    return _model_endpoint_page(request, project, form)


@login_required
@require_POST
def model_endpoint_test(request, slug):
    """One small call to the saved endpoint, reported in words (the technical detail behind a disclosure)."""
    from llm.client import endpoint_connection_test
    from llm.endpoints import model_endpoint_of

    from .forms import ModelEndpointForm

    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    report = endpoint_connection_test(project=project)
    return _model_endpoint_page(request, project, ModelEndpointForm(endpoint=model_endpoint_of(project)), report)


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
    response = render(
        request, template, {"project": project, "job": job, "is_admin": can(request.user, Action.ADMINISTER, project)}
    )
    if request.htmx and job.is_finished:
        # The page around a polled job (the video list) refreshes what the job changed.
        trigger_client_event(response, JOB_FINISHED_EVENT, {"job": job.pk}, after="settle")
    return response


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
    except (ValueError, Refused) as exc:
        messages.error(request, exc.message if isinstance(exc, Refused) else str(exc))
        new_job = job
    if request.htmx:
        return render(request, "studio/_job.html#job", {"project": project, "job": new_job, "is_admin": True})
    return redirect("studio:job_status", slug=slug, job_id=new_job.pk)
