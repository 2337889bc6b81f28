"""MVPBench import: a line becomes an MCQ over its reference and candidate videos."""

import pytest

from annotator.models import MCQ, VideoRole
from releases.imports.services import benchmark_import
from tests import factories
from tests.releases.import_files import messages, nothing_written, write_files

pytestmark = pytest.mark.django_db

LINE = {
    "id": "ref.mp4",
    "query": "<video>\n<video>\n<video>\nWhich candidate shows the same dish?",
    "video_options": ["a.mp4", "b.mp4"],
    "options": ["1", "2"],
    "answer": "2",
}


@pytest.fixture
def mvp_project():
    project = factories.ProjectFactory()
    for name in ("ref", "a", "b"):
        factories.VideoFactory(project=project, name=name)
    return project


def test_a_line_becomes_a_multi_video_mcq(mvp_project, tmp_path):
    folder = write_files(tmp_path / "r", {"jsonl:mvpbench/eval.jsonl": [LINE]})
    report = benchmark_import(project=mvp_project, format="mvpbench", source=folder)
    assert report.ok, report.problems
    mcq = MCQ.objects.get(project=mvp_project)
    assert mcq.question == "Which candidate shows the same dish?"
    assert mcq.options == ["1", "2"] and mcq.correct_index == 1
    links = [(link.video.name, link.role, link.order) for link in mcq.mcq_videos.order_by("order")]
    assert links == [("ref", VideoRole.REFERENCE, 0), ("a", VideoRole.CANDIDATE, 1), ("b", VideoRole.CANDIDATE, 2)]
    assert mvp_project.videos.get(name="ref").split == "eval" and mvp_project.videos.get(name="a").split == ""


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({**LINE, "answer": "3"}, "answer"),
        ({**LINE, "video_options": "a.mp4"}, "video_options"),
        ({**LINE, "query": "<video> Which?"}, "query"),
        ({**LINE, "video_options": ["a.mp4", "gone.mp4"]}, "video_options"),
    ],
)
def test_a_bad_line_names_its_field_and_imports_nothing(mvp_project, tmp_path, bad, field):
    folder = write_files(tmp_path / "r", {"jsonl:mvpbench/eval.jsonl": [LINE, bad]})
    report = benchmark_import(project=mvp_project, format="mvpbench", source=folder)
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert message.startswith(f"mvpbench/eval.jsonl, record 1 (id ref.mp4), field “{field}”"), message
    assert nothing_written(mvp_project)
