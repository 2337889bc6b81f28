"""Dashboard figures: the admins' dashboards page at benchmark scale.

Both figures request the real page (/p/<slug>/dashboard/, every panel, the default range of the
last 30 days) through Django's test Client as the benchmark project's admin: middleware, session,
permission checks and the template. A preset range is shown from its snapshot
(reviewer.dashboard_snapshots), so the page is measured as people normally get it: after one
warm-up view that found no snapshot and computed it (as a first view does).

- `dashboard_p95_ms`: p95 of the page's server time (goal ≤ 100 ms); baseline: p95 of /healthz
  (one trivial query) through the same client. The real cost stays in view on stderr: the
  first view, a full recompute (`dashboard_snapshot_refresh`: the nine panels' aggregate queries,
  the SVG charts, the HTML) and a custom range, which is computed on request.
- `dashboard_queries`: the page's query count on the benchmark project (value) and on a tiny
  project with a little of everything (baseline: three queues, one of each kind, a handful of
  items, events, verdicts, scores and leases), built in a transaction that is rolled back: constant
  means ratio 1. stderr also gives the counts of a custom range (computed live) on both.
"""

import statistics
import sys
import time
from contextlib import contextmanager

from bench.figure import BenchContext, Figure, Measurement

REQUESTS = 60
WARMUP = 3
RECOMPUTES = 5
TINY_SLUG = "bench-dashboard-tiny"


class _Rollback(Exception):
    pass


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[94]


@contextmanager
def _as(username: str):
    """A test Client logged in as `username`; its session goes afterwards."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    try:
        yield client
    finally:
        client.logout()


def _get(client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} answered {response.status_code}")
    return elapsed


def _url(slug: str) -> str:
    from django.urls import reverse

    return reverse("reviewer:dashboard", args=[slug])


def _queries(client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        _get(client, url)
    return len(captured.captured_queries)


def _custom_url(slug: str) -> str:
    """The last 30 days but one: a custom range, computed on request."""

    from reviewer.dashboards import Period

    period = Period.last(29)
    return f"{_url(slug)}?from={period.start.isoformat()}&to={period.end.isoformat()}"


def _forget_snapshots(slug: str) -> None:
    from reviewer.models import DashboardSnapshot

    DashboardSnapshot.objects.filter(project__slug=slug).delete()


def measure_dashboard_p95(ctx: BenchContext) -> Measurement:
    from projects.models import Project
    from reviewer.dashboard_snapshots import dashboard_snapshot_refresh

    dataset = ctx.dataset()
    url = _url(dataset.slug)
    _forget_snapshots(dataset.slug)  # this run computes its own: the first view below
    try:
        with _as(dataset.admin_username) as client:
            first = _get(client, url)  # no snapshot yet: computed synchronously, as a first view is
            for _ in range(WARMUP):  # template loading and the first connection are not the page
                _get(client, url)
            timings = [_get(client, url) for _ in range(REQUESTS)]
            custom = [_get(client, _custom_url(dataset.slug)) for _ in range(WARMUP)]
            for _ in range(WARMUP):
                _get(client, "/healthz")
            floor = [_get(client, "/healthz") for _ in range(REQUESTS)]
        project = Project.objects.get(slug=dataset.slug)
        recompute = []
        for _ in range(RECOMPUTES):
            started = time.perf_counter()
            snapshot = dashboard_snapshot_refresh(project=project, range_key="30d")
            recompute.append((time.perf_counter() - started) * 1000)
    finally:
        _forget_snapshots(dataset.slug)  # leave the data as the next figure expects it
    print(
        f"  dashboard (from its snapshot): median {statistics.median(timings):.1f} ms, p95 {_p95(timings):.1f} ms, "
        f"max {max(timings):.1f} ms over {REQUESTS} requests",
        file=sys.stderr,
    )
    print(
        f"  dashboard snapshot recompute (dashboard_snapshot_refresh, 30 days): median "
        f"{statistics.median(recompute):.0f} ms, max {max(recompute):.0f} ms over {RECOMPUTES}; "
        f"first view (computes it): {first:.0f} ms; stored HTML {len(snapshot.html) / 1024:.0f} KiB",
        file=sys.stderr,
    )
    print(
        f"  dashboard custom range (computed on request): median {statistics.median(custom):.0f} ms over {WARMUP}",
        file=sys.stderr,
    )
    return Measurement(value=_p95(timings), baseline=_p95(floor))


def _tiny_project() -> str:
    """A project with a little of every row the dashboards count; returns its admin's username."""
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.utils import timezone

    from annotator.models import MCQ, ChainPair, ItemRef, QAChain, QAPair, ReviewEvent
    from projects.models import Membership, Project, Role
    from reviewer.models import Assignment, ExamVerdict, QualityScore, ReviewQueue
    from videos.models import Clip, Video

    now = timezone.now()
    User = get_user_model()
    project = Project.objects.create(name="Dashboard baseline", slug=TINY_SLUG)
    hashed = make_password(None)
    admin, author, e1, e2 = User.objects.bulk_create(
        [User(username=f"{TINY_SLUG}-{who}", password=hashed) for who in ("admin", "author", "e1", "e2")]
    )
    Membership.objects.bulk_create(
        [
            Membership(project=project, user=admin, role=Role.ADMIN),
            Membership(project=project, user=author, role=Role.ANNOTATOR),
            Membership(project=project, user=e1, role=Role.EXAMINER),
            Membership(project=project, user=e2, role=Role.EXAMINER),
        ]
    )
    video = Video.objects.create(project=project, name="tiny", original="tiny.mp4", sha256="0" * 64, duration_s=60)
    clips = [Clip.objects.create(video=video, index=i, start_s=i * 20, end_s=i * 20 + 20) for i in range(2)]
    chains = [QAChain.objects.create(project=project, clip=c, author=author, status="accepted") for c in clips]
    for chain in chains:
        QAPair.objects.create(chain=chain, index=0, question="Why?", answer="Because.", skill="II")
    pair = ChainPair.objects.create(
        project=project, video=video, before_index=0, chain_before=chains[0], chain_after=chains[1], status="flagged"
    )
    mcqs = [
        MCQ.objects.create(project=project, question="Which?", category="E2O", author=author, status=s)
        for s in ("accepted", "examining")
    ]
    queues = {
        kind: ReviewQueue.objects.create(
            project=project,
            name=f"{kind}: examine",
            stage="examining",
            item_kind=kind,
            overlap=2 if kind == "mcq" else 1,
        )
        for kind in ("qa_chain", "chain_pair", "mcq")
    }
    for item in (*chains, pair, *mcqs):
        kind = ItemRef.ref_for(item)["item_kind"]
        ref = ItemRef.ref_for(item)
        ReviewEvent.objects.create(
            project=project, actor=author, from_status="annotating", to_status="submitted", **ref
        )
        if item.status in ("accepted", "flagged"):
            ReviewEvent.objects.create(project=project, actor=e1, from_status="examining", to_status=item.status, **ref)
        for who in (e1, e2) if kind == "mcq" else (e1,):
            ExamVerdict.objects.create(
                project=project,
                examiner=who,
                queue=queues[kind],
                round_started_at=now - timedelta(hours=2),
                item_version=1,
                passed=item.status != "flagged",
                seconds_spent=120,
                **ref,
            )
            Assignment.objects.create(
                project=project,
                queue=queues[kind],
                stage="examining",
                assignee=who,
                status="completed",
                leased_at=now - timedelta(hours=1),
                lease_expires_at=now - timedelta(minutes=30),
                completed_at=now - timedelta(minutes=50),
                **ref,
            )
        Assignment.objects.create(
            project=project,
            queue=queues[kind],
            stage="examining",
            assignee=e2,
            status="expired",
            leased_at=now - timedelta(hours=3),
            lease_expires_at=now - timedelta(hours=2),
            **ref,
        )
        QualityScore.objects.create(project=project, item_version=1, overall=91, threshold=90, passed=True, **ref)
    return admin.username


