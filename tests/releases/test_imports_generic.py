"""Generic JSONL import: items with every field; a moment on a video the question does not name is refused.
(The round trip from the demo's release is in test_imports_round_trip.py.)"""

import pytest

from annotator.models import MCQ
from releases.imports.services import benchmark_import
from tests import factories
from tests.releases.import_files import messages, nothing_written, write_files

pytestmark = pytest.mark.django_db

MCQ_LINE = {
    "kind": "mcq",
    "id": 41,
    "split": "train",
    "video": "cook",
    "family": "longvideobench",
    "question": "After the lid, what?",
    "referring_query": "After the lid,",
    "referring_span": [0, 14],
    "question_wo_referring_query": "what?",
    "question_translation": "",
    "options": ["a", "b", "c", "d"],
    "correct_index": 3,
    "category": "E3E",
    "level": "L2-Relation",
    "task_group": "",
    "videos": [{"video": "cook", "file": "cook.mp4", "role": "main", "order": 0}],
    "moments": [{"video": "cook", "time_s": 2.5, "frame_index": 62, "order": 0, "note": "lid"}],
}
VIDEO_LINE = {"video": "cook", "file": "cook.mp4", "split": "train", "topic_category": "LC", "language": "en"}


@pytest.fixture
def g_project():
    project = factories.ProjectFactory()
    factories.VideoFactory(project=project, name="cook")
    return project


def test_an_mcq_line_keeps_every_field(g_project, tmp_path):
    folder = write_files(
        tmp_path / "r", {"jsonl:generic/videos.jsonl": [VIDEO_LINE], "jsonl:generic/train.jsonl": [MCQ_LINE]}
    )
    report = benchmark_import(project=g_project, format="generic", source=folder)
    assert report.ok, report.problems
    mcq = MCQ.objects.get(project=g_project)
    assert (mcq.referring_query, mcq.referring_start, mcq.referring_end) == ("After the lid,", 0, 14)
    assert (mcq.correct_index, mcq.category, mcq.level) == (3, "E3E", "L2-Relation")
    assert list(mcq.moments.values_list("time_s", "frame_index", "note")) == [(2.5, 62, "lid")]
    video = g_project.videos.get(name="cook")
    assert (video.split, video.topic_category, video.language) == ("train", "LC", "en")


def test_a_moment_on_another_video_imports_nothing(g_project, tmp_path):
    line = {**MCQ_LINE, "moments": [{**MCQ_LINE["moments"][0], "video": "elsewhere"}]}
    folder = write_files(
        tmp_path / "r", {"jsonl:generic/videos.jsonl": [VIDEO_LINE], "jsonl:generic/train.jsonl": [line]}
    )
    report = benchmark_import(project=g_project, format="generic", source=folder)
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert message.startswith("generic/train.jsonl, record 0 (id 41 moment 0), field “video”"), message
    assert nothing_written(g_project)
