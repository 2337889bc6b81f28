"""Item versions: each kind's content declared once, its content at a version, diffs and restore."""

import dataclasses

import pytest

from annotator.chains import chain_save
from annotator.concurrency import StaleVersion
from annotator.mcqs import mcq_create, mcq_save
from annotator.models import MCQ, ChainPair, ItemKind, QAChain, QAPair, Relation, ReviewEvent, VideoRole
from annotator.relations import relation_add, relation_remove
from annotator.versions import (
    CHAIN_PAIR,
    LINK_CONTENT,
    LINK_FIELDS,
    MCQ_CONTENT,
    MCQ_FIELDS,
    MCQ_KIND,
    QA_CHAIN,
    SPECS,
    TURN_CONTENT,
    TURN_FIELDS,
    RestoreRefused,
    content_diff,
    content_restore,
    item_content_at,
    item_diff,
    item_kind,
    item_versions,
)
from releases.writers.common import MCQData, PairData, RelationData
from tests import factories

pytestmark = pytest.mark.django_db


# --- the declarations ---------------------------------------------------------------------------------------


def test_kinds_are_the_item_kinds_reviews_store():
    assert {QA_CHAIN, CHAIN_PAIR, MCQ_KIND} == set(ItemKind.values) == set(SPECS)
    assert {SPECS[k].model for k in SPECS} == {QAChain, ChainPair, MCQ}


@pytest.mark.parametrize("declared, model", [(MCQ_CONTENT, MCQ), (TURN_CONTENT, QAPair), (LINK_CONTENT, Relation)])
def test_every_declared_field_is_a_column_of_its_model(declared, model):
    columns = {f.attname for f in model._meta.concrete_fields}
    assert {f.name for f in declared} <= columns


def test_the_release_build_reads_the_same_declaration():
    # The release's records take exactly the declared content (plus what the build adds itself).
    assert set(MCQ_FIELDS) <= {f.name for f in dataclasses.fields(MCQData)}
    assert {f.name for f in dataclasses.fields(PairData)} == {"id", "index", *TURN_FIELDS}
    assert {f.name for f in dataclasses.fields(RelationData)} == {"id", "from_index", "to_index", *LINK_FIELDS}


def test_an_mcq_diff_shows_every_labelled_field_and_nothing_else():
    old = dict.fromkeys(MCQ_FIELDS, "") | {"options": ["A", "B"], "correct_index": 0, "referring_start": None}
    new = dict.fromkeys(MCQ_FIELDS, "x") | {"options": ["A", "B"], "correct_index": 1, "referring_start": 3}
    diff = content_diff(MCQ_KIND, old, new)
    assert [f.name for f in diff.fields] == [f.diff_as or f.name for f in MCQ_CONTENT if f.label]
    assert [f.label for f in diff.fields][:3] == ["Question", "Referring query", "Question without the referring query"]
    assert diff.fields[3].new == "B: B"
    assert diff.fields[0].words  # text fields are compared word by word
    assert not next(f for f in diff.fields if f.name == "category").words


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="not a kind"):
        content_diff("video", {}, {})


# --- QA chains ----------------------------------------------------------------------------------------------


def turns(chain):
    return [
        {"id": p.pk, "question": p.question, "answer": p.answer, "skill": p.skill}
        for p in chain.pairs.order_by("index")
    ]


@pytest.fixture
def chain(project, people):
    chain = factories.QAChainFactory(clip__video__project=project, clip__index=0)
    chain_save(
        chain=chain,
        expected_version=1,
        user=people["annotator"],
        pairs=[{"id": None, "question": "Who enters?", "answer": "A chef.", "skill": ""}],
    )
    chain.refresh_from_db()
    edited = turns(chain)
    edited[0]["answer"] = "A chef in white."
    chain_save(chain=chain, expected_version=2, user=people["annotator"], pairs=edited)
    chain.refresh_from_db()
    return chain


def test_chain_content_at_each_version_and_its_diff(chain):
    assert item_kind(chain) == QA_CHAIN
    assert [v.version for v in item_versions(chain)] == [1, 2, 3]
    assert [t["answer"] for t in item_content_at(chain, 2)["turns"]] == ["A chef."]
    assert [t["answer"] for t in item_content_at(chain, 3)["turns"]] == ["A chef in white."]
    diff = item_diff(chain, 2, 3)
    (entry,) = diff.sections[0].entries
    assert entry.change == "changed" and diff.summary == "1 turn changed"


