"""Claim-next under real concurrency on PostgreSQL: threads, each with its own database connection."""

import threading
import time
from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotator.models import MCQ, ItemStatus
from projects.models import Role
from reviewer.models import Assignment, AssignmentStatus
from reviewer.queues import assignment_complete, queue_claim_next
from tests import factories

# Committed data, seen by every thread's connection; flushed after each test.
pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = 32
HOLDING = [AssignmentStatus.ACTIVE, AssignmentStatus.COMPLETED]


def _examiners(project, n):
    users = []
    for i in range(n):
        user = factories.UserFactory(username=f"examiner{i:02d}")
        factories.MembershipFactory(project=project, user=user, role=Role.EXAMINER)
        users.append(user)
    return users


def _in_thread(fn, *args):
    """Run fn in a thread with its own connection; returns (thread, outcome dict)."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the test, which fails with it
            outcome["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("overlap", [1, 2])
def test_32_clients_pull_until_empty_and_each_item_goes_to_exactly_overlap_people(overlap):
    project = factories.ProjectFactory()
    people = _examiners(project, CLIENTS)
    now = timezone.now()
    items = []
    for i in range(40):
        # Some items were written by one of the claimers: they must go to the others.
        author = people[i % CLIENTS] if i % 5 == 0 else None
        items.append(factories.MCQFactory(project=project, status=ItemStatus.SCORED, author=author))
        MCQ.objects.filter(pk=items[-1].pk).update(submitted_at=now - timedelta(seconds=i))
    # Noise the queue must pass over: other statuses, another project.
    factories.MCQFactory(project=project, status=ItemStatus.ACCEPTED)
    factories.MCQFactory(status=ItemStatus.SCORED)
    queue = factories.ReviewQueueFactory(project=project, members=people, overlap=overlap)
    barrier = threading.Barrier(CLIENTS)
    claims: dict[int, list[Assignment]] = {}

    def client(user):
        barrier.wait()
        got = claims[user.pk] = []
        while True:
            assignment = queue_claim_next(queue=queue, user=user)
            if assignment is None:
                return
            got.append(assignment)
            if len(got) % 2:  # some people finish quickly; a completed lease still takes its slot
                assignment_complete(assignment=assignment, user=user)

    started = [_in_thread(client, user) for user in people]
    for thread, _ in started:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread, _ in started), "a client never finished"
    errors = [outcome["error"] for _, outcome in started if "error" in outcome]
    assert not errors, errors

    taken = Assignment.objects.filter(queue=queue, status__in=HOLDING)
    per_item = Counter(taken.values_list("mcq_id", flat=True))
    assert per_item == {item.pk: overlap for item in items}
    pairs = list(taken.values_list("mcq_id", "assignee_id"))
    assert len(set(pairs)) == len(pairs), "someone got the same item twice"
    for item in items:
        if item.author_id is not None:
            assert not taken.filter(mcq=item, assignee_id=item.author_id).exists(), "an author examined own work"
    handed_out = [a.pk for got in claims.values() for a in got]
    assert len(handed_out) == len(set(handed_out)) == len(items) * overlap == taken.count()
    assert not Assignment.objects.exclude(status__in=HOLDING).exists()


def _wait_for_a_lock_wait(timeout_s=10.0):
    """Until some other backend of this database waits for a row lock."""
    deadline = time.monotonic() + timeout_s
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("the claimer never waited for the row lock")


def _hold_item_while_claiming(item, holder, locked, go):
    """Another claimer, mid-claim: item row locked, its lease written, not yet committed."""
    with transaction.atomic():
        MCQ.objects.select_for_update().get(pk=item.pk)
        now = timezone.now()
        Assignment.objects.create(
            project=item.project,
            stage=ItemStatus.EXAMINING,
            assignee=holder,
            leased_at=now,
            lease_expires_at=now + timedelta(minutes=30),
            **Assignment.ref_for(item),
        )
        locked.set()
        assert go.wait(20)


@pytest.mark.parametrize("overlap, expect_claim", [(1, False), (2, True)])
def test_a_claim_that_waited_for_the_lock_counts_again_before_taking_a_slot(overlap, expect_claim):
    """The claim's query counted before the other claimer committed; only a recount under the lock is right.

    With overlap 1 the item is full by the time the lock is granted (a claim on the stale count
    would hand it out twice); with overlap 2 the waiting claimer takes the second slot instead of
    calling the queue empty because SKIP LOCKED passed over a locked row.
    """
    project = factories.ProjectFactory()
    first, second = _examiners(project, 2)
    item = factories.MCQFactory(project=project, status=ItemStatus.SCORED)
    queue = factories.ReviewQueueFactory(project=project, members=[first, second], overlap=overlap)
    locked, go = threading.Event(), threading.Event()
    holder, held = _in_thread(_hold_item_while_claiming, item, first, locked, go)
    try:
        assert locked.wait(20)
        claimer, claimed = _in_thread(lambda: queue_claim_next(queue=queue, user=second))
        _wait_for_a_lock_wait()
    finally:
        go.set()
        holder.join(20)
    claimer.join(20)
    assert "error" not in held and "error" not in claimed, (held, claimed)
    assignments = defaultdict(list)
    for a in Assignment.objects.filter(mcq=item, status=AssignmentStatus.ACTIVE):
        assignments[a.assignee_id].append(a)
    if expect_claim:
        assert claimed["value"].mcq_id == item.pk
        assert set(assignments) == {first.pk, second.pk}
    else:
        assert claimed["value"] is None
        assert set(assignments) == {first.pk}
