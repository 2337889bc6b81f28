"""LongVideoBench import: records become MCQs with their moments, videos get their facts and
subtitles, each item keeps its file, record and sha256; a bad record imports nothing."""

import copy
import hashlib
import subprocess
from pathlib import Path

import pytest

from annotator.models import MCQ, ItemKind, ItemStatus, Origin, ReviewEvent
from projects.models import ProjectKind
from releases.imports.services import benchmark_import
from releases.models import BenchmarkImport, ImportedRecord
from tests import factories
from tests.releases.import_files import messages, nothing_written, write_files
from videos.models import SubtitleCue

pytestmark = pytest.mark.django_db

RECORD = {
    "video_id": "cook",
    "question": "When the chef lifts the lid, what is in the pot?",
    "question_wo_referring_query": "what is in the pot?",
    "candidates": ["rice", "pasta", "soup", "nothing"],
    "correct_choice": 1,
    "position": [50, 125],
    "topic_category": "LC",
    "question_category": "E2O",
    "level": "L1-Perception",
    "id": "cook_0",
    "video_path": "cook.mp4",
    "subtitle_path": "cook.json",
    "duration_group": 600,
    "starting_timestamp_for_subtitles": 0.0,
    "duration": 120.0,
    "view_count": 77,
}
SUBTITLES = [
    {"start": "00:00:01.500", "end": "00:00:03.250", "line": "Hello"},
    {"start": "00:00:04.000", "end": "00:00:05.000", "line": "The lid"},
]


@pytest.fixture
def lvb_project():
    project = factories.ProjectFactory(kind=ProjectKind.LONGVIDEOBENCH)
    factories.VideoFactory(project=project, name="cook", fps=25.0, duration_s=120.0)
    return project


def _files(tmp_path, records):
    return write_files(
        tmp_path / "release",
        {"longvideobench/lvb_test.json": records, "subtitles/cook.json": SUBTITLES},
    )


def test_records_become_mcqs_with_moments_facts_subtitles_and_provenance(lvb_project, tmp_path):
    user = factories.UserFactory()
    second = {**RECORD, "id": "cook_1", "question": "Q2 plain?", "question_wo_referring_query": "", "position": []}
    second.pop("correct_choice")  # a test-style record: no answer
    folder = _files(tmp_path, [RECORD, second])
    report = benchmark_import(project=lvb_project, format="longvideobench", source=folder, user=user)
    assert report.ok, report.problems
    assert report.counts["mcqs"] == 2 and report.counts["cues"] == 2 and report.counts["videos_matched"] == 1

    first, other = MCQ.objects.filter(project=lvb_project).order_by("pk")
    assert first.options == RECORD["candidates"] and first.correct_index == 1
    assert first.category == "E2O" and first.level == "L1-Perception"
    assert first.referring_query == "When the chef lifts the lid," and first.question[:28] == first.referring_query
    assert first.question_wo_referring_query == "what is in the pot?"
    assert first.status == ItemStatus.EXAMINING and first.origin == Origin.IMPORTED
    assert [(m.frame_index, m.time_s, m.order) for m in first.moments.order_by("order")] == [
        (50, 2.0, 0),
        (125, 5.0, 1),
    ]
    assert other.correct_index is None and not other.moments.exists() and other.referring_query == ""

    video = lvb_project.videos.get(name="cook")
    assert (video.split, video.topic_category, video.view_count) == ("test", "LC", 77)
    cues = list(SubtitleCue.objects.filter(video=video).order_by("start_s"))
    assert [(c.start_s, c.end_s, c.text, c.source) for c in cues] == [
        (1.5, 3.25, "Hello", "lvb_json"),
        (4.0, 5.0, "The lid", "lvb_json"),
    ]

    run = BenchmarkImport.objects.get(pk=report.import_id)
    assert run.created_by == user and run.item_status == ItemStatus.EXAMINING and run.counts["mcqs"] == 2
    sha = hashlib.sha256((folder / "longvideobench/lvb_test.json").read_bytes()).hexdigest()
    rows = list(ImportedRecord.objects.filter(benchmark_import=run, item_kind=ItemKind.MCQ).order_by("record_index"))
    assert [(r.mcq_id, r.file, r.record_index, r.record_id, r.sha256) for r in rows] == [
        (first.pk, "longvideobench/lvb_test.json", 0, "cook_0", sha),
        (other.pk, "longvideobench/lvb_test.json", 1, "cook_1", sha),
    ]
    assert {p["path"] for p in run.files} == {"longvideobench/lvb_test.json", "subtitles/cook.json"}
    event = ReviewEvent.objects.get(mcq=first)
    assert (event.actor, event.from_status, event.to_status) == (user, "", ItemStatus.EXAMINING)


def test_the_status_is_chosen_at_import(lvb_project, tmp_path):
    report = benchmark_import(
        project=lvb_project, format="longvideobench", source=_files(tmp_path, [RECORD]), status=ItemStatus.ACCEPTED
    )
    mcq = MCQ.objects.get(pk=ImportedRecord.objects.get(benchmark_import_id=report.import_id).mcq_id)
    assert mcq.status == ItemStatus.ACCEPTED and mcq.accepted_at is not None


