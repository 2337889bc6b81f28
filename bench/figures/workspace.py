"""Annotator workspace figures: the QA chain editor page at benchmark scale.

Both figures request the real page through Django's test Client (the whole request: middleware,
session, permission checks, the player's context, the template) as a logged-in annotator of the
benchmark project. Nothing is written but the login's session row, which is removed at the end.

- `workspace_p95_ms`: p95 of the page's server time over chains picked at random across the
  dataset (goal ≤ 50 ms); baseline: p95 of /healthz (one trivial query) through the same client.
- `workspace_queries`: the page's query count on a chain of the video with the most clips (value)
  and of the video with the fewest (baseline): constant means ratio 1 (goal ≤ 12 queries).
"""

import random
import statistics
import time
from contextlib import contextmanager

from bench.figure import BenchContext, Figure, Measurement

REQUESTS = 200
WARMUP = 5
EDITING = ("draft", "annotating")


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[94]


@contextmanager
def _logged_in(ctx: BenchContext):
    """A test Client logged in as an annotator of the benchmark project; its session goes afterwards."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from projects.models import Membership, Role

    dataset = ctx.dataset()
    member = (
        Membership.objects.filter(project_id=dataset.project_id, role=Role.ANNOTATOR)
        .order_by("user__username")
        .values_list("user_id", flat=True)
        .first()
    )
    if member is None:
        raise RuntimeError("the benchmark project has no annotator; the data is not what the figure expects")
    client = Client()
    client.force_login(get_user_model().objects.get(pk=member))
    try:
        yield client, dataset.slug
    finally:
        client.logout()


def _get(client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} answered {response.status_code}")
    return elapsed


def _editor_url(slug: str, chain_id: int) -> str:
    from django.urls import reverse

    return reverse("annotator:chain_editor", args=[slug, chain_id])


def measure_workspace_p95(ctx: BenchContext) -> Measurement:
    from annotator.models import QAChain

    ids = list(QAChain.objects.filter(project_id=ctx.dataset().project_id).values_list("pk", flat=True))
    rng = random.Random(ctx.seed)
    picked = [rng.choice(ids) for _ in range(REQUESTS + WARMUP)]
    with _logged_in(ctx) as (client, slug):
        for chain_id in picked[:WARMUP]:  # template loading and the first connection are not the page
            _get(client, _editor_url(slug, chain_id))
        timings = [_get(client, _editor_url(slug, chain_id)) for chain_id in picked[WARMUP:]]
        for _ in range(WARMUP):
            _get(client, "/healthz")
        floor = [_get(client, "/healthz") for _ in range(REQUESTS)]
    return Measurement(value=_p95(timings), baseline=_p95(floor))


def _chain_of(video_id: int) -> int:
    """A chain of the video in its middle clip, preferably one being edited (the common case)."""
    from annotator.models import QAChain

    chains = list(QAChain.objects.filter(clip__video_id=video_id).order_by("clip__index").values("pk", "status"))
    editing = [c for c in chains if c["status"] in EDITING] or chains
    return editing[len(editing) // 2]["pk"]


def _queries(client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        _get(client, url)
    return len(captured.captured_queries)


def measure_workspace_queries(ctx: BenchContext) -> Measurement:
    from django.db.models import Count

    from videos.models import Video

    videos = (
        Video.objects.filter(project_id=ctx.dataset().project_id)
        .annotate(n=Count("clips"))
        .filter(n__gt=0)
        .order_by("n", "pk")
        .values_list("pk", "n")
    )
    few, many = videos.first(), videos.last()
    with _logged_in(ctx) as (client, slug):
        few_url, many_url = _editor_url(slug, _chain_of(few[0])), _editor_url(slug, _chain_of(many[0]))
        _get(client, few_url)  # warm: a first request loads templates
        counts = {url: _queries(client, url) for url in (few_url, many_url)}
    return Measurement(value=counts[many_url], baseline=counts[few_url])


FIGURES = [
    Figure(
        name="workspace_p95_ms",
        unit="ms",
        measure=measure_workspace_p95,
        description=(
            f"p95 server time of the QA chain editor page (GET /p/<slug>/chains/<id>/, player included) over "
            f"{REQUESTS} chains picked across the benchmark dataset, as a logged-in annotator (goal ≤ 50 ms). "
            "Baseline: p95 of /healthz through the same client."
        ),
    ),
    Figure(
        name="workspace_queries",
        unit="queries",
        measure=measure_workspace_queries,
        description=(
            "SQL queries of the QA chain editor page on a chain of the video with the most clips (value) and of "
            "the one with the fewest (baseline): the count must not grow with items (goal ≤ 12, ratio 1)."
        ),
    ),
]
