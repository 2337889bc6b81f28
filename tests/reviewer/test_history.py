"""Content history: versions rebuilt from simple-history rows, word-level diffs, machine drafts, admin revert."""

import pytest
from django.core.exceptions import PermissionDenied

from annotator.chains import chain_save
from annotator.concurrency import StaleVersion
from annotator.lifecycle import item_transition
from annotator.mcqs import mcq_create, mcq_save
from annotator.models import ItemStatus, Origin, QAChain, QAPair, Relation, ReviewEvent, VideoRole
from annotator.relations import chain_pair_submit, relation_add, relation_remove
from annotator.versions import (
    REASON_REVERT,
    VersionUnknown,
    content_diff,
    item_content_at,
    item_diff,
    item_versions,
    word_diff,
)
from reviewer.history import RevertRefused, diff_against_machine_draft, item_history_versions, item_revert
from tests import factories

pytestmark = pytest.mark.django_db

DRAFT = [("Who enters the kitchen?", "A chef in a white coat."), ("What does she pick up?", "A red pan.")]
DRAFT += [("Where does she put it?", "On the stove.")]


def texts(content):
    return [(t["question"], t["answer"]) for t in content["turns"]]


def rows(chain):
    return [
        {"id": p.pk, "question": p.question, "answer": p.answer, "skill": p.skill}
        for p in chain.pairs.order_by("index")
    ]


def save(chain, user, turns):
    chain.refresh_from_db()
    return chain_save(chain=chain, expected_version=chain.version, pairs=turns, user=user)


@pytest.fixture
def chain(project):
    """A machine draft as the drafting step makes it: pairs bulk-created, without history rows."""
    chain = factories.QAChainFactory(
        clip__video__project=project,
        clip__index=0,
        status=ItemStatus.DRAFT,
        origin=Origin.MACHINE,
        machine_draft={"pairs": [{"question": q, "answer": a, "skill": "ECA"} for q, a in DRAFT]},
    )
    QAPair.objects.bulk_create(
        QAPair(chain=chain, index=i, question=q, answer=a, skill="ECA") for i, (q, a) in enumerate(DRAFT)
    )
    return chain


@pytest.fixture
def edited(chain, people):
    """v2 edits turn 2, v3 adds a turn, v4 deletes turn 1, v5 moves the last turn first."""
    annotator = people["annotator"]
    turns = rows(chain)
    turns[1]["answer"] = "A heavy red pan."
    save(chain, annotator, turns)
    save(chain, annotator, [*rows(chain), {"id": None, "question": "Why does she wait?", "answer": "It heats up."}])
    save(chain, annotator, rows(chain)[1:])
    turns = rows(chain)
    save(chain, people["admin"], [turns[-1], *turns[:-1]])
    chain.refresh_from_db()
    return chain


# --- versions --------------------------------------------------------------------------------------------


def test_every_saved_version_is_listed_with_who_and_its_content(edited, people):
    versions = item_versions(edited)
    assert [v.version for v in versions] == [1, 2, 3, 4, 5]
    assert [v.user for v in versions[1:]] == [people["annotator"]] * 3 + [people["admin"]]
    assert versions[-1].current and not versions[0].current
    assert all(a.at <= b.at for a, b in zip(versions, versions[1:], strict=False))
    assert texts(versions[0].content) == DRAFT
    assert texts(versions[1].content)[1] == ("What does she pick up?", "A heavy red pan.")
    assert texts(versions[2].content)[3] == ("Why does she wait?", "It heats up.")
    assert [q for q, _ in texts(versions[3].content)] == [DRAFT[1][0], DRAFT[2][0], "Why does she wait?"]
    assert [q for q, _ in texts(versions[4].content)] == ["Why does she wait?", DRAFT[1][0], DRAFT[2][0]]
    # The current version is the live rows, and version 1 is what the machine proposed.
    assert texts(versions[4].content) == [(p.question, p.answer) for p in edited.pairs.order_by("index")]
    assert item_content_at(edited, 2) == versions[1].content


