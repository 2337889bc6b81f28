"""Import existing benchmark files into a project (admins): /p/<slug>/releases/import/.

The page takes a zip or a server folder, starts the import job (releases.imports.services) and shows
its progress, then its report: what was imported, or every problem with its file, record and field.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_safe

from jobs.models import BackgroundJob
from jobs.services import JobAlreadyRunning
from projects.permissions import Action, get_project_or_404
from projects.refusals import Refused

from .forms import BenchmarkImportForm
from .imports.services import IMPORT_TASK, benchmark_import_start
from .models import BenchmarkImport

RECENT = 10
COUNT_LABELS = [
    ("mcqs", gettext_lazy("MCQs")),
    ("chains", gettext_lazy("QA chains")),
    ("chain_pairs", gettext_lazy("Chain pairs")),
    ("relations", gettext_lazy("Relations")),
    ("cues", gettext_lazy("Subtitle cues")),
    ("comments", gettext_lazy("Comments")),
    ("videos_imported", gettext_lazy("Videos imported")),
    ("videos_matched", gettext_lazy("Videos matched")),
]


def _import_jobs(project):
    return BackgroundJob.objects.filter(project=project, kind=IMPORT_TASK).order_by("-created_at", "-pk")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def benchmark_import_page(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = BenchmarkImportForm(request.POST or None, request.FILES or None, project=project)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = benchmark_import_start(
                project=project,
                format=data["format"],
                status=data["status"],
                user=request.user,
                folder=(data.get("folder") or "").strip(),
                upload=data.get("archive") or None,
            )
        except JobAlreadyRunning as exc:
            messages.info(request, _("An import is already running in this project; its progress is below."))
            return redirect("releases:import_job", slug=slug, job_id=exc.job.pk)
        except Refused as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _("The import has started; this page shows its progress, then its report."))
            return redirect("releases:import_job", slug=slug, job_id=job.pk)
    return _page(request, project, form, _import_jobs(project).first())


@login_required
@require_safe
def benchmark_import_job(request, slug, job_id):
    """One import job: the whole page, or (htmx) its progress box, polled until the job ends."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    job = _import_jobs(project).filter(pk=job_id).first()
    if job is None:
        raise Http404("No such import in this project.")
    if request.htmx:
        response = render(request, "releases/import.html#job", {"project": project, "job": job, **_report(job)})
        if job.is_finished:
            response["HX-Refresh"] = "true"  # once: the whole page then lists the new import too
        return response
    return _page(request, project, BenchmarkImportForm(project=project), job)


def _report(job) -> dict:
    counts = ((job.result or {}).get("counts") or {}) if job is not None else {}
    return {"count_rows": [(label, counts[key]) for key, label in COUNT_LABELS if key in counts]}


def _page(request, project, form, job):
    return render(
        request,
        "releases/import.html",
        {
            "project": project,
            "form": form,
            "job": job,
            **_report(job),
            "imports": BenchmarkImport.objects.filter(project=project).select_related("created_by")[:RECENT],
        },
    )
