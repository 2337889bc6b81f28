"""Celery tasks of the review workflow: thin wrappers over reviewer.queues and reviewer.dashboard_snapshots."""

from celery import shared_task

from projects.models import Project

from .dashboard_snapshots import dashboard_project_refresh, dashboard_snapshots_due
from .queues import assignments_expire


# Safe to run on a schedule, twice, or after a crash: it only marks leases that already lapsed, and
# skips rows a claim is working on. A short time limit: it is one indexed UPDATE per thousand rows.
@shared_task(name="reviewer.expire_leases", acks_late=True, time_limit=300, soft_time_limit=240)
def expire_leases() -> int:
    """Mark lapsed leases expired; returns how many (their items are already back in the pool)."""
    return assignments_expire()


# Both dashboard tasks are safe twice or after a crash: a refresh rewrites one row per range from
# the database as it is, and finds nothing to do when nothing changed. Short limits: one project's
# presets take a few seconds at benchmark scale; a stuck one should give way to the next minute's.
@shared_task(name="reviewer.dashboard_refresh", acks_late=True, time_limit=180, soft_time_limit=150)
def dashboard_refresh(project_id: int) -> list[str]:
    """Recompute one project's dashboard snapshots that are due; returns their range keys."""
    project = Project.objects.filter(pk=project_id).first()
    return dashboard_project_refresh(project=project) if project else []


@shared_task(name="reviewer.dashboard_refresh_due", acks_late=True, time_limit=60, soft_time_limit=50)
def dashboard_refresh_due() -> list[int]:
    """Every minute (beat): one dashboard_refresh per project viewed lately that had review activity."""
    due = list(dashboard_snapshots_due())
    for project_id in due:
        # Expires before the next minute's round, which would send it again if still due.
        dashboard_refresh.apply_async(args=[project_id], expires=55)
    return due
