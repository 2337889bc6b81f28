"""Claim figures: 32 clients pull one review queue on PostgreSQL until it is empty.

The queue lives in a project of its own (`bench-claims`) whose MCQs are copies of the benchmark
project's (status, category, level, submit time, first video's duration), so the queue has the
benchmark's shape: about a fifth of the items wait for examiners, half of those being examined
already hold a lease, some of those leases lapsed. It is examined by two people per item, by 32
examiners, some of whom wrote some of the items. The copy is removed afterwards (without
history rows), so the benchmark project and the figures after this one see the data as generated.

Every client is a thread with its own database connection: it claims until claim-next says the
queue has nothing left for it, timing each claim, and after each claim times a bare `SELECT 1`
on the same connection — the baseline, which pays the same thread, GIL and server contention.
"""

import random
import statistics
import sys
import threading
import time
from datetime import timedelta

from bench.figure import BenchContext, Figure, Measurement

CLIENTS = 32
OVERLAP = 2
SOLO_CLAIMS = 40  # claims by one client alone first (then released): claim_single_p95_ms
SLUG = "bench-claims"
AUTHORS = 8

_state: dict = {}  # per run: the outcome both figures read


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[94]


def _remove_copy() -> None:
    """Drop the copied project and its people without writing history rows for them."""
    from django.contrib.auth import get_user_model
    from django.test import override_settings

    from annotator.models import MCQ
    from projects.models import Project

    with override_settings(SIMPLE_HISTORY_ENABLED=False):
        # MCQs first: their video links protect the videos the project would otherwise delete first.
        MCQ.objects.filter(project__slug=SLUG).delete()
        Project.objects.filter(slug=SLUG).delete()
        get_user_model().objects.filter(username__startswith=f"{SLUG}-").delete()


