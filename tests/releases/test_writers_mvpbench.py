"""MVPBench JSONL read back and compared with the database."""

import pytest

from annotator.models import MCQ
from releases.build import release_build
from releases.models import ReleaseStatus
from releases.validation import mvpbench_record_rules, schema_errors

from .read_back import paths, read_jsonl
from .release_data import build_small_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def small():
    return build_small_project()


def _lines(release):
    return [line for p in paths(release) if p.startswith("mvpbench/") for line in read_jsonl(release, p)]


def test_record_names_reference_and_candidates_in_input_order(small):
    release = release_build(release=small.release(formats=["mvpbench"]))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    small.videos["gamma"].refresh_from_db()
    assert paths(release) == ["manifest.json", f"mvpbench/{small.videos['gamma'].split}.jsonl"]
    (record,) = _lines(release)
    assert record == {
        "id": "gamma.mp4",
        "query": small.mcqs["mvp"].question,
        "video_options": ["alpha.mp4", "beta.mp4", "delta.mp4"],
        "options": ["1", "2", "3"],
        "answer": "2",
    }
    assert record["query"].count("<video>") == 4
    assert record["answer"] in record["options"]
    assert schema_errors("mvpbench.record", record) == [] and mvpbench_record_rules(record, test_style=False) == []


def test_placeholders_are_added_when_the_question_has_none(small):
    MCQ.objects.filter(pk=small.mcqs["mvp"].pk).update(question="Which candidate continues the reference?")
    release = release_build(release=small.release(formats=["mvpbench"]))
    (record,) = _lines(release)
    assert record["query"] == "<video>\n<video>\n<video>\n<video>\nWhich candidate continues the reference?"


def test_test_style_has_no_answer(small):
    release = release_build(release=small.release(formats=["mvpbench"], test_style=True))
    assert release.status == ReleaseStatus.READY
    assert all("answer" not in r for r in _lines(release))
