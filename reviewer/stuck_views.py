"""The stuck-work page of project admins: items waiting on a model, failed jobs, lapsed leases, and bulk actions.

Every view authorises first (projects.permissions: ADMINISTER); the services in reviewer.stuck_work
authorise again, so the API or a shell gets the same answer.
"""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from annotator.models import ItemStatus
from projects.models import Membership
from projects.permissions import Action, get_project_or_404

from .history import item_label
from .queues import item_path
from .stuck_work import (
    stuck_jobs_retry,
    stuck_judge_again,
    stuck_leases_reassign,
    stuck_move,
    stuck_work,
)

ACTIONS = ("judge", "examine", "author", "retry", "reassign")


def _members(project):
    ids = Membership.objects.filter(project=project).values("user_id")
    return get_user_model().objects.filter(pk__in=ids, is_active=True).order_by("username")


@login_required
@require_safe
def stuck_work_page(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    work = stuck_work(project=project)
    waiting = [
        {
            "row": row,
            "label": item_label(row.item),
            "url": item_path(kind=row.kind, item_id=row.item.pk, slug=project.slug),
        }
        for row in work.waiting
    ]
    leases = [{"lease": lease, "label": item_label(lease.item)} for lease in work.lapsed_leases]
    return render(
        request,
        "reviewer/stuck.html",
        {
            "project": project,
            "work": work,
            "waiting": waiting,
            "leases": leases,
            "members": _members(project),
        },
    )


@login_required
@require_POST
def stuck_work_act(request, slug):
    """One bulk action on the rows ticked on the stuck-work page; says what was done and what was refused."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    action = request.POST.get("action", "")
    user = request.user
    names: dict[str, str] = {}
    if action == "judge":
        outcome = stuck_judge_again(project=project, user=user, item_keys=request.POST.getlist("items"))
        done = _("%(count)d items sent to the judge or on by the gate.")
    elif action in ("examine", "author"):
        to_status = ItemStatus.EXAMINING if action == "examine" else ItemStatus.REVISING
        outcome = stuck_move(project=project, user=user, item_keys=request.POST.getlist("items"), to_status=to_status)
        done = (
            _("%(count)d items moved on to examining, marked not scored.")
            if action == "examine"
            else _("%(count)d items sent back to their authors.")
        )
    elif action == "retry":
        outcome = stuck_jobs_retry(project=project, user=user, job_ids=request.POST.getlist("jobs"))
        done = _("%(count)d jobs retried.")
    elif action == "reassign":
        assignee = _members(project).filter(pk=request.POST.get("assignee") or 0).first()
        if assignee is None:
            messages.error(request, _("Choose the member who takes over the leases."))
            return redirect("reviewer:stuck_work", slug=slug)
        outcome = stuck_leases_reassign(
            project=project, user=user, assignment_ids=request.POST.getlist("leases"), assignee=assignee
        )
        done = _("%(count)d items assigned to %(name)s.")
        names["name"] = assignee.get_username()
    else:
        messages.error(request, _("Unknown action."))
        return redirect("reviewer:stuck_work", slug=slug)
    if outcome.done:
        messages.success(request, done % {"count": outcome.done, **names})
    for refusal in outcome.refused[:10]:
        messages.warning(request, refusal)
    if not outcome.done and not outcome.refused:
        messages.info(request, _("Nothing was ticked."))
    return redirect("reviewer:stuck_work", slug=slug)
