"""Dashboard snapshots: the preset ranges' panels computed once, shown many times, their age in plain view.

At benchmark scale the nine panels take about a second to compute and draw (SQL over ~250 k
review rows, thousands of SVG marks), while people open the page far more often than the numbers
change. So, like the analytics products people know, the page shows the latest snapshot of a
preset range (last 7, 30 or 90 calendar days, today included) and says when it was taken:

- a first view of a preset (or the first view on a new day, when the range moved on) computes
  the snapshot synchronously and says so;
- "Refresh" recomputes it at once (`dashboard_snapshot_refresh`);
- every minute, Celery beat recomputes the snapshots that someone viewed in the last hour
  (`viewed_at`, written at most every few minutes) and whose project had review activity since they
  were computed (`activity`: one cheap query over the newest ids and the live leases).

Custom ranges, CSV downloads and the rows behind a number are always computed on request.
"""

from __future__ import annotations

import datetime as dt
import json
import time

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.utils import timezone, translation

from annotator.models import MCQ, ChainPair, QAChain, ReviewEvent
from projects.models import Project

from . import dashboards as d
from .dashboard_panels import panels_build, panels_html
from .models import (
    Assignment,
    AssignmentStatus,
    DashboardRange,
    DashboardSnapshot,
    ExamVerdict,
    QualityScore,
    ReviewQueue,
)

PRESETS = {r.value: r.days for r in DashboardRange}
WATCHED_FOR = dt.timedelta(hours=1)  # a snapshot viewed this recently is kept up to date
VIEW_MARK_EVERY = dt.timedelta(minutes=5)  # how stale `viewed_at` may be: page views stay read-only


def preset_period(range_key: str, *, today: dt.date | None = None) -> d.Period:
    return d.Period.last(PRESETS[range_key], today=today)


def preset_key(period: d.Period, *, today: dt.date | None = None) -> str | None:
    """The preset `period` is today, if any (the page reaches presets through ?range= and through dates)."""
    today = today or timezone.localdate()
    return next((key for key, days in PRESETS.items() if d.Period.last(days, today=today) == period), None)


# --- what changed since ---------------------------------------------------------------------------------

# The newest row of each table the panels count: a new event, verdict, score, lease, item or queue
# gives a new id. Descending the primary key stops at the project's newest row (no scan).
_NEWEST = {
    "event": ReviewEvent,
    "verdict": ExamVerdict,
    "score": QualityScore,
    "lease": Assignment,
    "qa_chain": QAChain,
    "chain_pair": ChainPair,
    "mcq": MCQ,
    "queue": ReviewQueue,
}


def activity(*, project: Project, now=None) -> dict[str, int]:
    """What the panels depend on that changes with review work, in one query.

    The newest id per table, and the live and lapsed-but-unswept leases (a lease that lapses, is
    completed or handed back changes queue depth without a new row). Item edits that log no event
    and settings (a queue's overlap, the judge threshold) are not seen: "Refresh" is there for them.
    """
    now = now or timezone.now()
    active = Assignment.objects.filter(project=OuterRef("pk"), status=AssignmentStatus.ACTIVE).order_by()

    def count(qs):
        return Subquery(qs.values("project").annotate(n=Count("pk")).values("n"), output_field=IntegerField())

    columns = {
        name: Subquery(
            model.objects.filter(project=OuterRef("pk")).order_by("-pk").values("pk")[:1], output_field=IntegerField()
        )
        for name, model in _NEWEST.items()
    }
    columns["leases_live"] = count(active.filter(lease_expires_at__gt=now))
    columns["leases_lapsed"] = count(active.filter(lease_expires_at__lte=now))
    row = Project.objects.filter(pk=project.pk).order_by().values(**columns).get()
    return {k: v or 0 for k, v in row.items()}


# --- computing and storing -----------------------------------------------------------------------------


def _compute(*, project: Project, period: d.Period, now) -> tuple[dict, str, dict[str, int]]:
    seen = activity(project=project, now=now)
    # A snapshot is shared by everyone who opens the dashboards, whatever their language: it is
    # computed in the default language, and choice labels (lazy translations) are stored as text.
    with translation.override(settings.LANGUAGE_CODE):
        panels, tables, has_queues = panels_build(project=project, period=period, now=now)
        data = {key: {"columns": t.columns, "rows": t.rows} for key, t in tables.items()}
        data = json.loads(json.dumps(data, cls=DjangoJSONEncoder))
        return data, panels_html(panels, project=project, has_queues=has_queues), seen


