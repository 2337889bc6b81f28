"""LongVideoBench files read back as its loader reads them and compared with the database."""

import pytest

from releases.build import release_build
from releases.models import ReleaseStatus
from releases.validation import longvideobench_record_rules, longvideobench_subtitle_rules, schema_errors

from .read_back import paths, read_json
from .release_data import build_small_project

pytestmark = pytest.mark.django_db

KEYS = [
    "video_id",
    "question",
    "question_wo_referring_query",
    "candidates",
    "correct_choice",
    "position",
    "topic_category",
    "question_category",
    "level",
    "id",
    "video_path",
    "subtitle_path",
    "duration_group",
    "starting_timestamp_for_subtitles",
    "duration",
    "view_count",
]


@pytest.fixture
def small():
    return build_small_project()


def _records(release) -> list[dict]:
    records = []
    for path in paths(release):
        if path.startswith("longvideobench/lvb_") and path.endswith(".json"):
            records += read_json(release, path)
    return records


def _build(small, **fields):
    release = release_build(release=small.release(formats=["longvideobench"], **fields))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    return release


def test_records_match_the_database(small):
    release = _build(small)
    records = {r["id"]: r for r in _records(release)}
    assert set(records) == {"alpha_0", "alpha_1", "beta_0"}  # the unaccepted MCQ is not there
    l1, l2, beta = records["alpha_0"], records["alpha_1"], records["beta_0"]
    assert list(l1) == KEYS
    mcq = small.mcqs["lvb_l1"]
    assert l1["question"] == mcq.question and l1["question_wo_referring_query"] == mcq.question_wo_referring_query
    assert l1["candidates"] == mcq.options and l1["correct_choice"] == 2
    assert l1["position"] == [125] and l2["position"] == [300, 626]
    assert (l1["question_category"], l1["level"]) == ("E2O", "L1-Perception")
    assert (l2["question_category"], l2["level"], len(l2["candidates"])) == ("SSS", "L2-Relation", 5)
    assert l1["topic_category"] == "LV" and l1["view_count"] == 1234 and beta["view_count"] == 0
    assert (l1["video_path"], l1["subtitle_path"]) == ("alpha.mp4", "alpha.json")
    assert l1["duration_group"] == 600 and beta["duration_group"] == 60
    assert l1["duration"] == 120.0 and beta["duration"] == 45.5
    for record in records.values():
        assert isinstance(record["duration"], float)
        assert isinstance(record["starting_timestamp_for_subtitles"], float)
        assert schema_errors("longvideobench.record", record) == []
    # Files per split, named as LongVideoBench names its own (lvb_<split>.json).
    small.videos["alpha"].refresh_from_db()
    assert f"longvideobench/lvb_{small.videos['alpha'].split}.json" in paths(release)


def test_every_record_has_its_subtitle_file(small):
    release = _build(small)
    for record in _records(release):
        path = f"subtitles/{record['subtitle_path']}"
        assert path in paths(release)
        cues = read_json(release, path)
        assert longvideobench_subtitle_rules(cues) == []
        assert (
            longvideobench_record_rules(
                record, test_style=False, duration_limit_s=record["duration"], subtitle_exists=True
            )
            == []
        )
    # beta has no subtitles: its file is there and holds [].
    assert read_json(release, "subtitles/beta.json") == []
    # alpha: the imported SRT cues (not the ASR one), float timestamps in time order.
    assert read_json(release, "subtitles/alpha.json") == [
        {"timestamp": [0.5, 2.0], "text": "Hello there."},
        {"timestamp": [3.0, 4.25], "text": "Let us cook."},
        {"timestamp": [5.0, 7.0], "text": "Carry the bag."},
    ]
    assert all(isinstance(x, float) for cue in read_json(release, "subtitles/alpha.json") for x in cue["timestamp"])


def test_duration_never_exceeds_the_decodable_video(small):
    video = small.videos["alpha"]
    video.frame_count = 2990  # 119.6 s of frames at 25 fps under a 120 s container
    video.save()
    release = _build(small)
    record = next(r for r in _records(release) if r["video_id"] == "alpha")
    assert record["duration"] == 119.6 <= video.duration_s


def test_test_style_has_no_correct_choice(small):
    release = _build(small, test_style=True)
    records = _records(release)
    assert records and all("correct_choice" not in r for r in records)
