"""QA chain services: versions, conflicts, reorder, undo, validation, editability, the name hint."""

import pytest

from annotator.chains import (
    ChainInvalid,
    ChainNotEditable,
    NothingToUndo,
    chain_content_at,
    chain_save,
    chain_submit,
    chain_undo,
    proper_name_hints,
)
from annotator.concurrency import StaleVersion
from annotator.models import ItemStatus, QAChain, QAPair, Relation, ReviewEvent
from tests import factories

pytestmark = pytest.mark.django_db


def turns(chain):
    return [(p.question, p.answer, p.skill) for p in chain.pairs.order_by("index")]


def payload(chain):
    return [
        {"id": p.pk, "question": p.question, "answer": p.answer, "skill": p.skill}
        for p in chain.pairs.order_by("index")
    ]


@pytest.fixture
def chain(project):
    chain = factories.QAChainFactory(clip__video__project=project, clip__index=0, status=ItemStatus.DRAFT)
    QAPair.objects.bulk_create(
        QAPair(chain=chain, index=i, question=f"Q{i}?", answer=f"A{i}.", skill="ECA") for i in range(3)
    )
    return chain


def test_save_edits_adds_deletes_and_reorders_in_one_version(chain, people):
    p0, p1, p2 = chain.pairs.order_by("index")
    saved = chain_save(
        chain=chain,
        expected_version=1,
        pairs=[
            {"id": p2.pk, "question": "Q2 moved first?", "answer": "A2.", "skill": "II"},
            {"id": None, "question": " New? ", "answer": " Yes. ", "skill": ""},
            {"id": p0.pk, "question": "Q0?", "answer": "A0.", "skill": "ECA"},
        ],
        user=people["annotator"],
    )
    chain.refresh_from_db()
    assert chain.version == 2 and saved.chain.version == 2
    assert turns(chain) == [("Q2 moved first?", "A2.", "II"), ("New?", "Yes.", ""), ("Q0?", "A0.", "ECA")]
    assert list(chain.pairs.order_by("index").values_list("index", flat=True)) == [0, 1, 2]
    assert not QAPair.objects.filter(pk=p1.pk).exists()
    # The pairs that stayed keep their ids, so their relations stay with them.
    assert chain.pairs.get(index=0).pk == p2.pk and chain.pairs.get(index=2).pk == p0.pk
    # First human save: the draft becomes "annotating", logged, authored, marked human-edited.
    assert chain.status == ItemStatus.ANNOTATING and chain.human_edited and chain.author == people["annotator"]
    event = ReviewEvent.objects.get(qa_chain=chain)
    assert (event.from_status, event.to_status, event.actor) == ("draft", "annotating", people["annotator"])
    assert any("No skill tagged on turn 2" in w for w in saved.warnings)


def test_swapping_two_turns_is_one_save(chain, people):
    rows = payload(chain)
    rows[0], rows[1] = rows[1], rows[0]
    chain_save(chain=chain, expected_version=1, pairs=rows, user=people["annotator"])
    assert [q for q, _, _ in turns(chain)] == ["Q1?", "Q0?", "Q2?"]


def test_stale_save_conflicts_and_changes_nothing(chain, people):
    rows = payload(chain)
    rows[0]["question"] = "Mine?"
    chain_save(chain=chain, expected_version=1, pairs=rows, user=people["annotator"])
    theirs = payload(chain)
    theirs[1]["question"] = "Theirs?"
    with pytest.raises(StaleVersion) as excinfo:
        chain_save(chain=chain, expected_version=1, pairs=theirs, user=people["admin"])
    assert excinfo.value.item.version == 2
    chain.refresh_from_db()
    assert chain.version == 2
    assert [q for q, _, _ in turns(chain)] == ["Mine?", "Q1?", "Q2?"]


