"""Relation services: decide, add, retype, rewrite the later QA (original kept), remove, submit."""

import pytest

from annotator.chains import chain_save, chain_undo
from annotator.concurrency import StaleVersion
from annotator.models import ChainPair, ItemStatus, Origin, QAChain, QAPair, Relation, RelationDecision
from annotator.relations import (
    ChainPairNotEditable,
    RelationInvalid,
    chain_pair_submit,
    relation_add,
    relation_decide,
    relation_remove,
    relation_retype,
    relation_rewrite,
)
from tests import factories

pytestmark = pytest.mark.django_db

A, R, C = RelationDecision.ACCEPTED, RelationDecision.REJECTED, RelationDecision.CANDIDATE


@pytest.fixture
def cp(project):
    chain = factories.QAChainFactory(clip__video__project=project, clip__index=0, status=ItemStatus.ACCEPTED)
    cp = factories.ChainPairFactory(chain_before=chain, status=ItemStatus.DRAFT)
    QAChain.objects.filter(pk=cp.chain_after_id).update(status=ItemStatus.ACCEPTED)
    for c in (cp.chain_before, cp.chain_after):
        QAPair.objects.bulk_create(
            QAPair(chain=c, index=i, question=f"{c.pk} Q{i}?", answer=f"{c.pk} A{i}.", skill="ECA") for i in range(2)
        )
    return cp


def ends(cp, i, j):
    return cp.chain_before.pairs.get(index=i), cp.chain_after.pairs.get(index=j)


def candidate(cp, i=0, j=0, **kw):
    a, b = ends(cp, i, j)
    return Relation.objects.create(
        chain_pair=cp, from_pair=a, to_pair=b, relation_type="event", rationale="same pan", **kw
    )


def version(item):
    item.refresh_from_db()
    return item.version


def test_accept_with_rewrite_changes_the_later_pair_and_keeps_the_original(cp, people):
    user = people["annotator"]
    rel = candidate(cp)
    later = rel.to_pair
    original = (later.question, later.answer)
    after_version = version(cp.chain_after)

    relation_rewrite(relation=rel, question="Since the pan, what?", answer="Sauce.", expected_version=1, user=user)
    rel.refresh_from_db()
    later.refresh_from_db()
    # A candidate's rewrite waits for the decision.
    assert (later.question, later.answer) == original
    assert (rel.original_question, rel.original_answer) == original
    assert (rel.rewritten_question, rel.rewritten_answer) == ("Since the pan, what?", "Sauce.")

    relation_decide(relation=rel, decision=A, expected_version=2, user=user)
    later.refresh_from_db()
    assert (later.question, later.answer) == ("Since the pan, what?", "Sauce.")
    # The later chain moved on a version, so an editor open on the old text conflicts.
    assert version(cp.chain_after) == after_version + 1
    cp.refresh_from_db()
    assert cp.version == 3 and cp.status == ItemStatus.ANNOTATING and cp.author == user

    # Editing the rewrite of an accepted link applies at once; the original stays the first text.
    relation_rewrite(relation=rel, question="Now what?", answer="More sauce.", expected_version=3, user=user)
    later.refresh_from_db()
    rel.refresh_from_db()
    assert (later.question, later.answer) == ("Now what?", "More sauce.")
    assert (rel.original_question, rel.original_answer) == original

    # Rejecting puts the original back.
    relation_decide(relation=rel, decision=R, expected_version=4, user=user)
    later.refresh_from_db()
    assert (later.question, later.answer) == original
    rel.refresh_from_db()
    assert rel.rewritten_question == "Now what?"  # the rewrite is kept on the link, not lost


def test_withdrawing_never_overwrites_a_later_hand_edit(cp, people):
    user = people["annotator"]
    rel = candidate(cp)
    relation_rewrite(relation=rel, question="RQ?", answer="RA.", expected_version=1, user=user)
    relation_decide(relation=rel, decision=A, expected_version=2, user=user)
    QAPair.objects.filter(pk=rel.to_pair_id).update(question="Hand edited?")
    relation_decide(relation=rel, decision=R, expected_version=3, user=user)
    assert QAPair.objects.get(pk=rel.to_pair_id).question == "Hand edited?"


def test_clearing_the_rewrite_of_an_accepted_link_restores_the_original(cp, people):
    user = people["annotator"]
    rel = candidate(cp)
    original = rel.to_pair.question
    relation_rewrite(relation=rel, question="RQ?", answer="RA.", expected_version=1, user=user)
    relation_decide(relation=rel, decision=A, expected_version=2, user=user)
    relation_rewrite(relation=rel, question="", answer="", expected_version=3, user=user)
    assert QAPair.objects.get(pk=rel.to_pair_id).question == original


def test_a_rewrite_is_undoable_in_the_chain_editor(cp, people):
    user = people["annotator"]
    rel = candidate(cp)
    original = rel.to_pair.question
    relation_rewrite(relation=rel, question="RQ?", answer="RA.", expected_version=1, user=user)
    relation_decide(relation=rel, decision=A, expected_version=2, user=user)
    chain = QAChain.objects.get(pk=cp.chain_after_id)
    QAChain.objects.filter(pk=chain.pk).update(status=ItemStatus.REVISING)
    chain_undo(chain=chain, user=user, expected_version=chain.version)
    assert QAPair.objects.get(pk=rel.to_pair_id).question == original