def test_chain_restore_writes_the_old_content_as_a_new_version(chain, people):
    restored = content_restore(item=chain, to_version=2, user=people["admin"], reason="admin_revert:2")
    chain.refresh_from_db()
    assert (restored.restored_version, restored.previous_version, chain.version) == (2, 3, 4)
    assert [t["answer"] for t in turns(chain)] == ["A chef."]
    assert QAChain.history.filter(id=chain.pk, version=4).get().history_change_reason == "admin_revert:2"
    assert not item_diff(chain, 2, 4).changed
    # Restoring writes content only: logging who reverted is the caller's business.
    assert not ReviewEvent.objects.filter(qa_chain=chain, reasons__contains=["admin_revert"]).exists()


def test_a_restore_that_changes_nothing_or_comes_from_a_stale_page_is_refused(chain, people):
    with pytest.raises(RestoreRefused, match="current version"):
        content_restore(item=chain, to_version=3, user=people["admin"], reason="r")
    with pytest.raises(RestoreRefused, match="Version 9"):
        content_restore(item=chain, to_version=9, user=people["admin"], reason="r")
    with pytest.raises(StaleVersion):
        content_restore(item=chain, to_version=2, user=people["admin"], reason="r", expected_version=2)
    chain.refresh_from_db()
    assert chain.version == 3


# --- MCQs ---------------------------------------------------------------------------------------------------


@pytest.fixture
def mcq(project, people):
    video = factories.VideoFactory(project=project, name="kitchen", duration_s=60.0, fps=25.0)
    mcq = mcq_create(project=project, videos=[(video, VideoRole.MAIN)], user=people["annotator"])
    for options, correct, times in ((["Red", "Green"], 0, [12.5]), (["Red", "Blue", "Black"], 2, [12.5, 30.0])):
        mcq.refresh_from_db()
        mcq_save(
            mcq=mcq,
            expected_version=mcq.version,
            user=people["annotator"],
            question="When the chef lifts the pan, what colour is the sauce?",
            options=options,
            correct_index=correct,
            videos=[{"video_id": video.pk, "role": "main", "order": 0}],
            moments=[{"video_id": video.pk, "time_s": t, "frame_index": 0} for t in times],
        )
    mcq.refresh_from_db()
    return mcq


def test_mcq_content_at_each_version_holds_every_declared_field(mcq):
    content = item_content_at(mcq, 2)
    assert set(MCQ_FIELDS) <= set(content)
    assert content["options"] == ["Red", "Green"] and content["correct_index"] == 0
    assert [m["time_s"] for m in content["moments"]] == [12.5]
    diff = item_diff(mcq, 2, 3)
    assert [f.name for f in diff.fields] == ["correct"]
    assert [e.change for e in diff.sections[0].entries] == ["unchanged", "changed", "added"]


def test_mcq_restore_brings_back_fields_options_and_moments(mcq, people):
    content_restore(item=mcq, to_version=2, user=people["admin"], reason="admin_revert:2")
    mcq.refresh_from_db()
    assert mcq.version == 4 and mcq.options == ["Red", "Green"] and mcq.correct_index == 0
    assert list(mcq.moments.values_list("time_s", flat=True)) == [12.5]
    assert not item_diff(mcq, 2, 4).changed


# --- the relations of a chain pair ---------------------------------------------------------------------------


def test_chain_pair_links_at_each_version_diff_and_restore(project, people):
    video = factories.VideoFactory(project=project)
    pair = factories.ChainPairFactory(chain_before=factories.QAChainFactory(clip=factories.ClipFactory(video=video)))
    before = factories.QAPairFactory(chain=pair.chain_before, index=0)
    after = factories.QAPairFactory(chain=pair.chain_after, index=0)
    link = relation_add(
        chain_pair=pair,
        from_pair_id=before.pk,
        to_pair_id=after.pk,
        relation_type="action",
        expected_version=1,
        user=people["annotator"],
    )
    relation_remove(relation=link, expected_version=2, user=people["annotator"])
    pair.refresh_from_db()
    assert item_kind(pair) == CHAIN_PAIR
    assert [len(v.content["links"]) for v in item_versions(pair)] == [0, 1, 0]
    assert set(LINK_FIELDS) <= set(item_content_at(pair, 2)["links"][0])
    assert [e.change for e in item_diff(pair, 2, 3).sections[0].entries] == ["removed"]

    restored = content_restore(item=pair, to_version=2, user=people["admin"], reason="admin_revert:2")
    assert restored.warnings == []
    back = Relation.objects.get(chain_pair=pair)
    assert (back.pk, back.relation_type) == (link.pk, "action")
    pair.refresh_from_db()
    assert pair.version == 4 and not item_diff(pair, 2, 4).changed
