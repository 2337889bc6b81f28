"""Machine-draft throughput: QA chains drafted against the fake OpenAI-compatible server,
started standalone in its own process with a fixed latency, as a ratio to the ideal time for the
configured concurrency.

ideal = ceil(N / C) × latency: C requests always in flight and nothing else costing time. The
measured run does everything a real one does per clip (frames sampled with ffmpeg from the video,
subtitles read, the prompt rendered, the call recorded, the chain and its pairs written), so the
ratio is the drafting machinery's overhead over waiting for the model (goal ≤ 1.2).

Works in a project of its own (`bench-drafts`), so the shared benchmark data stays as generated.
"""

import math
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from bench.figure import BenchContext, Figure, Measurement

CLIPS = 200  # at scale 1
VIDEOS = 10
CONCURRENCY = 4
LATENCY_MS = 500
SCENE_S = 5.0
ROOT = Path(__file__).resolve().parent.parent.parent
# Generated inputs are kept between runs (git-ignored): making them takes longer than measuring.
CACHE_DIR = ROOT / "bench" / ".work" / "inputs"


def _source_video() -> Path:
    from videos.synthetic import SceneSpec, make_scene_video

    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    per_video = CLIPS // VIDEOS
    path = CACHE_DIR / f"drafts-{per_video}x{SCENE_S:g}s-320x180.mp4"
    if not path.exists():
        tmp = path.with_suffix(".part.mp4")
        make_scene_video(tmp, [SceneSpec(SCENE_S)] * per_video, width=320, height=180, fps=25, timeout_s=600)
        tmp.rename(path)
    return path


def _project(clips: int):
    """Videos sharing one stored file (their rows differ), with `clips` clips of one scene each."""
    from projects.models import Project
    from videos.ingest import video_import
    from videos.models import Clip, Video, VideoStatus

    Project.objects.filter(slug="bench-drafts").delete()
    project = Project.objects.create(name="bench-drafts", slug="bench-drafts")
    first = video_import(project=project, source=_source_video(), filename="drafts-00.mp4", process=False)
    per_video = CLIPS // VIDEOS
    videos = [first]
    for n in range(1, math.ceil(clips / per_video)):
        videos.append(
            Video.objects.create(
                project=project,
                name=f"drafts-{n:02d}",
                original=first.original.name,
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
    Clip.objects.bulk_create(
        Clip(
            video=videos[i // per_video],
            index=i % per_video,
            start_s=SCENE_S * (i % per_video),
            end_s=SCENE_S * (i % per_video + 1),
        )
        for i in range(clips)
    )
    return project


def _start_fake_server(latency_ms: int = LATENCY_MS) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0", "--latency-ms", str(latency_ms)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().strip()
    if "listening on " not in line:
        proc.kill()
        raise RuntimeError(f"the fake OpenAI server did not start: {line!r}")
    return proc, line.split("listening on ", 1)[1]


@contextmanager
def fake_model(*, latency_ms: int, concurrency: int, reply=None):
    """The fake OpenAI server in its own process, the LLM layer pointed at it with `concurrency`, and
    every setting put back afterwards. `reply` (a Reply) answers every request when given."""
    from django.conf import settings

    from llm.client import forget_endpoints

    names = ["OPENAI_BASE_URL", "OPENAI_API_KEY", "LLM_CONCURRENCY", "LLM_CONCURRENCY_PER_ENDPOINT"]
    saved = {name: getattr(settings, name) for name in names}
    server, base_url = _start_fake_server(latency_ms)
    try:
        if reply is not None:
            from tests.fakes.openai_server import FakeOpenAIRemote

            FakeOpenAIRemote(base_url).script(None, [reply], repeat=True)
        settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = base_url, "sk-bench"
        settings.LLM_CONCURRENCY, settings.LLM_CONCURRENCY_PER_ENDPOINT = concurrency, {}
        forget_endpoints()
        yield base_url
    finally:
        server.terminate()
        server.wait(10)
        for name, value in saved.items():
            setattr(settings, name, value)
        forget_endpoints()


def measure_draft_overhead(ctx: BenchContext) -> Measurement:
    from annotator.drafts import draft_step_run
    from llm.models import CallOutcome, LLMCall

    clips = max(2 * CONCURRENCY, round(CLIPS * ctx.scale))
    project = _project(clips)
    with fake_model(latency_ms=LATENCY_MS, concurrency=CONCURRENCY):
        started = time.perf_counter()
        summary = draft_step_run(project=project, step="chains")
        measured_s = time.perf_counter() - started
    if summary.created != clips or summary.failed:
        raise RuntimeError(f"drafted {summary.created} of {clips} chains; failed: {summary.failed[:3]}")
    calls = LLMCall.objects.filter(project=project)
    if calls.count() != clips or calls.exclude(outcome=CallOutcome.OK).exists():
        raise RuntimeError("every chain should come from exactly one successful call")
    ideal_s = math.ceil(clips / CONCURRENCY) * LATENCY_MS / 1000
    print(
        f"bench: draft_overhead_ratio: {clips} chains in {measured_s:.2f} s; ideal {ideal_s:.2f} s "
        f"(concurrency {CONCURRENCY}, latency {LATENCY_MS} ms)",
        file=sys.stderr,
    )
    return Measurement(value=measured_s / ideal_s)


FIGURES = [
    Figure(
        name="draft_overhead_ratio",
        unit="x",
        measure=measure_draft_overhead,
        needs_redis=True,  # the per-endpoint limit is the shared Redis semaphore, as in production
        description=(
            f"Time to draft {CLIPS} QA chains (8 frames each, sampled with ffmpeg) against the fake OpenAI server "
            f"in its own process with {LATENCY_MS} ms latency at concurrency {CONCURRENCY}, divided by the ideal "
            f"ceil(N / C) × latency (goal ≤ 1.2)."
        ),
    ),
]