def test_status_changes_are_not_content_versions(chain, people):
    save(chain, people["annotator"], rows(chain))
    chain.refresh_from_db()
    item_transition(item=chain, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    item_transition(item=chain, to_status=ItemStatus.REVISING, actor=None)
    chain.refresh_from_db()
    versions = item_versions(chain)
    assert [v.version for v in versions] == [1, 2] and versions[-1].status == ItemStatus.REVISING


def test_an_unrecorded_version_says_so(edited):
    with pytest.raises(VersionUnknown, match="Version 9"):
        item_content_at(edited, 9)


# --- diffs ------------------------------------------------------------------------------------------------


def test_word_diff_marks_words_and_joins_back_to_both_texts():
    ops = word_diff("The red pan is hot.", "The heavy red pan is very hot!")
    assert ops == [
        ("equal", "The"),
        ("insert", " heavy"),
        ("equal", " red pan is"),
        ("insert", " very"),
        ("equal", " hot"),
        ("delete", "."),
        ("insert", "!"),
    ]
    assert "".join(t for op, t in ops if op != "insert") == "The red pan is hot."
    assert "".join(t for op, t in ops if op != "delete") == "The heavy red pan is very hot!"


def test_word_diff_splits_chinese_into_characters():
    assert word_diff("她拿起红色的锅", "她拿起蓝色的锅") == [
        ("equal", "她拿起"),
        ("delete", "红"),
        ("insert", "蓝"),
        ("equal", "色的锅"),
    ]


def by_label(section):
    return {e.label: e for e in section.entries}


def test_an_edit_is_a_word_level_change_of_one_turn(edited):
    diff = item_diff(edited, 1, 2)
    (turns,) = diff.sections
    assert [e.change for e in turns.entries] == ["unchanged", "changed", "unchanged"]
    answer = next(f for f in turns.entries[1].fields if f.name == "answer")
    assert answer.words == (("equal", "A"), ("insert", " heavy"), ("equal", " red pan.")), answer.words
    assert answer.old == "A red pan." and answer.new == "A heavy red pan."
    assert diff.summary == "1 turn changed"


def test_added_and_deleted_turns(edited):
    added = item_diff(edited, 2, 3).sections[0]
    assert [(e.label, e.change) for e in added.entries][-1] == ("Turn 4", "added")
    removed = item_diff(edited, 3, 4).sections[0]
    assert [(e.change, e.moved) for e in removed.entries] == [("removed", False)] + [("unchanged", False)] * 3
    assert removed.entries[0].fields[0].old == DRAFT[0][0]


def test_a_reorder_marks_only_the_turn_that_moved(edited):
    diff = item_diff(edited, 4, 5)
    entries = diff.sections[0].entries
    assert [(e.label, e.change, e.moved) for e in entries] == [
        ("Turn 1", "unchanged", True),
        ("Turn 2", "unchanged", False),
        ("Turn 3", "unchanged", False),
    ]
    assert entries[0].old_position == 3 and diff.summary == "1 turn moved"


def test_a_diff_across_many_versions_and_backwards(edited):
    forward = item_diff(edited, 1, 5)
    changes = sorted((e.change, e.moved) for e in forward.sections[0].entries)
    assert changes == [("added", False), ("changed", False), ("removed", False), ("unchanged", False)]
    backward = item_diff(edited, 5, 1)
    assert sorted(e.change for e in backward.sections[0].entries) == ["added", "changed", "removed", "unchanged"]


def test_the_history_page_lists_versions_newest_first_with_their_diffs(edited):
    entries = item_history_versions(edited)
    assert [e.version.version for e in entries] == [5, 4, 3, 2, 1]
    assert entries[-1].diff is None and entries[0].diff.summary == "1 turn moved"
    assert len(item_history_versions(edited, limit=2)) == 2


def test_the_machine_draft_diff_shows_what_people_changed(edited):
    diff = diff_against_machine_draft(edited)
    assert diff.old_label == "machine draft"
    entries = diff.sections[0].entries
    assert sorted(e.change for e in entries) == ["added", "changed", "removed", "unchanged"]
    changed = next(e for e in entries if e.change == "changed")
    assert next(f for f in changed.fields if f.name == "answer").new == "A heavy red pan."


def test_a_chain_a_person_started_has_no_machine_draft(project):
    chain = factories.QAChainFactory(clip__video__project=project, origin=Origin.HUMAN)
    assert diff_against_machine_draft(chain) is None


def test_machine_draft_turns_without_ids_are_aligned_by_their_text():
    draft = {"turns": [{"id": None, "question": q, "answer": a, "skill": ""} for q, a in DRAFT]}
    now = {"turns": [{"id": 7, "question": DRAFT[1][0], "answer": DRAFT[1][1], "skill": ""}]}
    entries = content_diff("qa_chain", draft, now).sections[0].entries
    assert [(e.change, e.old_position, e.new_position) for e in entries] == [
        ("removed", 1, None),
        ("unchanged", 2, 1),
        ("removed", 3, None),
    ]


# --- MCQs -------------------------------------------------------------------------------------------------


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, name="kitchen", duration_s=60.0, fps=25.0)


def mcq_fields(video, **overrides):
    values = {
        "question": "When the chef lifts the pan, what colour is the sauce?",
        "referring_start": 0,
        "referring_end": 27,
        "options": ["Red", "Green", "Brown", "White"],
        "correct_index": 0,
        "category": "E2O",
        "videos": [{"video_id": video.pk, "role": "main", "order": 0}],
        "moments": [{"video_id": video.pk, "time_s": 12.5, "frame_index": 0}],
    }
    return values | overrides