def test_rewrite_needs_both_texts(cp, people):
    rel = candidate(cp)
    with pytest.raises(RelationInvalid, match="both the question and the answer"):
        relation_rewrite(relation=rel, question="Only Q?", answer=" ", expected_version=1, user=people["annotator"])
    assert version(cp) == 1


def test_add_link_validates_ends_type_and_duplicates(cp, people):
    user = people["annotator"]
    a, b = ends(cp, 1, 0)
    with pytest.raises(RelationInvalid, match="not a relation type"):
        relation_add(
            chain_pair=cp, from_pair_id=a.pk, to_pair_id=b.pk, relation_type="vibes", expected_version=1, user=user
        )
    with pytest.raises(RelationInvalid, match="earlier turn"):
        relation_add(
            chain_pair=cp, from_pair_id=b.pk, to_pair_id=b.pk, relation_type="action", expected_version=1, user=user
        )
    with pytest.raises(RelationInvalid, match="later turn"):
        relation_add(
            chain_pair=cp, from_pair_id=a.pk, to_pair_id=a.pk, relation_type="action", expected_version=1, user=user
        )
    assert version(cp) == 1

    rel = relation_add(
        chain_pair=cp,
        from_pair_id=a.pk,
        to_pair_id=b.pk,
        relation_type="person",
        rationale=" she ",
        expected_version=1,
        user=user,
    )
    assert (rel.origin, rel.decision, rel.relation_type, rel.rationale) == (Origin.HUMAN, A, "person", "she")
    with pytest.raises(RelationInvalid, match="already linked"):
        relation_add(
            chain_pair=cp, from_pair_id=a.pk, to_pair_id=b.pk, relation_type="action", expected_version=2, user=user
        )

    relation_retype(relation=rel, relation_type="object", expected_version=2, user=user)
    rel.refresh_from_db()
    assert rel.relation_type == "object"
    relation_remove(relation=rel, expected_version=3, user=user)
    assert not Relation.objects.filter(pk=rel.pk).exists()


def test_machine_candidates_are_rejected_not_removed(cp, people):
    rel = candidate(cp)
    with pytest.raises(RelationInvalid, match="rejected, not removed"):
        relation_remove(relation=rel, expected_version=1, user=people["annotator"])
    assert Relation.objects.filter(pk=rel.pk).exists()


def test_stale_version_and_non_editable_pairs_are_refused(cp, people):
    user = people["annotator"]
    rel = candidate(cp)
    relation_decide(relation=rel, decision=A, expected_version=1, user=user)
    with pytest.raises(StaleVersion) as excinfo:
        relation_decide(relation=rel, decision=R, expected_version=1, user=people["admin"])
    assert excinfo.value.item.version == 2
    rel.refresh_from_db()
    assert rel.decision == A

    ChainPair.objects.filter(pk=cp.pk).update(status=ItemStatus.EXAMINING)
    with pytest.raises(ChainPairNotEditable, match="can change only while"):
        relation_decide(relation=rel, decision=R, expected_version=2, user=user)


def test_a_link_whose_turn_was_deleted_gives_a_clear_message(cp, people):
    rel = candidate(cp)
    chain = QAChain.objects.get(pk=cp.chain_after_id)
    QAChain.objects.filter(pk=chain.pk).update(status=ItemStatus.REVISING)
    keep = chain.pairs.get(index=1)
    chain_save(
        chain=chain,
        expected_version=chain.version,
        pairs=[{"id": keep.pk, "question": keep.question, "answer": keep.answer, "skill": ""}],
        user=people["annotator"],
    )
    with pytest.raises(RelationInvalid, match="no longer there"):
        relation_decide(relation=rel, decision=A, expected_version=1, user=people["annotator"])


def test_unknown_decision_is_refused(cp, people):
    rel = candidate(cp)
    with pytest.raises(RelationInvalid, match="not a decision"):
        relation_decide(relation=rel, decision="maybe", expected_version=1, user=people["annotator"])


def test_submit_needs_every_candidate_decided(cp, people):
    user = people["annotator"]
    first = candidate(cp, 0, 0)
    candidate(cp, 1, 1)
    with pytest.raises(RelationInvalid, match="2 links are still a candidate"):
        chain_pair_submit(chain_pair=cp, user=user, expected_version=1)
    relation_decide(relation=first, decision=A, expected_version=1, user=user)
    with pytest.raises(RelationInvalid, match="1 link is still a candidate"):
        chain_pair_submit(chain_pair=cp, user=user, expected_version=2)
    with pytest.raises(StaleVersion):
        chain_pair_submit(chain_pair=cp, user=user, expected_version=1)
    relation_decide(relation=Relation.objects.get(decision=C), decision=R, expected_version=2, user=user)
    chain_pair_submit(chain_pair=cp, user=user, expected_version=3)
    cp.refresh_from_db()
    assert cp.status == ItemStatus.EXAMINING  # links skip the LLM judge unless the project's gate covers them
