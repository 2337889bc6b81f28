"""Release screens under /p/<slug>/releases/: the list, a new release (admins), one release, its
statistics, downloads and delete (admins).

Members of any role view and download; only admins create and delete; strangers get the project's
404. Every view authorises before it reads (projects.permissions); the services check again.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from projects.permissions import Action, can, get_project_or_404

from . import downloads
from .forms import SPLIT_NAMES, ReleaseForm
from .models import DatasetRelease, ReleaseStatus
from .selectors import (
    release_charts,
    release_get,
    release_list,
    release_match_counts,
    release_summary,
    release_total_bytes,
    validation_rows,
)
from .services import clean_filters, release_create, release_delete
from .splits import SplitConfigError, split_targets


def _release_or_404(project, release_id: int) -> DatasetRelease:
    release = release_get(project=project, release_id=release_id)
    if release is None:
        raise Http404("No such release in this project.")
    return release


def _row_context(release: DatasetRelease) -> dict:
    return {"release": release, "summary": release_summary(release)}


@login_required
@require_safe
def release_list_view(request, slug):
    """Every release of the project, newest first, with live progress while one is being built."""
    project = get_project_or_404(request.user, slug)
    releases = list(release_list(project=project))
    for release in releases:
        release.project = project
    return render(
        request,
        "releases/list.html",
        {
            "project": project,
            "rows": [_row_context(r) for r in releases],
            "is_admin": can(request.user, Action.ADMINISTER, project),
        },
    )


@login_required
@require_safe
def release_row(request, slug, release_id):
    """One row of the list (htmx): swapped in when its build job ends, so the status and links update."""
    project = get_project_or_404(request.user, slug)
    release = _release_or_404(project, release_id)
    context = {"project": project, "is_admin": can(request.user, Action.ADMINISTER, project), **_row_context(release)}
    return render(request, "releases/list.html#row", context)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def release_new(request, slug):
    """The new-release form (admins); a valid POST queues the build and opens the release."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = ReleaseForm(request.POST if request.method == "POST" else None, project=project)
    if request.method == "POST" and form.is_valid():
        try:
            release = release_create(project=project, by=request.user, **form.service_fields())
        except ValidationError as exc:
            form.add_service_errors(exc)
        else:
            messages.success(
                request,
                _("Release %(version)s is queued; this page shows its progress and then its files.")
                % {"version": release.version},
            )
            return redirect("releases:detail", slug=slug, release_id=release.pk)
    if request.method == "POST":
        preview = _preview(project, form)
    else:  # what the default filters (accepted items) select, before anything is changed
        preview = {"counts": release_match_counts(project=project, filters=clean_filters({}, project=project))}
    return render(request, "releases/new.html", {"project": project, "form": form, "preview": preview})


def _preview(project, form: ReleaseForm) -> dict:
    """What the filters of the (possibly half-filled) form select, or why they cannot be read."""
    form.is_valid()  # fills cleaned_data as far as it goes
    if any(name in form.errors for name in ("statuses", "categories", "video_ids", "accepted_from", "accepted_to")):
        return {"error": "Fix the filters above to see what they select."}
    try:
        filters = clean_filters(form.filters(), project=project)
    except ValidationError as exc:
        return {"error": " ".join(exc.messages)}
    counts = release_match_counts(project=project, filters=filters)
    return {"counts": counts, **_split_preview(form, counts.videos)}


def _split_preview(form: ReleaseForm, videos: int) -> dict:
    """Videos per split for the selected videos, and the splits asked for that would stay empty.

    A preview: a video that kept its split from an earlier release may move a count by one; the
    build deals the same targets (releases.splits.split_targets)."""
    if not videos or any(name in form.errors for name in ("split_mode", *SPLIT_NAMES)):
        return {}
    try:
        targets = split_targets(form.split_config(), videos)
    except SplitConfigError:
        return {}
    return {"splits": targets, "empty_splits": [name for name, n in targets.items() if not n]}