def measure_dashboard_queries(ctx: BenchContext) -> Measurement:
    from django.db import transaction
    from django.test import override_settings

    dataset = ctx.dataset()
    _forget_snapshots(dataset.slug)
    try:
        with _as(dataset.admin_username) as client:
            big_url = _url(dataset.slug)
            _get(client, big_url)  # warm: a first request loads templates and computes the snapshot
            big = _queries(client, big_url)
            big_live = _queries(client, _custom_url(dataset.slug))
    finally:
        _forget_snapshots(dataset.slug)
    tiny = tiny_live = None
    try:
        # Nothing of the tiny project stays: its rows (and their history rows) go with the rollback.
        with override_settings(SIMPLE_HISTORY_ENABLED=False), transaction.atomic():
            username = _tiny_project()
            with _as(username) as client:
                tiny_url = _url(TINY_SLUG)
                _get(client, tiny_url)
                tiny = _queries(client, tiny_url)
                tiny_live = _queries(client, _custom_url(TINY_SLUG))
            raise _Rollback
    except _Rollback:
        pass
    print(
        f"  dashboard queries: {big} from the snapshot ({tiny} on the tiny project); a custom range, "
        f"computed on request: {big_live} ({tiny_live} on the tiny project)",
        file=sys.stderr,
    )
    return Measurement(value=big, baseline=tiny)


FIGURES = [
    Figure(
        name="dashboard_p95_ms",
        unit="ms",
        measure=measure_dashboard_p95,
        description=(
            f"p95 server time of the admins' dashboards page (GET /p/<slug>/dashboard/, nine panels, last 30 days) "
            f"over {REQUESTS} requests on the benchmark project, as its admin (goal ≤ 100 ms), as people get it: "
            "from its snapshot, after a first view computed it. stderr: the recompute time and a custom range. "
            "Baseline: p95 of /healthz through the same client."
        ),
    ),
    Figure(
        name="dashboard_queries",
        unit="queries",
        measure=measure_dashboard_queries,
        description=(
            "SQL queries of the dashboards page (last 30 days, from its snapshot) on the benchmark project (value) "
            "and on a tiny project with a little of everything, rolled back afterwards (baseline): constant means "
            "ratio 1. stderr: the same for a custom range, computed on request."
        ),
    ),
]
