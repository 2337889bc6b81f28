"""Examiners' verdicts, revisers' start, admins' reopen, and the reviser's list (reviewer.examination)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.lifecycle import item_history, item_transition
from annotator.models import ItemStatus, ReviewEvent
from projects.models import Role
from reviewer.examination import (
    CHECKLISTS,
    REASON_REOPEN,
    ReopenRefused,
    RevisionRefused,
    VerdictRefused,
    examine_next_item,
    item_reopen,
    reason_label,
    revise_next_item,
    revision_list,
    revision_start,
    verdict_submit,
)
from reviewer.models import Assignment, AssignmentStatus, ExamVerdict
from reviewer.queues import queue_claim_next
from tests import factories

pytestmark = pytest.mark.django_db

S = ItemStatus


def _submitted(item, minutes_ago: int = 5):
    type(item).objects.filter(pk=item.pk).update(submitted_at=timezone.now() - timedelta(minutes=minutes_ago))
    item.refresh_from_db()
    return item


def _mcq(project, people, status=S.SCORED, **kwargs):
    kwargs.setdefault("author", people["annotator"])
    mcq = factories.MCQFactory(project=project, status=status, **kwargs)
    return _submitted(mcq)


def _chain(project, people, status=S.SCORED):
    chain = factories.QAChainFactory(clip__video__project=project, status=status, author=people["annotator"])
    return _submitted(chain)


def _pair(project, people, status=S.SCORED):
    pair = factories.ChainPairFactory(
        chain_before__clip__video__project=project, status=status, author=people["annotator"]
    )
    return _submitted(pair)


def _examiner(project, name):
    user = factories.UserFactory(username=name)
    factories.MembershipFactory(project=project, user=user, role=Role.EXAMINER)
    return user


def _statuses(item):
    return [(e.from_status, e.to_status) for e in item_history(item=item)]


# --- pass and flag -----------------------------------------------------------------------------------


def test_a_pass_accepts_a_scored_item_and_logs_both_moves(project, people):
    mcq = _mcq(project, people)
    outcome = verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[], expected_version=1)
    mcq.refresh_from_db()
    assert mcq.status == S.ACCEPTED and mcq.accepted_at is not None
    assert outcome.decided and outcome.status == S.ACCEPTED and outcome.message == "Passed: the item is accepted."
    assert _statuses(mcq) == [(S.SCORED, S.EXAMINING), (S.EXAMINING, S.ACCEPTED)]
    assert {e.actor for e in item_history(item=mcq)} == {people["examiner"]}
    verdict = ExamVerdict.objects.get()
    assert verdict.passed and verdict.mcq == mcq and verdict.round_started_at == mcq.submitted_at
    assert verdict.item_version == 1 and verdict.queue is None and verdict.assignment is None
    assert verdict.checklist == {code: True for code, _ in CHECKLISTS["mcq"]}


def test_a_flag_needs_a_reason_from_the_checklist(project, people):
    mcq = _mcq(project, people)
    with pytest.raises(VerdictRefused, match="at least one reason") as excinfo:
        verdict_submit(item=mcq, examiner=people["examiner"], passed=False, reasons=[])
    assert excinfo.value.code == "no_reason"
    with pytest.raises(VerdictRefused, match="Unknown reason wrong_vibe") as excinfo:
        verdict_submit(item=mcq, examiner=people["examiner"], passed=False, reasons=["wrong_vibe"])
    assert excinfo.value.code == "unknown_reason"
    with pytest.raises(VerdictRefused, match="say what in the comment"):
        verdict_submit(item=mcq, examiner=people["examiner"], passed=False, reasons=["other"])
    with pytest.raises(VerdictRefused, match="A pass cannot leave checks failing"):
        verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=["category_right"])
    with pytest.raises(VerdictRefused, match="A pass cannot leave checks failing"):
        verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[], checklist={"one_correct": False})
    with pytest.raises(VerdictRefused, match="Ticked as fine and named as a reason"):
        verdict_submit(
            item=mcq,
            examiner=people["examiner"],
            passed=False,
            reasons=["one_correct"],
            checklist={"one_correct": True},
        )
    mcq.refresh_from_db()
    assert mcq.status == S.SCORED and not ExamVerdict.objects.exists() and not ReviewEvent.objects.exists()


def test_a_flag_sends_the_item_to_revision_with_its_reasons_and_comment(project, people):
    chain = _chain(project, people)
    outcome = verdict_submit(
        item=chain,
        examiner=people["examiner"],
        passed=False,
        reasons=["no_duplicates", "coherent_pronouns"],
        comment="Turn 3 repeats turn 1 and names the chef again.",
        checklist={"no_duplicates": False, "coherent_pronouns": False, "skills_right": True},
    )
    chain.refresh_from_db()
    assert chain.status == S.FLAGGED and outcome.status == S.FLAGGED
    event = item_history(item=chain)[-1]
    # Reasons in the checklist's order, whatever order they came in.
    assert event.reasons == ["coherent_pronouns", "no_duplicates"]
    assert event.comment == "Turn 3 repeats turn 1 and names the chef again."
    verdict = ExamVerdict.objects.get()
    assert verdict.checklist["no_duplicates"] is False and verdict.checklist["answers_grounded"] is True
    assert outcome.message == "Flagged: the item goes to a reviser with 2 reasons."


def test_the_author_never_examines_their_own_item_nor_does_a_reviser(project, people):
    mcq = _mcq(project, people, author=people["admin"])
    with pytest.raises(VerdictRefused, match="You wrote this item") as excinfo:
        verdict_submit(item=mcq, examiner=people["admin"], passed=True, reasons=[])
    assert excinfo.value.code == "not_allowed"
    with pytest.raises(VerdictRefused, match="does not include examining"):
        verdict_submit(item=mcq, examiner=people["reviser"], passed=True, reasons=[])
    mcq.refresh_from_db()
    assert mcq.status == S.SCORED and not ExamVerdict.objects.exists()


def test_only_items_waiting_for_an_examiner_take_a_verdict(project, people):
    for status in (S.ANNOTATING, S.FLAGGED, S.ACCEPTED, S.REVISING):
        mcq = _mcq(project, people, status=status)
        with pytest.raises(VerdictRefused) as excinfo:
            verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[])
        assert excinfo.value.code == "not_examinable"
    decided = _mcq(project, people, status=S.ACCEPTED)
    with pytest.raises(VerdictRefused, match="decided already"):
        verdict_submit(item=decided, examiner=people["examiner"], passed=True, reasons=[])
    # A submitted chain waits for the judge while the gate covers chains; with the gate off it is examined.
    chain = _chain(project, people, status=S.SUBMITTED)
    with pytest.raises(VerdictRefused, match="not waiting for an examiner"):
        verdict_submit(item=chain, examiner=people["examiner"], passed=True, reasons=[])
    project.judge_enabled = False
    project.save()
    chain = type(chain).objects.get(pk=chain.pk)
    verdict_submit(item=chain, examiner=people["examiner"], passed=True, reasons=[])
    chain.refresh_from_db()
    assert chain.status == S.ACCEPTED
    assert _statuses(chain) == [(S.SUBMITTED, S.EXAMINING), (S.EXAMINING, S.ACCEPTED)]


def test_a_stale_view_is_refused_and_nothing_is_recorded(project, people):
    mcq = _mcq(project, people)
    type(mcq).objects.filter(pk=mcq.pk).update(version=3)
    with pytest.raises(VerdictRefused, match="changed to version 3 after you opened version 2") as excinfo:
        verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[], expected_version=2)
    assert excinfo.value.code == "stale"
    mcq.refresh_from_db()
    assert mcq.status == S.SCORED and not ExamVerdict.objects.exists() and not ReviewEvent.objects.exists()


def test_one_verdict_per_examiner_and_round_and_a_resubmitted_item_is_judged_afresh(project, people):
    queue = factories.ReviewQueueFactory(project=project, overlap=2, members=[people["examiner"]])
    mcq = _mcq(project, people)
    lease = queue_claim_next(queue=queue, user=people["examiner"])
    first = verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[])
    assert first.status == S.EXAMINING and first.waiting_for == 1
    with pytest.raises(VerdictRefused, match="already gave your verdict") as excinfo:
        verdict_submit(item=mcq, examiner=people["examiner"], passed=False, reasons=["category_right"])
    assert excinfo.value.code == "already"
    assert ExamVerdict.objects.count() == 1
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.COMPLETED

    # A second examiner flags: flagged; revised and resubmitted, the first examiner judges the new round.
    second = _examiner(project, "second")
    verdict_submit(item=mcq, examiner=second, passed=False, reasons=["one_correct"], comment="B is right too.")
    item_transition(item=mcq, to_status=S.REVISING, actor=people["reviser"])
    item_transition(item=mcq, to_status=S.SUBMITTED, actor=people["reviser"])
    item_transition(item=mcq, to_status=S.SCORED)
    mcq.refresh_from_db()
    again = verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[])
    assert (
        again.verdict.round_started_at == mcq.submitted_at
        and again.verdict.round_started_at != first.verdict.round_started_at
    )


def test_overlap_two_waits_for_the_second_verdict_and_any_flag_flags_with_every_reason(project, people):
    ex1, ex2 = _examiner(project, "ex1"), _examiner(project, "ex2")
    queue = factories.ReviewQueueFactory(project=project, overlap=2, members=[ex1, ex2], lease_seconds=600)
    mcq = _mcq(project, people)
    lease1 = queue_claim_next(queue=queue, user=ex1)
    lease2 = queue_claim_next(queue=queue, user=ex2)
    assert lease1.mcq == lease2.mcq == mcq

    first = verdict_submit(
        item=mcq, examiner=ex1, passed=False, reasons=["options_plausible"], comment="Option C is absurd."
    )
    assert not first.decided and first.status == S.EXAMINING and first.required == 2
    assert first.message == "Your flag is recorded; waiting for 1 more examiner."
    mcq.refresh_from_db()
    assert mcq.status == S.EXAMINING

    second = verdict_submit(
        item=mcq,
        examiner=ex2,
        passed=False,
        reasons=["category_right", "options_plausible"],
        comment="It is E2O, not S2E.",
    )
    assert second.decided and second.status == S.FLAGGED and second.given == 2
    event = item_history(item=mcq)[-1]
    assert event.to_status == S.FLAGGED and event.actor == ex2
    assert event.reasons == ["category_right", "options_plausible"]
    assert event.comment == "Option C is absurd.\n\nIt is E2O, not S2E."
    verdicts = list(ExamVerdict.objects.order_by("pk"))
    assert [(v.examiner, v.queue, v.assignment_id) for v in verdicts] == [
        (ex1, queue, lease1.pk),
        (ex2, queue, lease2.pk),
    ]
    assert set(Assignment.objects.values_list("status", flat=True)) == {AssignmentStatus.COMPLETED}


def test_overlap_two_with_two_passes_accepts(project, people):
    ex1, ex2 = _examiner(project, "ex1"), _examiner(project, "ex2")
    queue = factories.ReviewQueueFactory(project=project, overlap=2, members=[ex1, ex2])
    chain = _chain(project, people)
    queue.item_kind = "qa_chain"
    queue.save()
    queue_claim_next(queue=queue, user=ex1)
    assert verdict_submit(item=chain, examiner=ex1, passed=True, reasons=[]).status == S.EXAMINING
    # The second examiner came without a lease: the first one's queue still asks for two verdicts.
    outcome = verdict_submit(item=chain, examiner=ex2, passed=True, reasons=[])
    assert outcome.status == S.ACCEPTED and outcome.message == "Your pass is recorded: the item is accepted."


def test_a_verdict_completes_only_the_examiners_own_lease_at_the_examining_stage(project, people):
    queue = factories.ReviewQueueFactory(project=project, members=[people["examiner"]])
    mcq = _mcq(project, people)
    lease = queue_claim_next(queue=queue, user=people["examiner"])
    other = factories.AssignmentFactory(item=mcq, assignee=people["admin"], queue=queue)
    revising_lease = factories.AssignmentFactory(item=mcq, assignee=people["examiner"], stage=S.REVISING)
    outcome = verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[], seconds_spent=42)
    lease.refresh_from_db()
    other.refresh_from_db()
    revising_lease.refresh_from_db()
    assert lease.status == AssignmentStatus.COMPLETED and lease.completed_at is not None
    assert other.status == revising_lease.status == AssignmentStatus.ACTIVE
    assert outcome.verdict.assignment == lease and outcome.verdict.queue == queue
    assert outcome.verdict.seconds_spent == 42


def test_reason_labels_come_from_the_checklist():
    assert reason_label("mcq", "moments_stamped") == "Every referred moment is stamped"
    assert reason_label("chain_pair", "needs_earlier_clip").startswith("Each accepted relation really needs")
    assert reason_label("mcq", REASON_REOPEN) == "Reopened by an admin"
    assert reason_label("mcq", "something_new") == "something new"
    for checks in CHECKLISTS.values():
        assert len(checks) <= 9 and len({c for c, _ in checks}) == len(checks)  # keys 1–9, distinct codes


# --- revision and reopening ------------------------------------------------------------------------------


def test_revision_start_moves_a_flagged_item_once(project, people):
    mcq = _mcq(project, people, status=S.FLAGGED)
    started = revision_start(item=mcq, reviser=people["reviser"])
    mcq.refresh_from_db()
    assert mcq.status == S.REVISING and not started.already and started.transition.event.actor == people["reviser"]
    again = revision_start(item=mcq, reviser=people["reviser"])
    assert again.already and ReviewEvent.objects.filter(to_status=S.REVISING).count() == 1


def test_revision_start_refusals(project, people):
    mcq = _mcq(project, people, status=S.FLAGGED)
    with pytest.raises(RevisionRefused, match="does not include revising") as excinfo:
        revision_start(item=mcq, reviser=people["annotator"])
    assert excinfo.value.code == "not_allowed"
    type(mcq).objects.filter(pk=mcq.pk).update(author=people["reviser"])
    mcq.refresh_from_db()
    with pytest.raises(RevisionRefused, match="You wrote this item"):
        revision_start(item=mcq, reviser=people["reviser"])
    with pytest.raises(RevisionRefused, match="does not include revising"):
        revision_start(item=mcq, reviser=people["examiner"])
    scored = _mcq(project, people, status=S.SCORED)
    with pytest.raises(RevisionRefused, match="only a flagged item") as excinfo:
        revision_start(item=scored, reviser=people["reviser"])
    assert excinfo.value.code == "not_flagged"
    assert not ReviewEvent.objects.exists()


def test_only_an_admin_reopens_accepted_work_with_a_comment_and_it_is_logged(project, people):
    mcq = _mcq(project, people, status=S.ACCEPTED)
    for user in (people["examiner"], people["reviser"], people["annotator"]):
        with pytest.raises(ReopenRefused, match="Only a project admin") as excinfo:
            item_reopen(item=mcq, by=user, comment="Wrong answer.")
        assert excinfo.value.code == "not_allowed"
    with pytest.raises(ReopenRefused, match="Say why"):
        item_reopen(item=mcq, by=people["admin"], comment="  ")
    assert not ReviewEvent.objects.exists()

    moved = item_reopen(item=mcq, by=people["admin"], comment="The correct option is B, not A.")
    mcq.refresh_from_db()
    assert mcq.status == S.REVISING
    event = moved.event
    assert (event.from_status, event.to_status, event.actor) == (S.ACCEPTED, S.REVISING, people["admin"])
    assert event.reasons == [REASON_REOPEN] and event.comment == "The correct option is B, not A."
    with pytest.raises(ReopenRefused, match="not accepted"):
        item_reopen(item=mcq, by=people["admin"], comment="again")


# --- next items --------------------------------------------------------------------------------------------


def test_next_item_claims_from_examining_queues_or_falls_back_to_the_oldest_free_item(project, people):
    older = _mcq(project, people)
    _submitted(older, minutes_ago=50)
    newer = _mcq(project, people)
    mine = factories.MCQFactory(project=project, status=S.SCORED, author=people["examiner"])
    _submitted(mine, minutes_ago=90)
    # No examining queue: the oldest item the examiner did not write and nobody else holds.
    factories.AssignmentFactory(item=older, assignee=people["admin"])
    item, lease = examine_next_item(project=project, user=people["examiner"])
    assert (item, lease) == (newer, None)
    # In a queue: a lease from it (the other person's lease on the older item takes its only slot).
    queue = factories.ReviewQueueFactory(project=project, members=[people["examiner"]])
    item, lease = examine_next_item(project=project, user=people["examiner"])
    assert item == newer and lease.queue == queue and lease.assignee == people["examiner"]
    assert examine_next_item(project=project, user=people["examiner"]) == (None, None)


def test_next_item_without_queues_is_the_oldest_of_every_kind(project, people):
    chain = _chain(project, people)
    mcq = _submitted(_mcq(project, people), minutes_ago=60)
    assert chain.pk and examine_next_item(project=project, user=people["examiner"]) == (mcq, None)
    flagged_chain = _chain(project, people, status=S.FLAGGED)
    flagged_mcq = _mcq(project, people, status=S.FLAGGED)
    type(flagged_chain).objects.filter(pk=flagged_chain.pk).update(updated_at=timezone.now())
    type(flagged_mcq).objects.filter(pk=flagged_mcq.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    assert revise_next_item(project=project, user=people["reviser"]) == (flagged_mcq, None)


def test_revise_next_item_gives_the_oldest_flagged_item_not_the_revisers_own(project, people):
    own = factories.MCQFactory(project=project, status=S.FLAGGED, author=people["reviser"])
    flagged = _mcq(project, people, status=S.FLAGGED)
    assert own.pk < flagged.pk
    item, lease = revise_next_item(project=project, user=people["reviser"])
    assert (item, lease) == (flagged, None)


# --- the reviser's list ------------------------------------------------------------------------------------


def _flag(item, examiner, reasons, comment=""):
    return verdict_submit(item=item, examiner=examiner, passed=False, reasons=reasons, comment=comment)


def _build_revision_work(project, people, n: int):
    """n flagged items of each kind, with judge scores; one MCQ reopened, one in revision."""
    items = []
    for i in range(n):
        mcq = _mcq(project, people)
        factories.QualityScoreFactory(item=mcq, overall=80, comments="Distractors are weak.")
        _flag(mcq, people["examiner"], ["options_plausible"], comment=f"Option C gives it away ({i}).")
        chain = _chain(project, people)
        factories.QualityScoreFactory(item=chain, overall=70, comments="Names repeat.")
        factories.QualityScoreFactory(item=chain, overall=95, comments="Fine now.")
        _flag(chain, people["examiner"], ["coherent_pronouns"])
        pair = _pair(project, people)
        _flag(pair, people["examiner"], ["relation_type_right", "follows_guideline"])
        items += [mcq, chain, pair]
    return items


def test_revision_list_shows_why_each_item_came_back(project, people):
    mcq, chain, pair = _build_revision_work(project, people, 1)
    accepted = _mcq(project, people, status=S.ACCEPTED)
    item_reopen(item=accepted, by=people["admin"], comment="Moment 2 is at the wrong time.")
    revision_start(item=chain, reviser=people["reviser"])
    judged_back = _chain(project, people, status=S.SUBMITTED)
    item_transition(item=judged_back, to_status=S.REVISING)  # the judge's: its author's to fix, not listed
    own = factories.MCQFactory(project=project, status=S.FLAGGED, author=people["reviser"])
    factories.AssignmentFactory(item=pair, assignee=people["admin"], stage=S.REVISING)

    listing = revision_list(project=project, user=people["reviser"])
    rows = {(r.kind, r.item.pk): r for r in listing.rows}
    assert set(rows) == {("mcq", mcq.pk), ("qa_chain", chain.pk), ("chain_pair", pair.pk), ("mcq", accepted.pk)}
    assert ("mcq", own.pk) not in rows and not listing.truncated
    assert [r.status for r in listing.rows][:2] == [S.FLAGGED, S.FLAGGED]  # flagged first

    row = rows[("mcq", mcq.pk)]
    assert row.reasons == ["The distractors are plausible: no option gives the answer away"]
    assert row.comment == "Option C gives it away (0)." and row.sent_by == people["examiner"]
    assert [(f.examiner, f.comment) for f in row.flags] == [(people["examiner"], "Option C gives it away (0).")]
    assert row.judge.comments == "Distractors are weak." and row.editor_url == f"/p/{project.slug}/mcqs/{mcq.pk}/"

    row = rows[("qa_chain", chain.pk)]
    assert row.status == S.REVISING and row.reviser == people["reviser"]
    assert row.judge.comments == "Names repeat."  # the latest *failing* score
    assert rows[("chain_pair", pair.pk)].holder == people["admin"]
    assert len(rows[("chain_pair", pair.pk)].reasons) == 2

    row = rows[("mcq", accepted.pk)]
    assert row.reopened and row.reasons == ["Reopened by an admin"] and row.sent_by == people["admin"]
    assert row.comment == "Moment 2 is at the wrong time." and row.flags == []


def test_revision_list_reads_a_fixed_number_of_queries(project, people, django_assert_num_queries):
    _build_revision_work(project, people, 1)
    reviser = people["reviser"]
    revision_list(project=project, user=reviser)  # warm the roles cache of nothing: the list asks no roles
    with django_assert_num_queries(7) as few:
        few_rows = revision_list(project=project, user=reviser).rows
    _build_revision_work(project, people, 3)
    with django_assert_num_queries(len(few.captured_queries)):
        many_rows = revision_list(project=project, user=reviser).rows
    assert len(few_rows) == 3 and len(many_rows) == 12
    for row in many_rows:  # what the page reads is loaded
        assert row.item.project == project and row.sent_by is not None


def test_revision_list_is_empty_without_work(project, people, django_assert_max_num_queries):
    with django_assert_max_num_queries(3):
        assert revision_list(project=project, user=people["reviser"]).rows == []


def test_an_admin_revert_during_revision_keeps_the_item_on_the_list(project, people):
    mcq = _mcq(project, people)
    _flag(mcq, people["examiner"], ["category_right"], comment="It is O2E.")
    revision_start(item=mcq, reviser=people["reviser"])
    # item_revert logs a move that stays in revising: it is not how the item got there.
    ReviewEvent.objects.create(
        project=project,
        mcq=mcq,
        item_kind="mcq",
        actor=people["admin"],
        from_status=S.REVISING,
        to_status=S.REVISING,
        reasons=["admin_revert:1"],
    )
    (row,) = revision_list(project=project, user=people["reviser"]).rows
    assert row.item == mcq and row.reviser == people["reviser"] and row.comment == "It is O2E."