def mcq_edit(mcq, user, video, **overrides):
    mcq.refresh_from_db()
    return mcq_save(mcq=mcq, expected_version=mcq.version, user=user, **mcq_fields(video, **overrides)).mcq


@pytest.fixture
def mcq(project, video, people):
    mcq = mcq_create(project=project, videos=[(video, VideoRole.MAIN)], user=people["annotator"])
    mcq_edit(mcq, people["annotator"], video)
    mcq_edit(
        mcq,
        people["annotator"],
        video,
        options=["Red", "Dark green", "Brown", "White", "Black"],
        correct_index=2,
        moments=[
            {"video_id": video.pk, "time_s": 12.5, "frame_index": 0},
            {"video_id": video.pk, "time_s": 30.0, "frame_index": 0},
        ],
    )
    mcq.refresh_from_db()
    return mcq


def test_mcq_option_changes_the_correct_option_and_moments(mcq):
    assert [v.version for v in item_versions(mcq)] == [1, 2, 3]
    diff = item_diff(mcq, 2, 3)
    assert [(f.label, f.old, f.new) for f in diff.fields] == [("Correct option", "A: Red", "C: Brown")]
    options = by_label(diff.sections[0])
    assert options["Option B"].change == "changed"
    assert options["Option B"].fields[0].words == (("delete", "Green"), ("insert", "Dark green"))
    assert options["Option E"].change == "added" and options["Option A"].change == "unchanged"
    moments = diff.sections[2].entries
    assert [(e.label, e.change) for e in moments] == [
        ("12.5 s · frame 312", "unchanged"),
        ("30 s · frame 750", "added"),
    ]
    assert "1 option changed; 1 option added" in diff.summary and "1 moment added" in diff.summary


def test_an_mcq_video_change_is_shown_by_name(mcq, people, video, project):
    other = factories.VideoFactory(project=project, name="garden", duration_s=60.0, fps=25.0)
    mcq_edit(
        mcq,
        people["annotator"],
        video,
        videos=[{"video_id": other.pk, "role": "main", "order": 0}],
        moments=[{"video_id": other.pk, "time_s": 2.0, "frame_index": 0}],
    )
    mcq.refresh_from_db()
    videos = item_diff(mcq, 3, 4).sections[1]
    assert [(e.label, e.change) for e in videos.entries] == [("kitchen", "removed"), ("garden", "added")]


def test_mcq_machine_draft_diff(project, people, video):
    draft = {
        "question": "When the red box appears, what moves?",
        "referring_query": "When the red box appears",
        "answer": "The white box",
        "moments": [1.0],
    }
    mcq = factories.MCQFactory(
        project=project, status=ItemStatus.DRAFT, origin=Origin.MACHINE, video=video, machine_draft=draft
    )
    mcq_edit(mcq, people["annotator"], video, question="When the red box appears, what moves across?")
    mcq.refresh_from_db()
    diff = diff_against_machine_draft(mcq)
    fields = {f.name: f for f in diff.fields}
    assert fields["question"].words[-2:] == (("insert", " across"), ("equal", "?"))
    assert fields["correct"].old == "(answer) The white box" and fields["correct"].new == "A: Red"
    assert [e.change for e in diff.sections[0].entries] == ["added"] * 4
    (moment,) = diff.sections[2].entries  # drafted at 1 s, stamped at 12.5 s
    assert moment.change == "changed" and moment.fields[0].old == 1.0 and moment.fields[0].new == 12.5


# --- revert -----------------------------------------------------------------------------------------------


def test_revert_restores_a_version_as_a_new_one_and_logs_it(edited, people):
    deleted_id = item_content_at(edited, 3)["turns"][0]["id"]
    result = item_revert(item=edited, to_version=2, user=people["admin"], expected_version=5)

    assert (result.version, result.restored_version) == (6, 2)
    edited.refresh_from_db()
    assert edited.version == 6 and edited.status == ItemStatus.ANNOTATING
    assert texts(item_content_at(edited, 6)) == texts(item_content_at(edited, 2))
    assert QAPair.objects.filter(pk=deleted_id, chain=edited).exists()  # the deleted turn is back with its id
    event = result.event
    assert (event.actor, event.reasons, event.from_status, event.to_status, event.item_version) == (
        people["admin"],
        [REASON_REVERT],
        ItemStatus.ANNOTATING,
        ItemStatus.ANNOTATING,
        6,
    )
    assert "version 2" in event.comment
    versions = item_versions(edited)
    assert [v.version for v in versions] == [1, 2, 3, 4, 5, 6]
    assert versions[-1].user == people["admin"] and versions[-1].reason_labels == ["admin revert to version 2"]
    # Older versions are still rebuilt as they were.
    assert [q for q, _ in texts(item_content_at(edited, 5))][0] == "Why does she wait?"
    assert not item_diff(edited, 2, 6).changed