@pytest.mark.parametrize(
    "rows, message",
    [
        ([{"id": None, "question": "  ", "answer": "A.", "skill": "ECA"}], "Turn 1 needs a question"),
        ([{"id": None, "question": "Q?", "answer": "", "skill": "ECA"}], "Turn 1 needs an answer"),
        ([{"id": None, "question": "Q?", "answer": "A.", "skill": "XYZ"}], "'XYZ' is not one of this project's skills"),
        ([{"id": 999999, "question": "Q?", "answer": "A.", "skill": ""}], "no longer in this chain"),
        ([{"id": None, "question": "Q" * 4001, "answer": "A.", "skill": ""}], "longer than 4000"),
        ("not a list", "must be sent as a list"),
        ([["Q?", "A."]], "is not a question and answer"),
    ],
)
def test_invalid_turns_are_refused_with_a_message_and_nothing_saved(chain, people, rows, message):
    before = turns(chain)
    with pytest.raises(ChainInvalid, match=message):
        chain_save(chain=chain, expected_version=1, pairs=rows, user=people["annotator"])
    chain.refresh_from_db()
    assert chain.version == 1 and chain.status == ItemStatus.DRAFT and turns(chain) == before


def test_a_pair_of_another_chain_cannot_be_claimed(chain, people):
    other = factories.QAPairFactory(chain__clip__index=5)
    with pytest.raises(ChainInvalid, match="no longer in this chain"):
        chain_save(chain=chain, expected_version=1, pairs=[{"id": other.pk, "question": "Q", "answer": "A"}], user=None)
    other.refresh_from_db()
    assert other.question.startswith("What happens")


def test_turn_count_outside_the_range_is_a_warning_not_an_error(chain, people):
    saved = chain_save(chain=chain, expected_version=1, pairs=payload(chain)[:1], user=people["annotator"])
    assert saved.warnings == ["This project asks for 5–6 turns per chain; this one has 1."]
    assert chain.pairs.count() == 1


@pytest.mark.parametrize(
    "status", [ItemStatus.SUBMITTED, ItemStatus.EXAMINING, ItemStatus.FLAGGED, ItemStatus.ACCEPTED]
)
def test_only_editable_chains_can_be_saved(chain, people, status):
    QAChain.objects.filter(pk=chain.pk).update(status=status)
    chain.refresh_from_db()
    with pytest.raises(ChainNotEditable, match="can be edited only while"):
        chain_save(chain=chain, expected_version=1, pairs=payload(chain), user=people["annotator"])
    with pytest.raises(ChainNotEditable):
        chain_undo(chain=chain, expected_version=1, user=people["annotator"])
    chain.refresh_from_db()
    assert chain.version == 1


def test_revising_chain_is_editable_and_stays_revising(chain, people):
    QAChain.objects.filter(pk=chain.pk).update(status=ItemStatus.REVISING)
    chain.refresh_from_db()
    chain_save(chain=chain, expected_version=1, pairs=payload(chain)[:2], user=people["reviser"])
    chain.refresh_from_db()
    assert chain.status == ItemStatus.REVISING and chain.version == 2


def test_undo_walks_back_through_versions_and_keeps_pair_ids(chain, people):
    user = people["annotator"]
    v1 = turns(chain)
    ids = [p.pk for p in chain.pairs.order_by("index")]
    rows = payload(chain)
    rows[0]["question"] = "Edited?"
    chain_save(chain=chain, expected_version=1, pairs=rows, user=user)  # v2
    v2 = turns(chain)
    chain_save(chain=chain, expected_version=2, pairs=payload(chain)[1:], user=user)  # v3: turn 1 deleted
    assert chain.pairs.count() == 2

    saved = chain_undo(chain=chain, user=user, expected_version=3)  # v4 = content of v2
    assert saved.restored_version == 2 and saved.chain.version == 4
    assert turns(chain) == v2
    assert [p.pk for p in chain.pairs.order_by("index")] == ids  # the deleted pair came back with its id

    saved = chain_undo(chain=chain, user=user, expected_version=4)  # v5 = content of v1
    assert saved.restored_version == 1 and turns(chain) == v1

    with pytest.raises(NothingToUndo):
        chain_undo(chain=chain, user=user, expected_version=5)
    with pytest.raises(StaleVersion):
        chain_undo(chain=chain, user=user, expected_version=4)


