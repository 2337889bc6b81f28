"""Generic JSONL with provenance read back and compared with the database."""

import pytest

from releases.build import release_build
from releases.models import ReleaseStatus
from releases.validation import schema_errors

from .read_back import paths, read_jsonl
from .release_data import ACCEPTED_AT, build_small_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def small():
    return build_small_project()


def _lines(release):
    return [
        line
        for p in paths(release)
        if p.startswith("generic/") and p != "generic/videos.jsonl"
        for line in read_jsonl(release, p)
    ]


def test_every_released_item_once_with_its_provenance(small):
    release = release_build(release=small.release(formats=["generic"]))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    lines = _lines(release)
    kinds = [(line["kind"], line["id"]) for line in lines]
    assert len(kinds) == len(set(kinds))
    chains = {line["id"]: line for line in lines if line["kind"] == "qa_chain"}
    assert set(chains) == {small.chains[k].pk for k in [("alpha", 0), ("alpha", 1), ("alpha", 2), ("beta", 0)]}
    chain = small.chains[("alpha", 0)]
    line = chains[chain.pk]
    assert line["video"] == "alpha" and line["status"] == "accepted" and line["version"] == chain.version
    assert line["clip"] == {"index": 0, "start_s": 0.0, "end_s": 10.5}
    assert [(p["index"], p["question"], p["answer"], p["skill"]) for p in line["pairs"]] == [
        (p.index, p.question, p.answer, p.skill) for p in chain.pairs.order_by("index")
    ]
    assert line["provenance"] == {
        "origin": "machine",
        "human_edited": True,
        "author": None,
        "accepted_at": ACCEPTED_AT.isoformat(),
        "draft": None,
    }
    pairs = {line["id"]: line for line in lines if line["kind"] == "chain_pair"}
    cp01 = small.chain_pairs[("alpha", 0)]
    assert set(pairs) == {cp01.pk, small.chain_pairs[("alpha", 2)].pk}
    (relation,) = pairs[cp01.pk]["relations"]  # the rejected link is not released
    assert (relation["from_index"], relation["to_index"], relation["type"], relation["label"]) == (
        1,
        0,
        "action",
        "Actions",
    )
    mcqs = {line["id"]: line for line in lines if line["kind"] == "mcq"}
    assert set(mcqs) == {small.mcqs[k].pk for k in ("lvb_l1", "lvb_l2", "lvb_beta", "mvp", "livi")}
    mvp = mcqs[small.mcqs["mvp"].pk]
    assert mvp["family"] == "mvpbench" and mvp["video"] == "gamma" and mvp["correct_index"] == 1
    assert [(v["video"], v["role"], v["order"]) for v in mvp["videos"]] == [
        ("gamma", "reference", 0),
        ("alpha", "candidate", 1),
        ("beta", "candidate", 2),
        ("delta", "candidate", 3),
    ]
    l1 = mcqs[small.mcqs["lvb_l1"].pk]
    assert l1["referring_span"] == [0, 31] and l1["moments"][0]["frame_index"] == 125
    assert all(schema_errors("generic.item", line) == [] for line in lines)
    videos = read_jsonl(release, "generic/videos.jsonl")
    assert [v["video"] for v in videos] == ["alpha", "beta", "delta", "gamma"]


def test_test_style_leaves_answers_out(small):
    release = release_build(release=small.release(formats=["generic"], test_style=True))
    for line in _lines(release):
        assert "correct_index" not in line
        assert all("answer" not in p and "answer_translation" not in p for p in line.get("pairs", []))
