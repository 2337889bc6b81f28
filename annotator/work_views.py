"""The annotator's work list (what to do next, by status) and the "next item" redirect."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_safe

from projects.models import ProjectKind
from projects.permissions import Action, can, get_project_or_404
from reviewer.workspace import next_item, work_list

from .models import ItemStatus
from .selectors import KINDS, chains_without_pair, clips_without_chain, clips_without_chain_count

LIST_LIMIT = 25
SUMMARY_KINDS = [("chain", "QA chains"), ("pair", "Relations (chain pairs)"), ("mcq", "MCQs")]


def _editor_url(project, kind: str, item_id: int) -> str:
    name = {"chain": "annotator:chain_editor", "pair": "annotator:pair_editor"}[kind]
    return reverse(name, args=[project.slug, item_id])


def _after(raw: str) -> tuple[str, int] | None:
    """`?after=chain-12` → ("chain", 12); anything else is ignored (the list starts from the top)."""
    kind, _, number = (raw or "").partition("-")
    if kind in KINDS and number.isdecimal():
        return kind, int(number)
    return None


@login_required
@require_safe
def work(request, slug):
    """GET /p/<slug>/work/[?status=…]: my items first; chains, chain pairs and MCQs by status."""
    project = get_project_or_404(request.user, slug)
    if request.htmx and request.htmx.target == "work-by-hand":
        return _work_by_hand(request, project)
    status = request.GET.get("status", "")
    if status not in ItemStatus.values:
        status = ""
    result = work_list(project=project, user=request.user, status=status or None, limit=LIST_LIMIT)
    summary_rows = []
    for kind, label in SUMMARY_KINDS:
        counts = result.summary[kind]
        cells = [(s, counts.get(s.value, {"total": 0, "mine": 0})) for s in ItemStatus]
        summary_rows.append((kind, label, cells, sum(c["total"] for _, c in cells)))
    return render(
        request,
        "annotator/work.html",
        {
            "project": project,
            "result": result,
            "status": status,
            "status_label": ItemStatus(status).label if status else "",
            "statuses": list(ItemStatus),
            "summary_rows": summary_rows,
            "work_statuses": [ItemStatus(s).label.lower() for s in result.statuses],
            "limit": LIST_LIMIT,
            "by_hand": project.kind == ProjectKind.SVBENCH and can(request.user, Action.ANNOTATE, project),
        },
    )


def _work_by_hand(request, project):
    """The "start by hand" card, which the work list loads after the page (htmx, target #work-by-hand).

    SVBench work needs no model: a clip without a chain, or two adjacent chains not yet linked, is
    work an annotator starts by hand. Only annotators see it.
    """
    by_hand = project.kind == ProjectKind.SVBENCH and can(request.user, Action.ANNOTATE, project)
    free_clips, free_clip_count = clips_without_chain(project=project, limit=LIST_LIMIT) if by_hand else ([], 0)
    unlinked, unlinked_count = chains_without_pair(project=project, limit=LIST_LIMIT) if by_hand else ([], 0)
    return render(
        request,
        "annotator/work.html#by_hand",
        {
            "project": project,
            "free_clips": free_clips,
            "free_clip_count": free_clip_count,
            "unlinked": unlinked,
            "unlinked_count": unlinked_count,
        },
    )


@login_required
@require_safe
def work_next(request, slug):
    """GET /p/<slug>/work/next/[?after=chain-12]: open the next chain or chain pair to work on."""
    project = get_project_or_404(request.user, slug)
    found = next_item(project=project, user=request.user, after=_after(request.GET.get("after", "")))
    if found is None:
        bare = 0
        if project.kind == ProjectKind.SVBENCH and can(request.user, Action.ANNOTATE, project):
            bare = clips_without_chain_count(project=project)
        if bare:
            messages.info(
                request,
                ngettext(
                    "No chain is waiting for you, but %(n)d clip has no QA chain yet: write one by hand (c).",
                    "No chain is waiting for you, but %(n)d clips have no QA chain yet: write one by hand (c).",
                    bare,
                )
                % {"n": bare},
            )
            return redirect("annotator:work", slug=project.slug)
        messages.info(request, _("Nothing is waiting for you: every chain and chain pair you can edit is done."))
        return redirect("annotator:work", slug=project.slug)
    return redirect(_editor_url(project, *found))
