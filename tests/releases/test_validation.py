"""Validation: the benchmarks' rules and schemas catch what they should, per item, and fail the release."""

import copy

import pytest

from annotator.models import MCQ, QAPair
from projects.models import ProjectKind
from releases.build import release_build
from releases.models import ReleaseStatus
from releases.validation import (
    livibench_record_rules,
    longvideobench_record_rules,
    longvideobench_subtitle_rules,
    mvpbench_record_rules,
    schema_errors,
    svbench_rules,
)

from .release_data import build_small_project


def _svbench():
    dialogue = [
        {
            "chain": {"questions": ["a?", "b?"], "answers": ["A", "B"]},
            "qac_timestamps_start": 0.0,
            "qac_timestamps_end": 10.5,
        },
        {"chain": {"questions": ["c?"], "answers": ["C"]}, "qac_timestamps_start": 9.5, "qac_timestamps_end": 20.0},
    ]
    con = [
        {
            "chain_1": {**dialogue[0]["chain"], "qac_timestamps_start": 0.0, "qac_timestamps_end": 10.5},
            "chain_2": {**dialogue[1]["chain"], "qac_timestamps_start": 9.5, "qac_timestamps_end": 20.0},
            "relationship": {"chainBefore": [1], "chainAfter": [0], "relationship": ["Events"]},
        }
    ]
    streaming = [
        {
            "questions": ["a?", "b?", "c?"],
            "answers": ["A", "B", "C"],
            "timestamps": [[0.0, 10.5], [0.0, 10.5], [9.5, 20.0]],
        },
        {"questions": ["b?", "c?"], "answers": ["B", "C"], "timestamps": [[0.0, 10.5], [9.5, 20.0]]},
    ]
    path = {"Paths": [[[0, 0], [0, 1], [1, 0]], [[0, 1], [1, 0]]]}
    return {"dialogue": dialogue, "con": con, "streaming": streaming, "path": path}


def _messages(docs, **kw):
    return [m for _, m in svbench_rules(**docs, test_style=kw.get("test_style", False), chain_ids=[11, 12])]


def test_good_svbench_documents_pass():
    docs = _svbench()
    assert _messages(docs) == []
    for name, doc in (("dialogue", "dialogue"), ("con", "con"), ("streaming", "streaming"), ("path", "path")):
        assert schema_errors(f"svbench.{name}", docs[doc]) == []


def test_con_timestamps_must_be_bit_identical_to_dialogue():
    docs = _svbench()
    docs["con"][0]["chain_2"]["qac_timestamps_end"] = 20  # an int equals 20.0 but is not the same float
    assert any("chain_2" in m for m in _messages(docs))
    docs = _svbench()
    docs["con"][0]["chain_1"]["qac_timestamps_start"] = 0.0000001
    assert any("chain_1" in m for m in _messages(docs))


def test_chain_2_must_be_the_next_chain():
    docs = _svbench()
    docs["con"][0]["chain_2"] = copy.deepcopy(docs["con"][0]["chain_1"])
    assert any("next chain" in m for m in _messages(docs))


def test_no_empty_chain_and_aligned_relationship_lists():
    docs = _svbench()
    docs["dialogue"][1]["chain"] = {"questions": [], "answers": []}
    problems = svbench_rules(**docs, test_style=False, chain_ids=[11, 12])
    assert ("chain 12", "Dialogue: the chain is empty (no questions); an SVBench chain never is") in problems
    docs = _svbench()
    docs["con"][0]["relationship"]["relationship"].append("People")
    assert any("not aligned" in m for m in _messages(docs))


def test_path_must_align_with_streaming():
    docs = _svbench()
    docs["path"]["Paths"][1] = [[0, 0], [1, 0]]
    assert any("Streaming path 1 step 0" in m for m in _messages(docs))
    docs = _svbench()
    docs["path"]["Paths"].pop()
    assert any("must align" in m for m in _messages(docs))


def test_answers_follow_test_style():
    docs = _svbench()
    assert any("absent" in m for m in _messages(docs, test_style=True))


def _lvb():
    return {
        "video_id": "v",
        "question": "q?",
        "question_wo_referring_query": "q?",
        "candidates": ["a", "b", "c", "d"],
        "correct_choice": 1,
        "position": [3],
        "topic_category": "LV",
        "question_category": "E2O",
        "level": "L1-Perception",
        "id": "v_0",
        "video_path": "v.mp4",
        "subtitle_path": "v.json",
        "duration_group": 600,
        "starting_timestamp_for_subtitles": 0.0,
        "duration": 100.0,
        "view_count": 3,
    }


def _lvb_messages(record, **kw):
    args = {"test_style": False, "duration_limit_s": 100.0, "subtitle_exists": True, "levels": {"E2O": "L1-Perception"}}
    return longvideobench_record_rules(record, **(args | kw))


