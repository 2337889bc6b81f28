"""LiViBench (VidQA JSONL v1) read back and compared with the database: questions, comments, transcript."""

import json

import pytest

from releases.build import release_build
from releases.models import ReleaseStatus
from releases.validation import livibench_record_rules, schema_errors

from .read_back import paths, read_bytes, read_jsonl
from .release_data import build_small_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def small():
    return build_small_project()


def test_question_comments_and_transcript(small):
    release = release_build(release=small.release(formats=["livibench"]))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    small.videos["delta"].refresh_from_db()
    question_file = f"livibench/{small.videos['delta'].split}.jsonl"
    assert paths(release) == sorted(
        ["manifest.json", question_file, "livibench/comments/delta.jsonl", "livibench/asr/delta.jsonl"]
    )
    (record,) = read_jsonl(release, question_file)
    assert record == {
        "format": "vidqa-livibench/1",
        "id": "delta_0",
        "video": "delta.mp4",
        "task": "event recognition",
        "group": "fine perception",
        "question": "What does the streamer celebrate?",
        "question_translation": "主播在庆祝什么？",
        "options": ["a birthday", "a win", "a new home", "nothing"],
        "answer": 0,
        "comments_file": "livibench/comments/delta.jsonl",
        "asr_file": "livibench/asr/delta.jsonl",
        "audio": True,
        "duration": 200.0,
    }
    assert schema_errors("livibench.record", record) == []
    assert livibench_record_rules(record, test_style=False, tasks={"event recognition": "fine perception"}) == []
    # Comments in time order, text exactly as stored (UTF-8, no escapes).
    assert read_jsonl(release, "livibench/comments/delta.jsonl") == [
        {"time": 1.5, "text": "hi 👋", "user": ""},
        {"time": 2.0, "text": "first!", "user": "viewer1"},
        {"time": 9.25, "text": "生日快乐", "user": "viewer2"},
    ]
    assert "生日快乐".encode() in read_bytes(release, "livibench/comments/delta.jsonl")
    assert read_jsonl(release, "livibench/asr/delta.jsonl") == [
        {"start": 1.0, "end": 3.5, "text": "Welcome to the stream!", "source": "asr"}
    ]


def test_test_style_has_no_answer(small):
    release = release_build(release=small.release(formats=["livibench"], test_style=True))
    assert release.status == ReleaseStatus.READY
    record = read_jsonl(release, next(p for p in paths(release) if p.count("/") == 1 and p.startswith("livibench/")))[0]
    assert "answer" not in record


def test_comment_lines_are_exactly_the_shared_json_text(small):
    from releases.writers.common import dumps

    release = release_build(release=small.release(formats=["livibench"]))
    for line in read_bytes(release, "livibench/comments/delta.jsonl").decode().splitlines():
        assert line == dumps(json.loads(line))


def test_comments_of_many_videos_come_from_one_query_each_to_its_own_file(small):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import CommentFactory, VideoFactory

    from .release_data import _mcq

    # Names whose code-point order (the build's) differs from most locales' order; one has no comments.
    names = ["Zulu", "_under", "alpha2", "Ärger", "mid"]
    for name in names:
        video = VideoFactory(project=small.project, name=name, duration_s=60.0, fps=25.0, has_audio=True)
        _mcq(
            small.project,
            [(video, "main")],
            question=f"What happens in {name}?",
            options=["a", "b"],
            correct_index=0,
            category="event recognition",
            task_group="fine perception",
        )
        if name != "mid":
            CommentFactory(video=video, time_s=3.0, text=f"{name} later", user="u")
            CommentFactory(video=video, time_s=1.0, text=f"{name} first", user="")
    with CaptureQueriesContext(connection) as queries:
        release = release_build(release=small.release(formats=["livibench"]))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    comment_queries = [q["sql"] for q in queries.captured_queries if '"videos_comment"' in q["sql"]]
    assert len(comment_queries) == 1  # six videos (delta too), one chunk: one query, not one per video
    for name in names:
        expected = (
            []
            if name == "mid"
            else [
                {"time": 1.0, "text": f"{name} first", "user": ""},
                {"time": 3.0, "text": f"{name} later", "user": "u"},
            ]
        )
        assert read_jsonl(release, f"livibench/comments/{name}.jsonl") == expected
    assert [c["text"] for c in read_jsonl(release, "livibench/comments/delta.jsonl")] == ["hi 👋", "first!", "生日快乐"]