def _build(ctx: BenchContext):
    """The copied project, its examiners and the queue; returns (queue, the 32 clients, one more examiner)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection, transaction
    from django.utils import timezone

    from annotator.models import MCQ, ItemStatus, MCQVideo
    from projects.models import Membership, Project, Role
    from projects.taxonomies import LVB_QUESTION_CATEGORIES
    from reviewer.models import Assignment, AssignmentStatus, ReviewQueue
    from videos.models import Video

    dataset = ctx.dataset()
    rng = random.Random(ctx.seed)
    User = get_user_model()
    _remove_copy()
    with transaction.atomic():
        project = Project.objects.create(name="Claim benchmark", slug=SLUG, judge_enabled=True)
        hashed = make_password(None)  # nobody logs in as these
        claimers = User.objects.bulk_create(
            [User(username=f"{SLUG}-examiner-{i:02d}", password=hashed) for i in range(CLIENTS + 1)]
        )
        authors = User.objects.bulk_create(
            [User(username=f"{SLUG}-annotator-{i:02d}", password=hashed) for i in range(AUTHORS)]
        )
        Membership.objects.bulk_create(
            [Membership(project=project, user=u, role=Role.EXAMINER) for u in claimers]
            + [Membership(project=project, user=u, role=Role.ANNOTATOR) for u in authors]
        )

        source_videos = Video.objects.filter(project_id=dataset.project_id).order_by("pk")
        copies = Video.objects.bulk_create(
            [
                Video(project=project, name=v.name, original=v.original.name, sha256=v.sha256, duration_s=v.duration_s)
                for v in source_videos.only("name", "original", "sha256", "duration_s")
            ],
            batch_size=2000,
        )
        video_of = dict(zip(source_videos.values_list("pk", flat=True), (c.pk for c in copies), strict=True))
        first_video = dict(
            MCQVideo.objects.filter(mcq__project_id=dataset.project_id, order=0).values_list("mcq_id", "video_id")
        )
        sources = list(
            MCQ.objects.filter(project_id=dataset.project_id)
            .order_by("pk")
            .values("pk", "status", "category", "level", "submitted_at")
        )
        mcqs = []
        for i, row in enumerate(sources):
            # One item in five was written by a claimer: it must go to the other examiners.
            author = claimers[rng.randrange(CLIENTS)] if rng.random() < 0.2 else authors[i % AUTHORS]
            mcqs.append(
                MCQ(
                    project=project,
                    question=f"Copied MCQ {row['pk']}",
                    status=row["status"],
                    category=row["category"],
                    level=row["level"],
                    submitted_at=row["submitted_at"],
                    author=author,
                )
            )
        MCQ.objects.bulk_create(mcqs, batch_size=2000)
        MCQVideo.objects.bulk_create(
            [
                MCQVideo(mcq=m, video_id=video_of[first_video[row["pk"]]], order=0)
                for m, row in zip(mcqs, sources, strict=True)
                if row["pk"] in first_video
            ],
            batch_size=2000,
        )

        queue = ReviewQueue.objects.create(
            project=project,
            name="Examine LongVideoBench MCQs",
            stage=ItemStatus.EXAMINING,
            item_kind="mcq",
            filters={
                "categories": [c["code"] for c in LVB_QUESTION_CATEGORIES],
                "duration_groups": [g["name"] for g in project.taxonomy("duration_groups")],
            },
            overlap=OVERLAP,
        )
        queue.members.set(claimers)

        # Work in hand, as in the benchmark data: half the items being examined hold a lease, a third
        # of those lapsed and not yet swept. None lapses during the run, so "empty" stays well defined.
        now = timezone.now()
        leases = []
        for m in mcqs:
            if m.status != ItemStatus.EXAMINING or rng.random() >= 0.5:
                continue
            examiner = rng.choice([u for u in claimers if u.pk != m.author_id])
            ago = rng.uniform(31, 45) if rng.random() < 1 / 3 else rng.uniform(0, 20)
            leased = max(now - timedelta(minutes=ago), (m.submitted_at or now) + timedelta(seconds=1))
            leases.append(
                Assignment(
                    project=project,
                    queue=queue,
                    stage=ItemStatus.EXAMINING,
                    assignee=examiner,
                    status=AssignmentStatus.ACTIVE,
                    leased_at=leased,
                    lease_expires_at=leased + timedelta(minutes=30),
                    heartbeat_at=leased,
                    **Assignment.ref_for(m),
                )
            )
        Assignment.objects.bulk_create(leases, batch_size=2000)
    with connection.cursor() as cursor:  # planner statistics for the new rows, as the benchmark data has
        for model in (MCQ, MCQVideo, Assignment, Video):
            cursor.execute(f'ANALYZE "{model._meta.db_table}"')
    queue = ReviewQueue.objects.select_related("project").get(pk=queue.pk)
    return queue, claimers[:CLIENTS], claimers[CLIENTS]


def _double_assignments(queue) -> int:
    """Slots handed out beyond the overlap, plus any item one person holds twice, across the queue's items."""
    from django.db.models import Count, F, Q
    from django.utils import timezone

    from reviewer.models import Assignment, AssignmentStatus

    holding = Assignment.objects.filter(
        Q(status=AssignmentStatus.COMPLETED) | Q(status=AssignmentStatus.ACTIVE, lease_expires_at__gt=timezone.now()),
        project=queue.project,
        stage=queue.stage,
        leased_at__gte=F("mcq__submitted_at"),
    )
    per_item = holding.values("mcq").annotate(n=Count("pk"), people=Count("assignee", distinct=True))
    return sum(max(row["n"] - queue.overlap, 0) + (row["n"] - row["people"]) for row in per_item)