@login_required
@require_POST
def release_preview(request, slug):
    """How many items and videos the form's filters select (htmx, as the admin fills the form in)."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = ReleaseForm(request.POST, project=project)
    return render(request, "releases/new.html#preview", {"project": project, "preview": _preview(project, form)})


@login_required
@require_safe
def release_detail(request, slug, release_id):
    """One release: status and progress, the manifest's counts, files with sha256, validation errors."""
    project = get_project_or_404(request.user, slug)
    release = _release_or_404(project, release_id)
    return render(
        request,
        "releases/detail.html",
        {
            "project": project,
            "release": release,
            "summary": release_summary(release),
            "total_bytes": release_total_bytes(release),
            "errors": validation_rows(release),
            "is_admin": can(request.user, Action.ADMINISTER, project),
            "manifest_facts": _manifest_facts(release),
            "per_format": _per_format(release),
        },
    )


_KIND_WORDS = {"qa_chain": "QA chains", "chain_pair": "chain pairs", "mcq": "MCQs"}


def _per_format(release: DatasetRelease) -> list[tuple[str, dict]]:
    """(format, {"items": [(kind, n)], "left_out": [...]}) from the manifest, in the release's format order."""
    per_format = (release.manifest or {}).get("per_format") or {}
    return [
        (
            fmt,
            {
                "items": [(_KIND_WORDS.get(kind, kind), n) for kind, n in c.get("items", {}).items()],
                "left_out": c.get("left_out", []),
            },
        )
        for fmt, c in per_format.items()
    ]


def _manifest_facts(release: DatasetRelease) -> list[tuple[str, str]]:
    """What the manifest adds to the row's own facts: the app and schema versions it was written with."""
    manifest = release.manifest or {}
    facts = []
    if manifest.get("app_version"):
        facts.append(("App version", str(manifest["app_version"])))
    if manifest.get("manifest_version"):
        facts.append(("Manifest version", str(manifest["manifest_version"])))
    schemas = manifest.get("schema_versions")
    if isinstance(schemas, dict) and schemas:
        facts.append(("Schema versions", ", ".join(f"{name} {v}" for name, v in schemas.items())))
    return facts


@login_required
@require_safe
def release_statistics(request, slug, release_id):
    """Charts of a release: categories, durations, QA per video, option lengths (numbers beside them)."""
    project = get_project_or_404(request.user, slug)
    release = _release_or_404(project, release_id)
    return render(
        request,
        "releases/statistics.html",
        {
            "project": project,
            "release": release,
            "charts": release_charts(release),
            "summary": release_summary(release),
        },
    )


@login_required
@require_safe
def release_download(request, slug, release_id, archive):
    """The release as zip (the stored deterministic archive) or tar (streamed from the stored files)."""
    project = get_project_or_404(request.user, slug)
    release = _release_or_404(project, release_id)
    try:
        downloads.check_downloadable(release)
    except downloads.NotDownloadable as exc:
        raise Http404(str(exc)) from None
    if archive == "zip":
        return downloads.zip_response(request, release)
    return downloads.tar_response(request, release)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def release_delete_view(request, slug, release_id):
    """GET: confirm (admins). POST: mark the release deleted and remove its files; the row keeps who/when."""
    project = get_project_or_404(request.user, slug)
    release = _release_or_404(project, release_id)
    if not can(request.user, Action.ADMINISTER, project):
        raise PermissionDenied(_("Only project admins delete releases."))
    if request.method == "POST":
        try:
            release_delete(release=release, by=request.user)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
            return redirect("releases:detail", slug=slug, release_id=release.pk)
        messages.success(
            request, _("Release %(version)s is deleted; its files are removed.") % {"version": release.version}
        )
        return redirect("releases:list", slug=slug)
    if release.status == ReleaseStatus.DELETED:
        messages.info(request, _("This release is already deleted."))
        return redirect(reverse("releases:detail", args=[slug, release.pk]))
    return render(
        request,
        "releases/delete.html",
        {"project": project, "release": release, "summary": release_summary(release)},
    )
