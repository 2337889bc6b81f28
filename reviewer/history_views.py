"""The history page of one item: its review events, its content versions with diffs, and revert for admins.

/p/<slug>/history/<kind>/<id>/ where kind is qa_chain, chain_pair or mcq. Members read it; only
project admins revert (the service checks that again).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotator.concurrency import StaleVersion
from annotator.lifecycle import item_history
from annotator.models import ItemKind
from annotator.versions import VersionUnknown, item_diff
from projects.permissions import Action, can, get_project_or_404

from .gate_views import editor_url, item_or_404, item_scores_context
from .history import (
    RevertRefused,
    diff_against_machine_draft,
    item_history_versions,
    item_label,
    item_revert,
)

VERSIONS_PER_PAGE = 20


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@login_required
def item_history_page(request, slug, kind, item_id):
    project = get_project_or_404(request.user, slug)
    item = item_or_404(project, kind, item_id)
    entries = item_history_versions(item)
    shown = max(VERSIONS_PER_PAGE, _int(request.GET.get("shown")) or 0)

    compare, compare_error = None, ""
    a, b = _int(request.GET.get("from")), _int(request.GET.get("to"))
    if request.GET.get("from") or request.GET.get("to"):
        if a is None or b is None:
            compare_error = "Choose two versions to compare."
        else:
            try:
                compare = item_diff(item, a, b)
            except VersionUnknown as exc:
                compare_error = str(exc)

    context = {
        "project": project,
        "item": item,
        "kind": kind,
        "kind_label": ItemKind(kind).label,
        "label": item_label(item),
        "editor_url": editor_url(project, kind, item.pk),
        "events": item_history(item=item),
        "entries": entries[:shown],
        "more_versions": len(entries) - shown if len(entries) > shown else 0,
        "shown_next": shown + VERSIONS_PER_PAGE,
        "version_numbers": [e.version.version for e in entries],
        "machine_diff": diff_against_machine_draft(item),
        "compare": compare,
        "compare_from": a,
        "compare_to": b,
        "compare_error": compare_error,
        "is_admin": can(request.user, Action.ADMINISTER, project),
        **item_scores_context(item, user=request.user),
    }
    return render(request, "reviewer/item_history.html", context)


@login_required
@require_POST
def item_revert_view(request, slug, kind, item_id):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    item = item_or_404(project, kind, item_id)
    to_version, expected = _int(request.POST.get("to_version")), _int(request.POST.get("expected_version"))
    if to_version is None:
        messages.error(request, _("Choose the version to go back to."))
    else:
        try:
            result = item_revert(item=item, to_version=to_version, user=request.user, expected_version=expected)
        except StaleVersion as exc:
            messages.error(
                request, f"{exc} " + _("Nothing was reverted: look at the latest version below and choose again.")
            )
        except (RevertRefused, PermissionDenied) as exc:
            messages.error(request, str(exc))
        else:
            messages.success(
                request,
                _("Version %(version)s restores the content of version %(to)s; the item stays %(status)s.")
                % {"version": result.version, "to": to_version, "status": item.get_status_display().lower()},
            )
            for warning in result.warnings:
                messages.warning(request, warning)
    return redirect("reviewer:item_history", slug=slug, kind=kind, item_id=item_id)