def _without(key):
    record = copy.deepcopy(RECORD)
    record.pop(key)
    return record


@pytest.mark.parametrize(
    ("bad", "field", "says"),
    [
        (_without("question"), "question", "is missing"),
        ({**RECORD, "candidates": "rice, pasta"}, "candidates", "must be a list of texts"),
        ({**RECORD, "correct_choice": 4}, "correct_choice", "only 4 options"),
        ({**RECORD, "correct_choice": True}, "correct_choice", "must be a whole number"),
        ({**RECORD, "position": [1.5]}, "position", "whole numbers"),
        ({**RECORD, "video_path": "elsewhere.mp4"}, "video_path", "neither in the project nor in the import"),
        ({**RECORD, "subtitle_path": "missing.json"}, "subtitle_path", "does not exist"),
    ],
)
def test_a_bad_record_names_file_record_and_field_and_imports_nothing(lvb_project, tmp_path, bad, field, says):
    bad = {**bad, "id": "cook_1"}
    report = benchmark_import(project=lvb_project, format="longvideobench", source=_files(tmp_path, [RECORD, bad]))
    assert not report.ok and report.import_id is None
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert message.startswith(f"longvideobench/lvb_test.json, record 1 (id cook_1), field “{field}”"), message
    assert says in message
    assert report.problems[0]["record"] == 1 and report.problems[0]["field"] == field
    assert nothing_written(lvb_project)
    assert lvb_project.videos.get(name="cook").split == ""  # the video's facts untouched too


def test_every_problem_is_listed(lvb_project, tmp_path):
    bad = [{**RECORD, "id": f"cook_{n}", "correct_choice": 9} for n in range(3)]
    report = benchmark_import(project=lvb_project, format="longvideobench", source=_files(tmp_path, bad))
    assert report.total_problems == 3 and [p["record"] for p in report.problems] == [0, 1, 2]


def test_a_file_that_is_not_json_is_named(lvb_project, tmp_path):
    folder = write_files(tmp_path / "r", {"longvideobench/lvb_test.json": "[{"})
    report = benchmark_import(project=lvb_project, format="longvideobench", source=folder)
    assert not report.ok and messages(report)[0].startswith("longvideobench/lvb_test.json: is not valid JSON")


def test_a_category_the_project_would_release_elsewhere_is_refused(tmp_path):
    project = factories.ProjectFactory(kind=ProjectKind.SVBENCH)  # LongVideoBench codes only go to LongVideoBench
    factories.VideoFactory(project=project, name="cook", fps=25.0)
    folder = _files(tmp_path, [{**RECORD, "question_category": "cooking"}])
    report = benchmark_import(project=project, format="longvideobench", source=folder)
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert "record 0 (id cook_0), field “question_category”" in message and "released as livibench" in message
    assert nothing_written(project)


def _tiny_video(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(  # noqa: S603
        [
            "ffmpeg",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=64x48:rate=10:duration=2",
            "-pix_fmt",
            "yuv420p",
            str(path),
        ],  # noqa: S607
        check=True,
    )


def test_a_video_from_the_folder_is_imported_with_the_items_or_not_at_all(lvb_project, tmp_path, settings):
    folder = _files(tmp_path, [{**RECORD, "video_path": "fresh.mp4", "id": "fresh_0", "position": [5]}])
    _tiny_video(folder / "videos" / "fresh.mp4")
    bad = _files(
        tmp_path / "bad", [{**RECORD, "video_path": "fresh.mp4", "correct_choice": 1}, {**RECORD, "candidates": 3}]
    )
    _tiny_video(bad / "videos" / "fresh.mp4")

    report = benchmark_import(project=lvb_project, format="longvideobench", source=bad)
    assert not report.ok and not lvb_project.videos.filter(name="fresh").exists()
    assert not list(Path(settings.MEDIA_ROOT).rglob("fresh.mp4"))  # the stored copy went with the rollback

    report = benchmark_import(project=lvb_project, format="longvideobench", source=folder)
    assert report.ok and report.counts["videos_imported"] == 1
    video = lvb_project.videos.get(name="fresh")
    mcq = MCQ.objects.get(project=lvb_project)
    assert mcq.mcq_videos.get().video == video and mcq.moments.get().time_s == 5 / video.fps


def test_the_same_file_is_not_imported_twice(lvb_project, tmp_path):
    assert benchmark_import(project=lvb_project, format="longvideobench", source=_files(tmp_path, [RECORD])).ok
    again = benchmark_import(project=lvb_project, format="longvideobench", source=_files(tmp_path / "2", [RECORD]))
    assert not again.ok and "imported into the project before" in messages(again)[0]
    assert MCQ.objects.filter(project=lvb_project).count() == 1


def test_imported_items_are_never_machine_drafts(lvb_project, tmp_path):
    from releases.imports.services import ImportNotStarted

    with pytest.raises(ImportNotStarted, match="not draft"):
        benchmark_import(
            project=lvb_project, format="longvideobench", source=_files(tmp_path, [RECORD]), status="draft"
        )