def test_reverting_accepted_work_keeps_it_accepted_and_logs_it(edited, people):
    for status in (ItemStatus.SUBMITTED, ItemStatus.EXAMINING, ItemStatus.ACCEPTED):
        item_transition(item=edited, to_status=status, actor=people["examiner"])
    edited.refresh_from_db()
    result = item_revert(item=edited, to_version=1, user=people["admin"])
    edited.refresh_from_db()
    assert edited.status == ItemStatus.ACCEPTED and texts(item_content_at(edited, edited.version)) == DRAFT
    assert ReviewEvent.objects.filter(qa_chain=edited, reasons=[REASON_REVERT]).get() == result.event


@pytest.mark.parametrize("who", ["annotator", "examiner", "reviser", "outsider"])
def test_only_admins_revert(edited, people, who):
    with pytest.raises(PermissionDenied):
        item_revert(item=edited, to_version=2, user=people[who])
    edited.refresh_from_db()
    assert edited.version == 5 and not ReviewEvent.objects.filter(reasons=[REASON_REVERT]).exists()


def test_pointless_or_stale_reverts_are_refused(edited, people):
    with pytest.raises(RevertRefused, match="current version"):
        item_revert(item=edited, to_version=5, user=people["admin"])
    with pytest.raises(RevertRefused, match="left no record"):
        item_revert(item=edited, to_version=42, user=people["admin"])
    with pytest.raises(StaleVersion):
        item_revert(item=edited, to_version=2, user=people["admin"], expected_version=4)
    # Version 6 restores version 2; going back to 2 again would change nothing.
    item_revert(item=edited, to_version=2, user=people["admin"])
    with pytest.raises(RevertRefused, match="same content"):
        item_revert(item=edited, to_version=2, user=people["admin"])
    edited.refresh_from_db()
    assert edited.version == 6


def test_mcq_revert_restores_options_and_moments(mcq, people):
    result = item_revert(item=mcq, to_version=2, user=people["admin"])
    mcq.refresh_from_db()
    assert mcq.version == result.version == 4
    assert mcq.options == ["Red", "Green", "Brown", "White"] and mcq.correct_index == 0
    assert list(mcq.moments.values_list("time_s", flat=True)) == [12.5]
    assert not item_diff(mcq, 2, 4).changed


def test_chain_pair_links_are_versioned_and_revert(project, people):
    video = factories.VideoFactory(project=project)
    pair = factories.ChainPairFactory(chain_before=factories.QAChainFactory(clip=factories.ClipFactory(video=video)))
    before = factories.QAPairFactory(chain=pair.chain_before, index=0)
    after = factories.QAPairFactory(chain=pair.chain_after, index=0)
    factories.QAPairFactory(chain=pair.chain_after, index=1)
    annotator = people["annotator"]
    link = relation_add(
        chain_pair=pair,
        from_pair_id=before.pk,
        to_pair_id=after.pk,
        relation_type="action",
        expected_version=1,
        user=annotator,
    )
    chain_pair_submit(chain_pair=pair, user=annotator, expected_version=2)  # no judge for links: examining
    item_transition(item=pair, to_status=ItemStatus.FLAGGED, actor=people["examiner"])
    item_transition(item=pair, to_status=ItemStatus.REVISING, actor=people["reviser"])
    relation_remove(relation=link, expected_version=2, user=people["reviser"])
    pair.refresh_from_db()

    versions = item_versions(pair)
    assert [(v.version, len(v.content["links"])) for v in versions] == [(1, 0), (2, 1), (3, 0)]
    diff = item_diff(pair, 2, 3)
    assert [(e.label, e.change) for e in diff.sections[0].entries] == [("earlier turn 1 → later turn 1", "removed")]

    item_revert(item=pair, to_version=2, user=people["admin"])
    restored = Relation.objects.get(chain_pair=pair)
    assert (restored.pk, restored.relation_type, restored.decision) == (link.pk, "action", "accepted")
    pair.refresh_from_db()
    assert pair.status == ItemStatus.REVISING and pair.version == 4


def test_a_version_query_count_does_not_grow_with_versions(edited, people, django_assert_max_num_queries):
    for n in range(6):
        turns = rows(edited)
        turns[0]["answer"] = f"Answer {n}."
        save(edited, people["annotator"], turns)
    edited.refresh_from_db()
    with django_assert_max_num_queries(4):
        entries = item_history_versions(edited)
    assert len(entries) == 11
    assert QAChain.history.filter(id=edited.pk).count() >= 11
