"""Benchmark import figure: a LongVideoBench file of 6,678 records with subtitles imported into a project.

The 50 videos the records refer to are already in the project (rows only; no file is read), so the
figure measures what the import adds: reading and checking every record and subtitle file, and writing
the MCQs, their videos, referred moments, history, provenance and review events in one transaction.
"""

import json
import random
import time
from pathlib import Path

from bench.figure import BenchContext, Figure, Measurement

RECORDS = 6678  # LongVideoBench's validation and test sets together
VIDEOS = 50
CUES_PER_VIDEO = 120
CATEGORIES = ["S2E", "S2O", "S2A", "E2O", "O2E", "T2E", "T2O", "T2A", "E3E", "O3O", "SSS", "SOS", "SAA", "T3E"]


def _files(ctx: BenchContext, folder: Path, records: int) -> None:
    rng = random.Random(ctx.seed)
    (folder / "longvideobench").mkdir(parents=True, exist_ok=True)
    (folder / "subtitles").mkdir(parents=True, exist_ok=True)
    for v in range(VIDEOS):
        cues = []
        t = 0.0
        for n in range(CUES_PER_VIDEO):
            t += rng.uniform(0.5, 4.0)
            cues.append({"timestamp": [round(t, 3), round(t + 2.0, 3)], "text": f"line {n} of video {v}"})
        (folder / "subtitles" / f"lvb{v:03d}.json").write_text(json.dumps(cues))
    out, counts = [], [0] * VIDEOS
    for n in range(records):
        v = n % VIDEOS
        category = CATEGORIES[rng.randrange(len(CATEGORIES))]
        out.append(
            {
                "video_id": f"lvb{v:03d}",
                "question": f"When the scene {n} shows the table, what is on it?",
                "question_wo_referring_query": "what is on it?",
                "candidates": [f"option {k} of {n}" for k in range(rng.choice((4, 5)))],
                "correct_choice": rng.randrange(4),
                "position": sorted(rng.sample(range(15000), rng.randint(1, 3))),
                "topic_category": "LC",
                "question_category": category,
                "level": "L2-Relation" if category[1] == "3" or category in ("SSS", "SOS", "SAA") else "L1-Perception",
                "id": f"lvb{v:03d}_{counts[v]}",
                "video_path": f"lvb{v:03d}.mp4",
                "subtitle_path": f"lvb{v:03d}.json",
                "duration_group": 3600,
                "starting_timestamp_for_subtitles": 0.0,
                "duration": 1800.0,
                "view_count": 1000 + v,
            }
        )
        counts[v] += 1
    (folder / "longvideobench" / "lvb_test.json").write_text(json.dumps(out, ensure_ascii=False))


def measure_import_lvb(ctx: BenchContext) -> Measurement:
    from projects.models import Project, ProjectKind
    from releases.imports.services import benchmark_import
    from videos.models import Video

    slug = "bench-lvb-import"
    Project.objects.filter(slug=slug).delete()
    project = Project.objects.create(name=slug, slug=slug, kind=ProjectKind.LONGVIDEOBENCH)
    Video.objects.bulk_create(
        Video(
            project=project,
            name=f"lvb{v:03d}",
            original=f"bench/lvb{v:03d}.mp4",
            original_filename=f"lvb{v:03d}.mp4",
            sha256=f"{v:064x}",
            duration_s=1800.0,
            fps=25.0,
            frame_count=45000,
        )
        for v in range(VIDEOS)
    )
    records = max(1, round(RECORDS * ctx.scale))
    folder = ctx.work_dir / "lvb-import"
    _files(ctx, folder, records)
    started = time.perf_counter()
    report = benchmark_import(project=project, format="longvideobench", source=folder)
    seconds = time.perf_counter() - started
    if not report.ok or report.counts["mcqs"] != records:
        raise RuntimeError(f"the import did not take every record: {report.counts} {report.problems[:3]}")
    return Measurement(value=seconds)


FIGURES = [
    Figure(
        name="import_lvb_s",
        unit="s",
        measure=measure_import_lvb,
        description=(
            "Import of a LongVideoBench file of 6,678 records with a subtitle file per video (50 videos already "
            "in the project, 120 cues each): read, check, and write MCQs, moments, history, provenance and "
            "review events in one transaction (goal ≤ 10 s)."
        ),
    ),
]