def test_undo_of_a_machine_draft_loaded_at_a_later_version_uses_the_machine_draft(project, people):
    # As load_demo and machine drafts write it: the chain row at version 2, pairs by bulk_create.
    chain = factories.QAChainFactory(
        clip__video__project=project,
        clip__index=0,
        version=2,
        status=ItemStatus.ANNOTATING,
        machine_draft={"pairs": [{"question": "Machine Q?", "answer": "Machine A.", "skill": "II"}]},
    )
    pair = QAPair.objects.create(chain=chain, index=0, question="Human Q?", answer="Human A.", skill="ECA")
    saved = chain_undo(chain=chain, user=people["annotator"], expected_version=2)
    assert saved.restored_version == 1
    assert turns(chain) == [("Machine Q?", "Machine A.", "II")]
    assert chain.pairs.get().pk == pair.pk


def test_undo_brings_back_the_links_of_a_deleted_turn(chain, people):
    user = people["annotator"]
    pair = chain.pairs.get(index=0)
    cp = factories.ChainPairFactory(chain_before=chain)
    later = factories.QAPairFactory(chain=cp.chain_after, index=0)
    Relation.objects.create(chain_pair=cp, from_pair=pair, to_pair=later, relation_type="event", rationale="why")
    chain_save(chain=chain, expected_version=1, pairs=payload(chain)[1:], user=user)
    assert not Relation.objects.exists()
    chain_undo(chain=chain, user=user, expected_version=2)
    relation = Relation.objects.get()
    assert (relation.from_pair_id, relation.to_pair_id, relation.rationale) == (pair.pk, later.pk, "why")


def test_content_at_a_version_is_what_was_saved(chain, people):
    rows = payload(chain)
    rows[2]["answer"] = "Changed."
    chain_save(chain=chain, expected_version=1, pairs=rows, user=people["annotator"])
    chain_save(chain=chain, expected_version=2, pairs=payload(chain)[:1], user=people["annotator"])
    assert [r["answer"] for r in chain_content_at(chain=chain, version=1)] == ["A0.", "A1.", "A2."]
    assert [r["answer"] for r in chain_content_at(chain=chain, version=2)] == ["A0.", "A1.", "Changed."]
    assert [r["answer"] for r in chain_content_at(chain=chain, version=3)] == ["A0."]


def test_submit_checks_version_and_content(chain, people):
    with pytest.raises(StaleVersion):
        chain_submit(chain=chain, user=people["annotator"], expected_version=7)
    chain_submit(chain=chain, user=people["annotator"], expected_version=1)
    chain.refresh_from_db()
    assert chain.status == ItemStatus.SUBMITTED and chain.submitted_at
    assert chain.author == people["annotator"]  # a draft submitted as it stands: the submitter vouches for it
    with pytest.raises(ChainNotEditable):
        chain_submit(chain=chain, user=people["annotator"], expected_version=1)


def test_an_empty_chain_cannot_be_submitted(project, people):
    chain = factories.QAChainFactory(clip__video__project=project, clip__index=0)
    with pytest.raises(ChainInvalid, match="at least one turn"):
        chain_submit(chain=chain, user=people["annotator"], expected_version=1)
    chain.refresh_from_db()
    assert chain.status == ItemStatus.ANNOTATING


# --- the proper-name hint ----------------------------------------------------------------------


def hints(*questions_answers, skill_words=frozenset()):
    return proper_name_hints(turns=list(questions_answers), skill_words=set(skill_words))


