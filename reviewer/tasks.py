"""Celery tasks of the review workflow: thin wrappers over services in reviewer.queues."""

from celery import shared_task

from .queues import assignments_expire


# Safe to run on a schedule, twice, or after a crash: it only marks leases that already lapsed, and
# skips rows a claim is working on. A short time limit: it is one indexed UPDATE per thousand rows.
@shared_task(name="reviewer.expire_leases", acks_late=True, time_limit=300, soft_time_limit=240)
def expire_leases() -> int:
    """Mark lapsed leases expired; returns how many (their items are already back in the pool)."""
    return assignments_expire()
