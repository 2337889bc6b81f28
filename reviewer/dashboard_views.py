"""Dashboards for project admins: nine panels of charts with their numbers, a CSV per panel, the rows behind a number.

Admins only: `get_project_or_404(..., Action.ADMINISTER)` answers 403 to members without the
admin role and 404 to strangers, before anything is read. A preset range (last 7, 30 or 90 days)
is shown from its snapshot (`reviewer.dashboard_snapshots`: a few queries, whatever the data),
with the time it was taken and a Refresh button; a custom range is computed on request
(`reviewer.dashboard_panels`). CSVs and the rows behind a number are always computed on request.
"""

import csv
import time
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from projects.permissions import Action, get_project_or_404

from . import dashboards as d
from .dashboard_panels import panels_build
from .dashboard_snapshots import PRESETS, dashboard_snapshot_for_page, dashboard_snapshot_refresh, preset_key
from .models import DashboardRange


def _period(request, today=None) -> tuple[d.Period, list[str]]:
    """The range asked for: ?range=7d|30d|90d (a preset), else ?from=&to= (default: the last 30 days)."""
    key = request.GET.get("range")
    if key is not None and not request.GET.get("from") and not request.GET.get("to"):
        if key in PRESETS:
            return d.Period.last(PRESETS[key], today=today), []
        return d.Period.last(today=today), [
            f"“{key}” is not a preset range ({', '.join(PRESETS)}). Showing the last 30 days instead."
        ]
    return d.period_parse(request.GET.get("from"), request.GET.get("to"), today=today)


def _ago(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


@login_required
@require_safe
def dashboard(request, slug):
    """Every panel for the chosen range (default: the last 30 days): a preset from its snapshot, a custom range live."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    now = timezone.now()
    today = timezone.localdate(now)
    period, errors = _period(request, today)
    range_key = preset_key(period, today=today)
    context = {
        "project": project,
        "period": period,
        "errors": errors,
        "range_key": range_key,
        "presets": [(r.value, r.label) for r in DashboardRange],
        "nav": [(number, key, title) for number, (key, title) in enumerate(d.PANELS.items(), start=1)],
    }
    if range_key:
        snapshot, computed_now = dashboard_snapshot_for_page(project=project, range_key=range_key, now=now)
        # Stored HTML drawn by our own template from escaped values (dashboard_panels.panels_html).
        context["panels_html"] = mark_safe(snapshot.html)  # noqa: S308
        context |= {
            "as_of": snapshot.computed_at,
            "ago": _ago((now - snapshot.computed_at).total_seconds()),
            "seconds_taken": snapshot.seconds_taken,
            "computed_now": computed_now,
        }
    else:
        started = time.perf_counter()
        panels, _tables, has_queues = panels_build(project=project, period=period, now=now)
        seconds = time.perf_counter() - started
        context |= {"panels": panels, "has_queues": has_queues, "as_of": now, "seconds_taken": seconds}
    return render(request, "reviewer/dashboard.html", context)


@login_required
@require_POST
def dashboard_refresh(request, slug):
    """Recompute a preset range's snapshot now (the Refresh button, key u), then show it."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    range_key = request.POST.get("range", "")
    if range_key not in PRESETS:
        return HttpResponse(
            f"“{range_key}” is not a preset range: send range={', '.join(PRESETS)}.",
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    snapshot = dashboard_snapshot_refresh(project=project, range_key=range_key)
    label = DashboardRange(range_key).label
    messages.success(
        request,
        _("Numbers of the last %(range)s recomputed just now, in %(seconds).1f s.")
        % {"range": label, "seconds": snapshot.seconds_taken},
    )
    return redirect(f"{reverse('reviewer:dashboard', args=[slug])}?range={range_key}")


@login_required
@require_safe
def dashboard_csv(request, slug, panel):
    """One panel's numbers as CSV, for the same range as the page."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    if panel not in d.PANELS:
        raise Http404("No such panel.")
    period, _errors = _period(request)
    data = d.panel_data(panel, project=project, period=period)
    table = d.panel_table(panel, data)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"{project.slug}-{panel}-{period.start.isoformat()}-{period.end.isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response)
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow(["" if v is None else v for v in row])
    return response


@login_required
@require_safe
def dashboard_rows(request, slug, panel):
    """The rows one number counts: items with links to their history, at most 200, with the total."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    if panel not in d.PANELS:
        raise Http404("No such panel.")
    period, errors = _period(request)
    try:
        page = d.panel_rows(panel, project=project, period=period, params=request.GET.dict())
        refused = ""
    except d.RowsRefused as exc:
        page, refused = None, str(exc)
    span = {"from": period.start.isoformat(), "to": period.end.isoformat()}
    back = f"{reverse('reviewer:dashboard', args=[slug])}?{urlencode(span)}#panel-{panel}"
    return render(
        request,
        "reviewer/dashboard_rows.html",
        {
            "project": project,
            "period": period,
            "errors": errors,
            "panel_title": d.PANELS[panel],
            "page": page,
            "refused": refused,
            "back": back,
        },
        status=400 if refused else 200,
    )