def _run(ctx: BenchContext) -> dict:
    if _state.get("ctx") is ctx:
        return _state
    from reviewer.queues import assignment_release, queue_claim_next, queue_open_items

    queue, claimers, solo = _build(ctx)
    try:
        open_before = queue_open_items(queue).count()
        solo_timings = []
        for _ in range(SOLO_CLAIMS):
            t0 = time.perf_counter()
            lease = queue_claim_next(queue=queue, user=solo)
            solo_timings.append((time.perf_counter() - t0) * 1000)
            if lease is not None:
                assignment_release(assignment=lease, user=solo)  # back to the queue, for the 32
        timings, floors, claimed, wall = _clients(queue, claimers)
        left = queue_open_items(queue).count()
        if left:
            raise RuntimeError(f"{left} item(s) still have a free slot after every client was told the queue is empty")
        doubles = _double_assignments(queue)
    finally:
        _remove_copy()
    print(
        f"bench: claims: {sum(claimed)} leases on {open_before} open items by {CLIENTS} clients in {wall:.1f} s "
        f"({len(timings)} calls, median {statistics.median(timings):.1f} ms); one client alone: median "
        f"{statistics.median(solo_timings):.1f} ms, p95 {_p95(solo_timings):.1f} ms",
        file=sys.stderr,
    )
    _state.update(ctx=ctx, p95=_p95(timings), floor_p95=_p95(floors), doubles=doubles, solo_p95=_p95(solo_timings))
    return _state


def _claim_next(queue, user):
    from reviewer.queues import queue_claim_next

    return queue_claim_next(queue=queue, user=user)


def _clients(queue, claimers, claim=_claim_next) -> tuple[list[float], list[float], list[int], float]:
    """Every client claims until told the queue is empty; claim and SELECT 1 timings in ms.

    `claim(queue, user)` returns None when nothing is left (bench/claim_floor.py passes others).
    """
    from django.db import connection

    barrier = threading.Barrier(len(claimers))
    timings: list[list[float]] = [[] for _ in claimers]
    floors: list[list[float]] = [[] for _ in claimers]
    claimed = [0] * len(claimers)
    errors: list[BaseException] = []

    def client(i: int, user) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")  # connect before the start line, not inside the first timing
            barrier.wait()
            while True:
                t0 = time.perf_counter()
                lease = claim(queue, user)
                timings[i].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
                    cursor.fetchall()
                floors[i].append((time.perf_counter() - t0) * 1000)
                if lease is None:
                    return
                claimed[i] += 1
        except BaseException as exc:  # noqa: BLE001 - reported after the run, which then fails
            errors.append(exc)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(i, u)) for i, u in enumerate(claimers)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} client(s) failed; the first: {errors[0]!r}") from errors[0]
    return [t for ts in timings for t in ts], [t for fs in floors for t in fs], claimed, wall


def measure_claim_p95(ctx: BenchContext) -> Measurement:
    state = _run(ctx)
    return Measurement(value=state["p95"], baseline=state["floor_p95"])


def measure_double_assignments(ctx: BenchContext) -> int:
    return _run(ctx)["doubles"]


def measure_claim_single_p95(ctx: BenchContext) -> float:
    return _run(ctx)["solo_p95"]


FIGURES = [
    Figure(
        name="claim_p95_ms",
        unit="ms",
        measure=measure_claim_p95,
        description=(
            "p95 of claim-next while 32 clients (threads, own connections) empty an examining queue of the benchmark's "
            "MCQs (copied into a project of its own; overlap 2) on PostgreSQL (goal: ratio ≤ 2). Baseline: p95 of "
            "`SELECT 1` on the same threads during the same run."
        ),
    ),
    Figure(
        name="claim_single_p95_ms",
        unit="ms",
        measure=measure_claim_single_p95,
        description=(
            "p95 of claim-next by one client alone on the same queue before the 32 start (each lease released "
            "again): the latency one person sees on a quiet server (goal ≤ 5 ms)."
        ),
    ),
    Figure(
        name="claim_double_assignments",
        unit="items",
        measure=measure_double_assignments,
        description=(
            "Slots handed out beyond the overlap (and items one person holds twice) after that run; must be 0."
        ),
    ),
]
