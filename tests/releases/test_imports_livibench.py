"""LiViBench import: questions with their task and group; comments and transcript files go onto the video."""

import pytest

from annotator.models import MCQ
from projects.models import ProjectKind
from releases.imports.services import benchmark_import
from tests import factories
from tests.releases.import_files import messages, nothing_written, write_files
from videos.models import Comment, SubtitleCue

pytestmark = pytest.mark.django_db

LINE = {
    "format": "vidqa-livibench/1",
    "id": "live_0",
    "video": "live.mp4",
    "task": "event recognition",
    "group": "fine perception",
    "question": "What happens when the host waves?",
    "question_translation": "主持人挥手时发生了什么？",
    "options": ["a", "b", "c", "d"],
    "answer": 2,
    "comments_file": "livibench/comments/live.jsonl",
    "asr_file": "livibench/asr/live.jsonl",
    "audio": True,
    "duration": 120.0,
}


@pytest.fixture
def live_project():
    project = factories.ProjectFactory(kind=ProjectKind.LIVIBENCH)
    factories.VideoFactory(project=project, name="live")
    return project


def _files(tmp_path, lines):
    return write_files(
        tmp_path / "r",
        {
            "jsonl:livibench/test.jsonl": lines,
            "jsonl:livibench/comments/live.jsonl": [
                {"time": 1.25, "text": "hi", "user": "u1"},
                {"time": 3.0, "text": "wave!", "user": ""},
            ],
            "jsonl:livibench/asr/live.jsonl": [{"start": 0.5, "end": 2.0, "text": "welcome", "source": "asr"}],
        },
    )


def test_questions_comments_and_transcript_are_imported(live_project, tmp_path):
    report = benchmark_import(project=live_project, format="livibench", source=_files(tmp_path, [LINE]))
    assert report.ok, report.problems
    mcq = MCQ.objects.get(project=live_project)
    assert (mcq.category, mcq.task_group, mcq.correct_index) == ("event recognition", "fine perception", 2)
    assert mcq.question_translation == LINE["question_translation"]
    video = live_project.videos.get(name="live")
    assert list(Comment.objects.filter(video=video).order_by("time_s").values_list("time_s", "text", "user")) == [
        (1.25, "hi", "u1"),
        (3.0, "wave!", ""),
    ]
    assert list(SubtitleCue.objects.filter(video=video).values_list("start_s", "end_s", "text", "source")) == [
        (0.5, 2.0, "welcome", "asr")
    ]
    assert report.counts["comments"] == 2 and report.counts["cues"] == 1


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({**LINE, "answer": "2"}, "answer"),
        ({**LINE, "format": "other/2"}, "format"),
        ({**LINE, "options": ["a"], "answer": 0}, "options"),
    ],
)
def test_a_bad_line_names_its_field_and_imports_nothing(live_project, tmp_path, bad, field):
    report = benchmark_import(
        project=live_project, format="livibench", source=_files(tmp_path, [LINE, {**bad, "id": "live_1"}])
    )
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert message.startswith(f"livibench/test.jsonl, record 1 (id live_1), field “{field}”"), message
    assert nothing_written(live_project)


def test_a_bad_comment_line_is_named(live_project, tmp_path):
    folder = _files(tmp_path, [LINE])
    write_files(folder, {"jsonl:livibench/comments/live.jsonl": [{"time": "soon", "text": "x"}]})
    report = benchmark_import(project=live_project, format="livibench", source=folder)
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert message.startswith("livibench/comments/live.jsonl, record 0, field “time”"), message
    assert nothing_written(live_project)


def test_an_empty_comments_file_leaves_the_videos_comments(live_project, tmp_path):
    video = live_project.videos.get(name="live")
    Comment.objects.create(video=video, time_s=9.0, text="kept")
    folder = _files(tmp_path, [LINE])
    write_files(folder, {"jsonl:livibench/comments/live.jsonl": []})
    assert benchmark_import(project=live_project, format="livibench", source=folder).ok
    assert list(Comment.objects.filter(video=video).values_list("text", flat=True)) == ["kept"]
