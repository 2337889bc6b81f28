"""Shortcut-probe throughput: a probe run against the fake OpenAI-compatible server, started
standalone in its own process with a fixed latency, as a ratio to the ideal time for the configured
concurrency.

ideal = ceil(calls / C) × latency: C requests always in flight and nothing else costing time. The
measured run does everything a real one does per call (the plan read from the database, frames
sampled with ffmpeg for the single-frame and options-only probes, the prompt written, the call
recorded, the answer read and written), so the ratio is the probe machinery's overhead over waiting
for the model (goal ≤ 1.2).

Works in a project of its own (`bench-audit`), so the shared benchmark data stays as generated.
"""

import math
import sys
import time

from bench.figure import BenchContext, Figure, Measurement

from .drafts import _source_video, fake_model

MCQS = 60  # at scale 1; 5 calls each: 3 text-only orders, 1 single frame, 1 options-only
CONCURRENCY = 4
LATENCY_MS = 500
PROBES = ["text", "frame", "options"]


def _project(mcqs: int):
    from annotator.models import MCQ, ItemStatus, MCQVideo, ReferredMoment
    from projects.models import Project
    from videos.ingest import video_import
    from videos.models import VideoStatus

    Project.objects.filter(slug="bench-audit").delete()
    project = Project.objects.create(name="bench-audit", slug="bench-audit", kind="longvideobench", probe_shuffles=3)
    video = video_import(project=project, source=_source_video(), filename="audit-00.mp4", process=False)
    video.status = VideoStatus.READY
    video.save(update_fields=["status"])
    items = MCQ.objects.bulk_create(
        MCQ(
            project=project,
            question=f"Question {n}: what does the person hold when the scene changes?",
            options=[f"a cup {n}", f"a pen {n}", f"a book {n}", f"a phone {n}"],
            correct_index=n % 4,
            category="E2O",
            status=ItemStatus.EXAMINING,
        )
        for n in range(mcqs)
    )
    MCQVideo.objects.bulk_create(MCQVideo(mcq=m, video=video, order=0) for m in items)
    duration = video.duration_s or 10.0
    ReferredMoment.objects.bulk_create(
        ReferredMoment(mcq=m, video=video, time_s=round((n + 0.5) * duration / mcqs, 3), frame_index=0)
        for n, m in enumerate(items)
    )
    return project


def measure_audit_overhead(ctx: BenchContext) -> Measurement:
    from audits.probes import probe_run_execute
    from audits.services import probe_run_start
    from llm.models import CallOutcome, LLMCall
    from tests.fakes.openai_server import Reply

    mcqs = max(2 * CONCURRENCY, round(MCQS * ctx.scale))
    project = _project(mcqs)
    with fake_model(latency_ms=LATENCY_MS, concurrency=CONCURRENCY, reply=Reply.text("Answer: B")):
        run = probe_run_start(project=project, probes=PROBES, enqueue=False)
        started = time.perf_counter()
        counts = probe_run_execute(run=run)
        measured_s = time.perf_counter() - started
    calls = mcqs * 5
    if counts["asked"] != calls or counts["failed"]:
        raise RuntimeError(f"probe run: {counts}, expected {calls} calls and no failure")
    recorded = LLMCall.objects.filter(project=project)
    if recorded.count() != calls or recorded.exclude(outcome=CallOutcome.OK).exists():
        raise RuntimeError("every probe answer should come from exactly one successful call")
    ideal_s = math.ceil(calls / CONCURRENCY) * LATENCY_MS / 1000
    print(
        f"bench: audit_overhead_ratio: {calls} probe calls in {measured_s:.2f} s; ideal {ideal_s:.2f} s "
        f"(concurrency {CONCURRENCY}, latency {LATENCY_MS} ms)",
        file=sys.stderr,
    )
    return Measurement(value=measured_s / ideal_s)


FIGURES = [
    Figure(
        name="audit_overhead_ratio",
        unit="x",
        measure=measure_audit_overhead,
        needs_redis=True,  # the per-endpoint limit is the shared Redis semaphore, as in production
        description=(
            f"Time to probe {MCQS} MCQs (3 text-only orders, a single frame and options-only: {MCQS * 5} calls, "
            f"frames sampled with ffmpeg) against the fake OpenAI server in its own process with {LATENCY_MS} ms "
            f"latency at concurrency {CONCURRENCY}, divided by the ideal ceil(calls / C) × latency (goal ≤ 1.2)."
        ),
    ),
]