def dashboard_snapshot_refresh(*, project: Project, range_key: str, now=None) -> DashboardSnapshot:
    """Compute the preset range's panels now and store them (one row per project and range).

    Idempotent: the same data at the same moment gives the same row; a concurrent refresh of the
    same snapshot simply writes last. On PostgreSQL the panels read one consistent snapshot of the
    database (REPEATABLE READ, read-only), so the nine panels and their CSVs agree with each other.
    """
    if range_key not in PRESETS:
        raise ValueError(f"Unknown range “{range_key}”: one of {', '.join(PRESETS)}.")
    now = now or timezone.now()
    period = preset_period(range_key, today=timezone.localdate(now))
    started = time.perf_counter()
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            data, html, seen = _compute(project=project, period=period, now=now)
    else:
        data, html, seen = _compute(project=project, period=period, now=now)
    snapshot = DashboardSnapshot(
        project=project,
        range_key=range_key,
        period_start=period.start,
        period_end=period.end,
        computed_at=now,
        seconds_taken=round(time.perf_counter() - started, 3),
        data=data,
        html=html,
        activity=seen,
    )
    fields = ["period_start", "period_end", "computed_at", "seconds_taken", "data", "html", "activity"]
    # One statement whether the row exists or not, so two refreshes at once cannot collide on insert.
    DashboardSnapshot.objects.bulk_create(
        [snapshot], update_conflicts=True, unique_fields=["project", "range_key"], update_fields=fields
    )
    return snapshot


def dashboard_snapshot_for_page(*, project: Project, range_key: str, now=None) -> tuple[DashboardSnapshot, str]:
    """The snapshot the page shows, and why it was computed for this request ("" when it was there).

    "first": there was none yet; "new-day": the stored one covers yesterday's range. Records the
    view (at most every VIEW_MARK_EVERY) so the minute job keeps this snapshot up to date.
    """
    now = now or timezone.now()
    period = preset_period(range_key, today=timezone.localdate(now))
    # The page draws the stored HTML: the JSON numbers stay in the database.
    snapshot = DashboardSnapshot.objects.filter(project=project, range_key=range_key).defer("data").first()
    reason = ""
    if snapshot is None:
        reason = "first"
    elif (snapshot.period_start, snapshot.period_end) != (period.start, period.end):
        reason = "new-day"
    if reason:
        viewed = snapshot.viewed_at if snapshot else None
        snapshot = dashboard_snapshot_refresh(project=project, range_key=range_key, now=now)
        snapshot.viewed_at = viewed
    if snapshot.viewed_at is None or now - snapshot.viewed_at >= VIEW_MARK_EVERY:
        DashboardSnapshot.objects.filter(project=project, range_key=range_key).update(viewed_at=now)
        snapshot.viewed_at = now
    return snapshot, reason


# --- keeping viewed snapshots up to date ------------------------------------------------------------------


def _due(snapshots: list[DashboardSnapshot], *, project: Project, now) -> list[str]:
    if not snapshots:
        return []
    today = timezone.localdate(now)
    seen = activity(project=project, now=now)
    due = []
    for s in snapshots:
        period = preset_period(s.range_key, today=today)
        if s.activity != seen or (s.period_start, s.period_end) != (period.start, period.end):
            due.append(s.range_key)
    return due


def _watched(now):
    return DashboardSnapshot.objects.filter(viewed_at__gte=now - WATCHED_FOR).only(
        "project_id", "range_key", "period_start", "period_end", "activity"
    )


def dashboard_snapshots_due(*, now=None) -> dict[int, list[str]]:
    """Project id → range keys to recompute: viewed in the last hour, and the project had review
    activity since (or the range moved to a new day). One query, plus one `activity` per project."""
    now = now or timezone.now()
    by_project: dict[int, list[DashboardSnapshot]] = {}
    for s in _watched(now).order_by("project_id", "range_key"):
        by_project.setdefault(s.project_id, []).append(s)
    out = {}
    for project_id, snapshots in by_project.items():
        due = _due(snapshots, project=Project(pk=project_id), now=now)
        if due:
            out[project_id] = due
    return out


def dashboard_project_refresh(*, project: Project, now=None) -> list[str]:
    """Recompute the project's due snapshots (see dashboard_snapshots_due); returns their range keys.

    Idempotent: run again with nothing new, it finds nothing due and does nothing.
    """
    now = now or timezone.now()
    due = _due(list(_watched(now).filter(project=project).order_by("range_key")), project=project, now=now)
    for range_key in due:
        dashboard_snapshot_refresh(project=project, range_key=range_key, now=now)
    return due
