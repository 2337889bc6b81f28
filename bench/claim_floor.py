"""What `claim_p95_ms`'s ratio would be for claims cheaper than ours: the floor of the measurement.

    python -m bench.claim_floor [--rounds 3]

Runs the claim figure's set-up (a throw-away PostgreSQL, the benchmark data, the copied queue,
32 threads with their own connections, a `SELECT 1` after each call) with stand-ins for
claim-next, each on a freshly built queue, and prints p95 and the ratio to `SELECT 1`'s p95:

- `select1`: the "claim" is `SELECT 1` too (the measurement's own symmetry: about 1);
- `lease_insert`: one INSERT of a lease into `reviewer_assignment` (its indexes and foreign keys),
  for an item picked in Python; nothing else;
- `queue_pop`: the textbook queue, a table with one row per open slot of the queue made before the
  run; each claim deletes the first row it may take (`FOR UPDATE SKIP LOCKED`, not an item the
  person wrote or holds) and inserts the lease, in one statement: a perfect stored list of
  claimable items;
- `claim_next`: reviewer.queues.queue_claim_next, as the figure measures it.

Numbers from the 2-core machine are in bench/README.md ("Claim figures").
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import threading
from pathlib import Path

from bench.figure import BenchContext

CLAIMS_EACH = 15  # lease_insert: about what each client gets from the real queue (469 leases / 32)


def _select1(queue, user):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return None if _count(user) > CLAIMS_EACH else cursor.fetchall()


_counts: dict[int, int] = {}


def _count(user) -> int:
    _counts[user.pk] = _counts.get(user.pk, 0) + 1  # one thread per user: no race
    return _counts[user.pk]


def _lease_insert_factory(queue):
    """An INSERT of a released lease (no unique constraint to meet) on items taken in turn."""
    from annotator.models import MCQ

    items = itertools.cycle(list(MCQ.objects.filter(project_id=queue.project_id).values_list("pk", flat=True)))
    lock = threading.Lock()

    def claim(queue, user):
        from django.db import connection

        if _count(user) > CLAIMS_EACH:
            return None
        with lock:
            item = next(items)
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO reviewer_assignment (item_kind, mcq_id, project_id, queue_id, stage, assignee_id, status, "
                "leased_at, lease_expires_at) VALUES ('mcq', %s, %s, %s, 'examining', %s, 'released', now(), "
                "now() + interval '1 hour') "
                "RETURNING id",
                [item, queue.project_id, queue.pk, user.pk],
            )
            return cursor.fetchall()

    return claim


def _queue_pop_factory(queue):
    from django.db import connection

    from reviewer.queues import queue_open_items

    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_open_slot")
        cursor.execute(
            "CREATE TABLE bench_open_slot (id bigserial PRIMARY KEY, queue_id bigint, item_id bigint, "
            "author_id bigint, order_key timestamptz)"
        )
        open_ids = list(queue_open_items(queue).values_list("pk", flat=True))
        cursor.execute(
            "INSERT INTO bench_open_slot (queue_id, item_id, author_id, order_key) "
            "SELECT %s, m.id, m.author_id, COALESCE(m.submitted_at, m.created_at) "
            "FROM annotator_mcq m, generate_series(1, %s) WHERE m.id = ANY(%s)",
            [queue.pk, queue.overlap, open_ids],
        )
        cursor.execute("CREATE INDEX bench_open_slot_order ON bench_open_slot (queue_id, order_key, item_id)")
        cursor.execute("ANALYZE bench_open_slot")

    def claim(queue, user):
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "WITH slot AS (DELETE FROM bench_open_slot WHERE id = (SELECT s.id FROM bench_open_slot s "
                "WHERE s.queue_id = %s AND s.author_id IS DISTINCT FROM %s AND NOT EXISTS (SELECT 1 FROM "
                "reviewer_assignment a WHERE a.mcq_id = s.item_id AND a.assignee_id = %s AND a.status = 'active') "
                "ORDER BY s.order_key, s.item_id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING item_id) "
                "INSERT INTO reviewer_assignment (item_kind, mcq_id, project_id, queue_id, stage, assignee_id, status, "
                "leased_at, lease_expires_at) SELECT 'mcq', item_id, %s, %s, 'examining', %s, 'active', now(), "
                "now() + interval '4 hours' FROM slot ON CONFLICT DO NOTHING RETURNING id",
                [queue.pk, user.pk, user.pk, queue.project_id, queue.pk, user.pk],
            )
            return cursor.fetchall() or None

    return claim


def _claim_next_factory(queue):
    from bench.figures.claims import _claim_next

    return _claim_next


VARIANTS = {
    "select1": lambda queue: _select1,
    "lease_insert": _lease_insert_factory,
    "queue_pop": _queue_pop_factory,
    "claim_next": _claim_next_factory,
}


def measure(ctx: BenchContext, variant: str) -> tuple[float, float]:
    """(claim p95, SELECT 1 p95) in ms."""
    from bench.figures.claims import _build, _clients, _p95, _remove_copy

    _counts.clear()
    queue, claimers, _solo = _build(ctx)
    try:
        claim = VARIANTS[variant](queue)
        timings, floors, _claimed, _wall = _clients(queue, claimers, claim)
    finally:
        _remove_copy()
    return _p95(timings), _p95(floors)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.claim_floor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="comma-separated variants: " + ", ".join(VARIANTS))
    args = parser.parse_args()
    variants = args.only.split(",") if args.only else list(VARIANTS)

    from bench.run import start_services

    base = Path(tempfile.mkdtemp(prefix="vidqa-claim-floor-"))
    os.chmod(base, 0o755)  # noqa: S103 - as root, PostgreSQL runs as `postgres` and must reach its folder
    services = start_services(base, redis=False)
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        ctx = BenchContext(work_dir=base / "work")
        ctx.work_dir.mkdir()
        for variant in variants:
            ratios = []
            for _ in range(args.rounds):
                p95, floor = measure(ctx, variant)
                ratios.append(p95 / floor)
                print(f"{variant}: p95 {p95:.1f} ms, SELECT 1 p95 {floor:.1f} ms, ratio {p95 / floor:.2f}", flush=True)
            print(f"{variant}: ratio median {statistics.median(ratios):.2f} over {len(ratios)} runs", flush=True)
    finally:
        for service in services:
            service.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