def test_a_name_repeated_in_a_later_question_gets_a_hint():
    assert hints(
        ("What is on screen while Mara greets the viewers?", "A test card."),
        ("Why is she showing it?", "The camera is warming up."),
        ("What does Mara cook today?", "Pasta."),
        ("Mara's pan: what is in it?", "Sauce."),  # sentence-initial and possessive still count
    ) == {2: ["Mara"], 3: ["Mara"]}


def test_a_name_introduced_in_an_answer_counts_too():
    assert hints(("Who is cooking?", "Her friend Lukas is."), ("What does Lukas chop?", "Onions.")) == {1: ["Lukas"]}


def test_sentence_initial_words_skill_words_and_common_capitals_are_not_names():
    assert (
        hints(
            ("What happens? Then what?", "Nothing."),
            ("What happens next on Sunday?", "It ends in Intention Inference terms."),
            ("Why does she wait until Sunday? What is the Intention here?", "Later, I think."),
            skill_words={"Intention", "Inference"},
        )
        == {}
    )


def test_acronyms_and_names_only_in_answers_give_no_hint():
    assert (
        hints(
            ("What is on the TV screen?", "A show about Rome."),
            ("What is shown on the TV now?", "The Colosseum in Rome."),
        )
        == {}
    )


def test_a_name_used_only_in_the_first_turn_gives_no_hint():
    assert hints(("Where does Mara stand, and where does Mara look?", "At the stove."), ("Why?", "To cook.")) == {}


# --- a chain written by hand -------------------------------------------------------------------


def test_create_writes_a_human_chain_being_annotated_with_its_turns(project, people):
    from annotator.chains import chain_create

    clip = factories.ClipFactory(video__project=project, index=0)
    rows = [{"question": f" Q{i}? ", "answer": f"A{i}.", "skill": "ECA"} for i in range(2)]
    saved = chain_create(clip=clip, user=people["annotator"], turns=rows)
    chain = saved.chain
    assert (chain.status, chain.origin, chain.version, chain.author) == (
        ItemStatus.ANNOTATING,
        "human",
        1,
        people["annotator"],
    )
    assert chain.project == project and chain.human_edited
    assert turns(chain) == [("Q0?", "A0.", "ECA"), ("Q1?", "A1.", "ECA")]
    assert saved.warnings  # fewer turns than the project asks for: said, not refused
    event = ReviewEvent.objects.get(qa_chain=chain)
    assert (event.from_status, event.to_status, event.actor) == ("draft", "annotating", people["annotator"])
    # Version 1 is recorded, so the first save of it can be undone back to these turns.
    assert [t["question"] for t in chain_content_at(chain=chain, version=1)] == ["Q0?", "Q1?"]


def test_create_refuses_a_second_chain_and_invalid_turns_writing_nothing(project, people, chain):
    from annotator.chains import ChainExists, chain_create

    with pytest.raises(ChainExists) as refused:
        chain_create(clip=chain.clip, user=people["annotator"], turns=[])
    assert refused.value.details == {"chain_id": chain.pk}
    clip = factories.ClipFactory(video=chain.clip.video, index=1)
    with pytest.raises(ChainInvalid):
        chain_create(clip=clip, user=people["annotator"], turns=[{"question": "", "answer": "A.", "skill": ""}])
    assert not QAChain.objects.filter(clip=clip).exists()


def test_common_words_in_mixed_language_text_are_not_names():
    assert (
        hints(
            ("视频里 The man 在做什么？What is he holding?", "他拿着 A cup。"),
            ("视频里 The man 为什么笑？这时 What happens?", "因为 The dog 跳了。"),
            ("那么 The dog 在哪里？", "在 The kitchen。"),
        )
        == {}
    )


def test_a_name_written_against_chinese_text_is_still_found_when_it_repeats():
    assert hints(("视频中Tom在做什么？", "他在做饭。"), ("然后Tom去了哪里？", "厨房。")) == {1: ["Tom"]}
