"""Evaluation throughput: a run over 1,000 MCQs of a release against the fake OpenAI-compatible
server in its own process at a fixed latency, as a ratio to the ideal time for the concurrency.

ideal = ceil(questions / C) × latency. The measured run does everything a real one does per question:
the release file read, the frames sampled with ffmpeg (once per video), the prompt written, the call
recorded, the reply read and the prediction written; then the summary with clustered standard errors.
Goal ≤ 1.2. Works in a project of its own (`bench-eval`).
"""

import math
import sys
import time

from bench.figure import BenchContext, Figure, Measurement

from .drafts import _source_video, fake_model

MCQS = 1000  # at scale 1
VIDEOS = 20
CONCURRENCY = 4
LATENCY_MS = 500
FRAMES = 4


def _release(mcqs: int):
    from django.contrib.auth import get_user_model

    from annotator.models import MCQ, ItemStatus, MCQVideo
    from projects.models import Project
    from releases.build import release_build
    from releases.services import release_create
    from videos.ingest import video_import
    from videos.models import Video, VideoStatus

    Project.objects.filter(slug="bench-eval").delete()
    project = Project.objects.create(name="bench-eval", slug="bench-eval", kind="generic")
    first = video_import(project=project, source=_source_video(), filename="eval-00.mp4", process=False)
    videos = [first]
    for n in range(1, VIDEOS):
        videos.append(
            Video.objects.create(
                project=project,
                name=f"eval-{n:02d}",
                original=first.original.name,
                original_filename=f"eval-{n:02d}.mp4",
                sha256=f"{n:064x}",
                size_bytes=first.size_bytes,
                duration_s=first.duration_s,
                fps=first.fps,
                frame_count=first.frame_count,
                width=first.width,
                height=first.height,
                video_codec=first.video_codec,
            )
        )
    Video.objects.filter(project=project).update(status=VideoStatus.READY)
    items = MCQ.objects.bulk_create(
        MCQ(
            project=project,
            question=f"Question {n}: what happens after the scene changes?",
            options=[f"a cup {n}", f"a pen {n}", f"a book {n}", f"a phone {n}"],
            correct_index=n % 4,
            category="E2O",
            status=ItemStatus.ACCEPTED,
        )
        for n in range(mcqs)
    )
    MCQVideo.objects.bulk_create(MCQVideo(mcq=m, video=videos[n % VIDEOS], order=0) for n, m in enumerate(items))
    admin, _ = get_user_model().objects.get_or_create(username="bench-eval-admin", defaults={"is_staff": True})
    from projects.models import Membership, Role

    Membership.objects.get_or_create(project=project, user=admin, role=Role.ADMIN)
    release = release_create(
        project=project, by=admin, version="v1", formats=["generic"], filters={"include_media": False}, enqueue=False
    )
    return project, release_build(release=release)


def measure_eval_overhead(ctx: BenchContext) -> Measurement:
    from evaluations.runs import evaluation_execute, evaluation_start
    from tests.fakes.openai_server import Reply

    mcqs = max(2 * CONCURRENCY, round(MCQS * ctx.scale))
    project, release = _release(mcqs)
    if release.status != "ready":
        raise RuntimeError(f"the benchmark release did not build: {release.validation_errors[:3]}")
    with fake_model(latency_ms=LATENCY_MS, concurrency=CONCURRENCY, reply=Reply.text("B")):
        run = evaluation_start(project=project, release=release, model="bench-model", frames=FRAMES, enqueue=False)
        started = time.perf_counter()
        summary = evaluation_execute(run=run)
        measured_s = time.perf_counter() - started
    if summary["scored"] != mcqs or summary["failed"]:
        raise RuntimeError(f"evaluation: {summary['scored']} of {mcqs} scored, {summary['failed']} failed")
    ideal_s = math.ceil(mcqs / CONCURRENCY) * LATENCY_MS / 1000
    print(
        f"bench: eval_overhead_ratio: {mcqs} questions ({VIDEOS} videos, {FRAMES} frames each) in "
        f"{measured_s:.2f} s; ideal {ideal_s:.2f} s (concurrency {CONCURRENCY}, latency {LATENCY_MS} ms); "
        f"accuracy {summary['accuracy']:.3f} ± {summary['se']:.3f}",
        file=sys.stderr,
    )
    return Measurement(value=measured_s / ideal_s)


FIGURES = [
    Figure(
        name="eval_overhead_ratio",
        unit="x",
        measure=measure_eval_overhead,
        needs_redis=True,
        description=(
            f"Time to evaluate a model on {MCQS} MCQs of a release ({VIDEOS} videos, {FRAMES} frames each) against "
            f"the fake OpenAI server in its own process with {LATENCY_MS} ms latency at concurrency {CONCURRENCY}, "
            f"divided by the ideal ceil(N / C) × latency (goal ≤ 1.2)."
        ),
    ),
]