def test_longvideobench_rules():
    assert _lvb_messages(_lvb()) == [] and schema_errors("longvideobench.record", _lvb()) == []
    assert _lvb_messages(_lvb(), test_style=True) == ["correct_choice must be absent in a test-style release"]
    assert any("float" in m for m in _lvb_messages({**_lvb(), "duration": 100}))
    assert any("longer than the decodable video" in m for m in _lvb_messages(_lvb(), duration_limit_s=99.9))
    short = _lvb_messages({**_lvb(), "duration": 0.6}, duration_limit_s=0.6)
    assert short == ["duration 0.6 s is under 1 s: the official loader samples no frame from it"]
    assert any("does not exist" in m for m in _lvb_messages(_lvb(), subtitle_exists=False))
    assert any("does not match category" in m for m in _lvb_messages({**_lvb(), "level": "L2-Relation"}))
    assert any("not one of the 4 candidates" in m for m in _lvb_messages({**_lvb(), "correct_choice": 4}))
    assert schema_errors("longvideobench.record", {**_lvb(), "candidates": ["a", "b", "c"]})


def test_longvideobench_subtitles_need_float_timestamps_in_order():
    assert longvideobench_subtitle_rules([{"timestamp": [0.0, 1.5], "text": "a"}]) == []
    assert longvideobench_subtitle_rules([{"timestamp": [0.0, 2], "text": "a"}])  # an int end is misread
    assert longvideobench_subtitle_rules(
        [{"timestamp": [3.0, 4.0], "text": "a"}, {"timestamp": [1.0, 2.0], "text": "b"}]
    )


def test_mvpbench_and_livibench_rules():
    record = {
        "id": "r.mp4",
        "query": "<video> <video> x",
        "video_options": ["c.mp4"],
        "options": ["1", "2"],
        "answer": "3",
    }
    assert any("not one of the options" in m for m in mvpbench_record_rules(record, test_style=False))
    assert any(
        "placeholders" in m
        for m in mvpbench_record_rules({**record, "query": "<video> x", "answer": "1"}, test_style=False)
    )
    livi = {"task": "video topic", "group": "coarse perception", "options": ["a", "b"], "answer": 2, "duration": 3.0}
    assert any("not the index" in m for m in livibench_record_rules(livi, test_style=False))
    assert any("task list" in m for m in livibench_record_rules({**livi, "answer": 0}, test_style=False, tasks={}))


def test_schema_messages_say_where():
    (message,) = schema_errors(
        "mvpbench.record", {"id": "r.mp4", "query": "q", "video_options": [], "options": ["1", "2"]}
    )
    assert message.startswith("mvpbench.record schema: at video_options:")


@pytest.mark.django_db
def test_problems_are_listed_per_item_and_fail_the_release():
    small = build_small_project()
    MCQ.objects.filter(pk=small.mcqs["lvb_l1"].pk).update(correct_index=None)
    MCQ.objects.filter(pk=small.mcqs["mvp"].pk).update(correct_index=4)  # three options: no answer label
    empty = small.chains[("beta", 0)]
    QAPair.objects.filter(chain=empty).delete()
    release = release_build(release=small.release())
    assert release.status == ReleaseStatus.FAILED
    assert not release.archive
    rows = {(e["format"], e["item"]) for e in release.validation_errors}
    assert ("longvideobench", f"mcq {small.mcqs['lvb_l1'].pk}") in rows
    assert ("mvpbench", f"mcq {small.mcqs['mvp'].pk}") in rows
    assert ("svbench", f"chain {empty.pk}") in rows
    assert all(set(e) == {"format", "file", "item", "message"} and e["message"] for e in release.validation_errors)
    lvb = next(e for e in release.validation_errors if e["item"] == f"mcq {small.mcqs['lvb_l1'].pk}")
    assert lvb["file"].startswith("longvideobench/lvb_") and "correct_choice is missing" in lvb["message"]
    # The files stay for inspection and are listed; the problems are on the row.
    assert release.files and release.manifest["counts"]["items"]["mcq"] == 5


@pytest.mark.django_db
def test_an_unknown_category_in_a_longvideobench_project_is_reported():
    small = build_small_project(kind=ProjectKind.LONGVIDEOBENCH)
    MCQ.objects.filter(pk=small.mcqs["lvb_beta"].pk).update(category="XYZ")
    release = release_build(release=small.release(formats=["longvideobench"]))
    assert release.status == ReleaseStatus.FAILED
    (problem,) = [e for e in release.validation_errors if e["item"] == f"mcq {small.mcqs['lvb_beta'].pk}"]
    assert "question_category 'XYZ' is not a LongVideoBench category" in problem["message"]


def test_the_compiled_schemas_agree_with_jsonschema():
    from releases.validation import SCHEMAS, _fast, _validator

    samples = {
        "svbench.dialogue": [_svbench()["dialogue"], [], [{"chain": {"questions": []}}], "x"],
        "svbench.con": [_svbench()["con"], [{"chain_1": {}}]],
        "svbench.streaming": [_svbench()["streaming"], [{"questions": ["a"], "timestamps": [[1.0]]}]],
        "svbench.path": [_svbench()["path"], {"Paths": [[[0, -1]]]}, {"Paths": [[[True, 0]]]}],
        "longvideobench.record": [_lvb(), {**_lvb(), "duration_group": 30}, {**_lvb(), "extra": 1}],
        "longvideobench.subtitles": [[{"timestamp": [0.0, 1.0], "text": "a"}], [{"timestamp": [0.0], "text": "a"}]],
    }
    for name, documents in samples.items():
        assert name in SCHEMAS
        for document in documents:
            fast_ok = True
            try:
                _fast(name)(document)
            except Exception:  # noqa: BLE001 - any refusal
                fast_ok = False
            assert fast_ok == _validator(name).is_valid(document), (name, document)
