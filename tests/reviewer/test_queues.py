from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from annotator.lifecycle import item_transition
from annotator.models import ItemStatus, ReviewEvent
from projects.models import Role
from reviewer import tasks
from reviewer.models import Assignment, AssignmentStatus
from reviewer.queues import (
    AssignRefused,
    ClaimRefused,
    LeaseError,
    assignment_complete,
    assignment_heartbeat,
    assignment_release,
    assignments_expire,
    item_url,
    project_claim_next,
    queue_assign_items,
    queue_claim_next,
    queue_create,
    queue_filters_clean,
    queue_item_rows,
    queue_items,
    queue_open_items,
    queue_reassign,
    queue_stats,
    queue_update,
)
from tests import factories

pytestmark = pytest.mark.django_db

S = ItemStatus
A = AssignmentStatus


def _examiner(project, name):
    user = factories.UserFactory(username=name)
    factories.MembershipFactory(project=project, user=user, role=Role.EXAMINER)
    return user


@pytest.fixture
def examiners(project):
    return [_examiner(project, f"ex{i}") for i in range(3)]


def _mcq(project, status=S.SCORED, age_min=0, **kwargs):
    """An MCQ submitted `age_min` minutes ago (older first in a queue)."""
    mcq = factories.MCQFactory(project=project, status=status, **kwargs)
    type(mcq).objects.filter(pk=mcq.pk).update(submitted_at=timezone.now() - timedelta(minutes=age_min))
    mcq.refresh_from_db()
    return mcq


def _queue(project, members, **kwargs):
    return factories.ReviewQueueFactory(project=project, members=members, **kwargs)


def _ids(qs):
    return sorted(qs.values_list("pk", flat=True))


# --- which items a queue holds ---------------------------------------------------------------------


def test_examining_queue_holds_items_ready_for_examiners(project, examiners):
    ready = [_mcq(project, s) for s in (S.SUBMITTED, S.SCORED, S.EXAMINING)]
    for status in (S.DRAFT, S.ANNOTATING, S.FLAGGED, S.REVISING, S.ACCEPTED):
        _mcq(project, status)
    _mcq(factories.ProjectFactory(), S.SCORED)  # another project's item
    queue = _queue(project, examiners)
    assert _ids(queue_items(queue)) == sorted(m.pk for m in ready)


def test_a_submitted_chain_waits_for_the_judge_unless_the_gate_is_off(project, examiners):
    submitted = factories.QAChainFactory(clip__video__project=project, status=S.SUBMITTED)
    scored = factories.QAChainFactory(clip__video__project=project, status=S.SCORED)
    queue = _queue(project, examiners, item_kind="qa_chain")
    assert _ids(queue_items(queue)) == [scored.pk]
    project.judge_enabled = False
    project.save()
    queue.refresh_from_db()
    assert _ids(queue_items(queue)) == sorted([submitted.pk, scored.pk])


def test_revising_queue_holds_flagged_items_not_those_the_judge_sent_back(project, people):
    flagged = _mcq(project, S.EXAMINING)
    item_transition(item=flagged, to_status=S.FLAGGED, actor=people["examiner"], reasons=["wrong category"])
    being_revised = _mcq(project, S.FLAGGED)
    item_transition(item=being_revised, to_status=S.REVISING, actor=people["reviser"])
    judged_back = factories.QAChainFactory(clip__video__project=project, status=S.SUBMITTED)
    item_transition(item=judged_back, to_status=S.REVISING)  # the judge's verdict: back to its author
    mcq_queue = _queue(project, [people["reviser"]], stage=S.REVISING)
    chain_queue = _queue(project, [people["reviser"]], stage=S.REVISING, item_kind="qa_chain")
    assert _ids(queue_items(mcq_queue)) == sorted([flagged.pk, being_revised.pk])
    assert _ids(queue_items(chain_queue)) == []


def test_an_admin_revert_while_revising_keeps_the_item_in_the_revising_queue(project, people):
    item = _mcq(project, S.FLAGGED)
    item_transition(item=item, to_status=S.REVISING, actor=people["reviser"])
    queue = _queue(project, [people["reviser"]], stage=S.REVISING)
    assert _ids(queue_items(queue)) == [item.pk]
    # A revert logs revising → revising; it says nothing about where the item came from.
    ReviewEvent.objects.create(
        project=project,
        actor=people["admin"],
        from_status=S.REVISING,
        to_status=S.REVISING,
        reasons=["revert"],
        **ReviewEvent.ref_for(item),
    )
    assert _ids(queue_items(queue)) == [item.pk]


def test_annotating_queue_passes_over_items_someone_else_is_writing(project, people):
    other = factories.UserFactory(username="writer")
    factories.MembershipFactory(project=project, user=other, role=Role.ANNOTATOR)
    draft = _mcq(project, S.DRAFT, age_min=1)
    started = _mcq(project, S.ANNOTATING, age_min=5, author=other)
    queue = _queue(project, [people["annotator"], other], stage=S.ANNOTATING)
    assert _ids(queue_items(queue)) == sorted([draft.pk, started.pk])
    assert queue_claim_next(queue=queue, user=people["annotator"]).mcq == draft
    assert queue_claim_next(queue=queue, user=people["annotator"]) is None
    assert queue_claim_next(queue=queue, user=other).mcq == started


def test_filters_category_duration_group_score_and_video_set(project, examiners):
    short = factories.VideoFactory(project=project, duration_s=50.0)  # group 60: (15, 60]
    long = factories.VideoFactory(project=project, duration_s=500.0)  # group 600: (180, 600]
    a = _mcq(project, category="E2O", video=short)
    b = _mcq(project, category="S2A", video=long)
    c = _mcq(project, category="E2O", video=long)
    queue = _queue(project, examiners, filters={"categories": ["E2O"]})
    assert _ids(queue_items(queue)) == sorted([a.pk, c.pk])
    queue.filters = {"duration_groups": [600]}
    assert _ids(queue_items(queue)) == sorted([b.pk, c.pk])
    queue.filters = {"categories": ["E2O"], "duration_groups": [60]}
    assert _ids(queue_items(queue)) == [a.pk]
    queue.filters = {"video_ids": [long.pk]}
    assert _ids(queue_items(queue)) == sorted([b.pk, c.pk])

    # Chains: the score is the latest judge's overall, and the duration is the clip's video's.
    chain_queue = _queue(project, examiners, item_kind="qa_chain")
    low = factories.QAChainFactory(clip__video=long, status=S.SCORED)
    high = factories.QAChainFactory(clip__video=short, status=S.SCORED)
    unscored = factories.QAChainFactory(clip__video=short, status=S.SCORED)
    factories.QualityScoreFactory(item=low, overall=95)
    factories.QualityScoreFactory(item=low, overall=91)  # the latest counts
    factories.QualityScoreFactory(item=high, overall=97)
    chain_queue.filters = {"score_min": 92}
    assert _ids(queue_items(chain_queue)) == [high.pk]
    chain_queue.filters = {"score_min": 90, "score_max": 96}
    assert _ids(queue_items(chain_queue)) == [low.pk]
    chain_queue.filters = {"duration_groups": [60]}
    assert _ids(queue_items(chain_queue)) == sorted([high.pk, unscored.pk])
    chain_queue.filters = {"video_ids": [long.pk], "score_max": 100}
    assert _ids(queue_items(chain_queue)) == [low.pk]


def test_queue_items_is_one_query_however_many_items_and_filters(project, examiners, django_assert_num_queries):
    video = factories.VideoFactory(project=project, duration_s=500.0)
    for i in range(6):
        _mcq(project, category="E2O", video=video, age_min=i)
    queue = _queue(
        project,
        examiners,
        filters={"categories": ["E2O"], "duration_groups": [600], "video_ids": [video.pk], "score_max": 100},
        overlap=2,
    )
    queue = type(queue).objects.select_related("project").get(pk=queue.pk)
    with django_assert_num_queries(1):
        assert len(list(queue_items(queue))) == 0  # no MCQ has a score yet
    queue.filters = {"categories": ["E2O"], "duration_groups": [600], "video_ids": [video.pk]}
    with django_assert_num_queries(1):
        assert len(list(queue_open_items(queue))) == 6


def test_filters_are_checked_with_messages_people_can_act_on(project):
    video = factories.VideoFactory(project=project)
    assert queue_filters_clean(
        filters={"categories": ["E2O", "E2O"], "duration_groups": ["600"], "video_ids": f"{video.pk}, {video.pk}"},
        project=project,
        item_kind="mcq",
    ) == {"categories": ["E2O"], "duration_groups": [600], "video_ids": [video.pk]}
    with pytest.raises(ValidationError) as excinfo:
        queue_filters_clean(
            filters={
                "categories": ["E2O"],
                "duration_groups": [42],
                "score_min": 95,
                "score_max": 80,
                "video_ids": [video.pk, 999999],
                "colour": "red",
            },
            project=project,
            item_kind="qa_chain",
        )
    errors = excinfo.value.message_dict
    assert errors["categories"] == ["Categories apply to MCQs only."]
    assert errors["duration_groups"] == ["No duration group 42 in this project; it has 15, 60, 600, 3600."]
    assert "95 is above 80" in errors["score_max"][0]
    assert errors["video_ids"] == ["No video 999999 in this project."]
    assert "Unknown filter(s) colour" in errors["filters"][0]
    with pytest.raises(ValidationError, match="from 0 to 100"):
        queue_filters_clean(filters={"score_min": 101}, project=project, item_kind="qa_chain")


# --- claim next ----------------------------------------------------------------------------------------


def test_claim_gives_the_oldest_item_with_a_lease_of_the_queues_length(project, examiners):
    newer = _mcq(project, age_min=1)
    older = _mcq(project, age_min=10)
    queue = _queue(project, examiners, lease_seconds=600)
    before = timezone.now()
    first = queue_claim_next(queue=queue, user=examiners[0])
    assert first.mcq == older and first.status == A.ACTIVE and first.stage == S.EXAMINING and first.queue == queue
    assert first.assignee == examiners[0] and first.assigned_by is None and first.project == project
    assert timedelta(seconds=599) < first.lease_expires_at - before < timedelta(seconds=601)
    assert queue_claim_next(queue=queue, user=examiners[1]).mcq == newer
    assert queue_claim_next(queue=queue, user=examiners[2]) is None  # overlap 1: both are taken


def test_a_claim_is_one_statement_and_a_lapsed_lease_gives_its_slot_up_in_it(
    project, examiners, django_assert_num_queries
):
    """On PostgreSQL: pick, recount under the lock, expire the lapsed lease and insert, in one round trip."""
    lapsed, fresh = _mcq(project, age_min=10), _mcq(project, age_min=1)
    queue = _queue(project, examiners, lease_seconds=600)
    old = queue_claim_next(queue=queue, user=examiners[0])
    assert old.mcq == lapsed
    later = timezone.now() + timedelta(seconds=601)  # its lease has lapsed by then
    with django_assert_num_queries(1):  # the role was read once for this person already
        taken = queue_claim_next(queue=queue, user=examiners[0], now=later)
    assert taken.mcq == fresh  # never the same item again to the same person in this round
    assert taken.item_object.pk == fresh.pk and taken.pk == Assignment.objects.get(mcq=fresh).pk
    queue_claim_next(queue=queue, user=examiners[1])  # warm the role cache: below, only the claim counts
    Assignment.objects.filter(assignee=examiners[1]).delete()
    with django_assert_num_queries(1):
        again = queue_claim_next(queue=queue, user=examiners[1], now=later)
    assert again.mcq == lapsed and again.lease_expires_at == later + timedelta(seconds=600)
    old.refresh_from_db()
    assert old.status == A.EXPIRED  # marked under the item's lock, by the claim that took its slot


@pytest.mark.django_db(transaction=True)  # claims run in autocommit, as in the app
def test_a_session_that_lost_its_prepared_claim_prepares_it_again(project, examiners, django_assert_num_queries):
    """The claim is prepared once per database session; a pooler's DISCARD ALL must not break it."""
    from django.db import connection

    first, second, third = _mcq(project, age_min=3), _mcq(project, age_min=2), _mcq(project, age_min=1)
    queue = _queue(project, examiners)
    assert queue_claim_next(queue=queue, user=examiners[0]).mcq == first  # prepares and runs it
    with django_assert_num_queries(1):  # prepared already: one round trip
        assert queue_claim_next(queue=queue, user=examiners[0]).mcq_id == second.pk
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    with django_assert_num_queries(3):  # the EXECUTE fails, PREPARE again, EXECUTE
        assert queue_claim_next(queue=queue, user=examiners[0]).mcq_id == third.pk
    assert queue_claim_next(queue=queue, user=examiners[0]) is None


def test_the_compiled_claim_keeps_a_queues_odd_values_as_values(project, examiners):
    """The queue's own values are written into the prepared claim: quotes and % stay data."""
    odd = "50%'s \\ %(now)s"
    wanted = _mcq(project, age_min=2, category=odd)
    _mcq(project, age_min=3, category="other")
    queue = _queue(project, examiners, filters={"categories": [odd]})
    assert queue_claim_next(queue=queue, user=examiners[0]).mcq == wanted
    assert queue_claim_next(queue=queue, user=examiners[0]) is None


def test_a_changed_queue_is_claimed_with_its_new_settings(project, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners, overlap=1)
    assert queue_claim_next(queue=queue, user=examiners[0]).mcq == item
    assert queue_claim_next(queue=queue, user=examiners[1]) is None
    queue.overlap = 2
    queue.save()
    assert queue_claim_next(queue=queue, user=examiners[1]).mcq == item


def test_overlap_two_gives_each_item_to_two_different_people_and_no_third(project, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners, overlap=2)
    a = queue_claim_next(queue=queue, user=examiners[0])
    assert a.mcq == item
    assert queue_claim_next(queue=queue, user=examiners[0]) is None  # never the same item twice to one person
    b = queue_claim_next(queue=queue, user=examiners[1])
    assert b.mcq == item
    assert queue_claim_next(queue=queue, user=examiners[2]) is None
    # A completed examination still takes its slot.
    assignment_complete(assignment=a, user=examiners[0])
    assert queue_claim_next(queue=queue, user=examiners[2]) is None
    assert Assignment.objects.filter(mcq=item).count() == 2


def test_nobody_claims_what_they_wrote(project, examiners):
    mine = _mcq(project, age_min=10, author=examiners[0])
    theirs = _mcq(project, age_min=1, author=examiners[1])
    queue = _queue(project, examiners)
    assert queue_claim_next(queue=queue, user=examiners[0]).mcq == theirs
    assert queue_claim_next(queue=queue, user=examiners[0]) is None
    assert queue_claim_next(queue=queue, user=examiners[1]).mcq == mine


def test_only_members_with_the_role_claim_from_an_active_queue(project, people, examiners):
    _mcq(project)
    queue = _queue(project, [examiners[0], people["annotator"]])
    with pytest.raises(ClaimRefused, match="not a member of the queue"):
        queue_claim_next(queue=queue, user=examiners[1])
    with pytest.raises(ClaimRefused, match="does not include examining"):
        queue_claim_next(queue=queue, user=people["annotator"])
    queue.is_active = False
    queue.save()
    with pytest.raises(ClaimRefused, match="is paused"):
        queue_claim_next(queue=queue, user=examiners[0])
    assert not Assignment.objects.exists()


def test_claim_next_across_queues_takes_the_highest_priority_first(project, people, examiners):
    chain = factories.QAChainFactory(clip__video__project=project, status=S.SCORED)
    mcq = _mcq(project)
    _queue(project, examiners, name="MCQs", priority=1)
    _queue(project, examiners, name="Chains", priority=5, item_kind="qa_chain")
    assert project_claim_next(project=project, user=examiners[0]).qa_chain == chain
    assert project_claim_next(project=project, user=examiners[0]).mcq == mcq
    assert project_claim_next(project=project, user=examiners[0]) is None
    assert project_claim_next(project=project, user=people["annotator"]) is None  # in no queue


def test_a_new_round_after_resubmission_is_examined_afresh(project, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners)
    first = queue_claim_next(queue=queue, user=examiners[0])
    assignment_complete(item=item, user=examiners[0], stage=S.EXAMINING)
    assert queue_claim_next(queue=queue, user=examiners[1]) is None
    # Flagged, revised and submitted again: the first examination belongs to the old round.
    type(item).objects.filter(pk=item.pk).update(submitted_at=timezone.now() + timedelta(seconds=1))
    second = queue_claim_next(queue=queue, user=examiners[0], now=timezone.now() + timedelta(seconds=2))
    assert second.mcq == item and second.pk != first.pk


# --- heartbeat, release, complete, expiry ---------------------------------------------------------------


def test_heartbeat_extends_the_lease_for_its_holder_only(project, examiners):
    _mcq(project)
    queue = _queue(project, examiners, lease_seconds=60)
    lease = queue_claim_next(queue=queue, user=examiners[0])
    later = timezone.now() + timedelta(seconds=50)
    assignment_heartbeat(assignment=lease, user=examiners[0], now=later)
    lease.refresh_from_db()
    assert lease.heartbeat_at == later and lease.lease_expires_at == later + timedelta(seconds=60)
    with pytest.raises(LeaseError, match="Only the person holding this lease") as excinfo:
        assignment_heartbeat(assignment=lease, user=examiners[1])
    assert excinfo.value.code == "not_holder"
    assignment_complete(assignment=lease, user=examiners[0])
    with pytest.raises(LeaseError, match="already completed") as excinfo:
        assignment_heartbeat(assignment=lease, user=examiners[0])
    assert excinfo.value.code == "not_active"


def test_a_lapsed_lease_frees_its_slot_and_cannot_be_renewed_once_taken(project, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners, lease_seconds=60)
    lapsed = queue_claim_next(queue=queue, user=examiners[0])
    later = timezone.now() + timedelta(seconds=61)
    assert queue_claim_next(queue=queue, user=examiners[2], now=later - timedelta(seconds=2)) is None
    taken = queue_claim_next(queue=queue, user=examiners[1], now=later)
    assert taken.mcq == item
    lapsed.refresh_from_db()
    assert lapsed.status == A.EXPIRED  # marked by the claim that took its slot
    with pytest.raises(LeaseError, match="expired") as excinfo:
        assignment_heartbeat(assignment=lapsed, user=examiners[0], now=later)
    assert excinfo.value.code == "lease_expired"


def test_a_lapsed_lease_nobody_took_is_renewed_by_its_heartbeat(project, examiners):
    _mcq(project)
    queue = _queue(project, examiners, lease_seconds=60)
    lease = queue_claim_next(queue=queue, user=examiners[0])
    later = timezone.now() + timedelta(seconds=90)
    assignment_heartbeat(assignment=lease, user=examiners[0], now=later)
    assert queue_claim_next(queue=queue, user=examiners[1], now=later + timedelta(seconds=1)) is None


def test_expiry_sweep_marks_lapsed_leases_and_their_items_return(project, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners, lease_seconds=60)
    lease = queue_claim_next(queue=queue, user=examiners[0])
    live = factories.AssignmentFactory(item=_mcq(project), assignee=examiners[1])
    later = timezone.now() + timedelta(seconds=61)
    assert assignments_expire(now=later) == 1
    assert assignments_expire(now=later) == 0  # idempotent
    lease.refresh_from_db()
    live.refresh_from_db()
    assert lease.status == A.EXPIRED and live.status == A.ACTIVE
    # The holder whose lease expired may take it again, like anyone else.
    assert queue_claim_next(queue=queue, user=examiners[0], now=later).mcq == item


def test_the_expire_task_calls_the_service(project, examiners):
    factories.AssignmentFactory(
        item=_mcq(project), assignee=examiners[0], leased_at=timezone.now() - timedelta(hours=2)
    )  # 30-minute lease, long gone
    assert tasks.expire_leases.run() == 1
    assert Assignment.objects.get().status == A.EXPIRED


def test_release_returns_the_item_but_not_to_the_same_person(project, people, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners)
    lease = queue_claim_next(queue=queue, user=examiners[0])
    with pytest.raises(LeaseError, match="or a project admin"):
        assignment_release(assignment=lease, user=examiners[1])
    assignment_release(assignment=lease, user=examiners[0])
    assert Assignment.objects.get(pk=lease.pk).status == A.RELEASED
    assert queue_claim_next(queue=queue, user=examiners[0]) is None  # a release is a "skip"
    again = queue_claim_next(queue=queue, user=examiners[1])
    assert again.mcq == item
    assignment_release(assignment=again, user=people["admin"])  # admins free anyone's lease
    with pytest.raises(LeaseError, match="already released"):
        assignment_release(assignment=again, user=examiners[1])


def test_complete_by_item_is_what_the_workflow_calls(project, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners, overlap=2)
    mine = queue_claim_next(queue=queue, user=examiners[0])
    theirs = queue_claim_next(queue=queue, user=examiners[1])
    assert assignment_complete(item=item, user=examiners[2], stage=S.EXAMINING) is None  # acted without a lease
    done = assignment_complete(item=item, user=examiners[0], stage=S.EXAMINING)
    assert done.pk == mine.pk and done.status == A.COMPLETED and done.completed_at
    assert Assignment.objects.get(pk=theirs.pk).status == A.ACTIVE
    with pytest.raises(LeaseError, match="Only the person holding"):
        assignment_complete(assignment=theirs, user=examiners[0])
    with pytest.raises(TypeError):
        assignment_complete(user=examiners[0])


# --- admin assignment ------------------------------------------------------------------------------------


def test_bulk_assign_assigns_what_it_may_and_says_why_not_for_the_rest(project, people, examiners):
    ok = _mcq(project, age_min=3)
    written = _mcq(project, author=examiners[0])
    full = _mcq(project)
    accepted = _mcq(project, S.ACCEPTED)
    foreign = _mcq(factories.ProjectFactory())
    queue = _queue(project, examiners)
    factories.AssignmentFactory(item=full, assignee=examiners[1])
    outcome = queue_assign_items(
        queue=queue, items=[ok, written, full, accepted, foreign.pk], assignee=examiners[0], by=people["admin"]
    )
    assert [a.mcq_id for a in outcome.assigned] == [ok.pk]
    assert outcome.assigned[0].assigned_by == people["admin"] and outcome.assigned[0].status == A.ACTIVE
    reasons = dict(outcome.refused)
    assert "reviewers never review their own work" in reasons[written.pk]
    assert reasons[full.pk] == "It already has 1 of 1 people."
    assert reasons[accepted.pk] == "Its status is accepted, not one waiting for examining."
    assert reasons[foreign.pk] == f"No MCQ {foreign.pk} in this project."
    again = queue_assign_items(queue=queue, items=[ok], assignee=examiners[0], by=people["admin"])
    assert again.refused == [(ok.pk, "ex0 already has it at this stage.")]


def test_assign_refuses_people_without_the_role_and_non_admins(project, people, examiners):
    item = _mcq(project)
    queue = _queue(project, examiners)
    with pytest.raises(AssignRefused, match="has no role for examining"):
        queue_assign_items(queue=queue, items=[item], assignee=people["annotator"], by=people["admin"])
    with pytest.raises(PermissionDenied):
        queue_assign_items(queue=queue, items=[item], assignee=examiners[0], by=examiners[1])
    assert not Assignment.objects.exists()


def test_reassign_moves_a_lease_and_releases_the_old_one(project, people, examiners):
    item = _mcq(project)
    written = _mcq(project, author=examiners[2])
    queue = _queue(project, examiners)
    lease = queue_assign_items(queue=queue, items=[item], assignee=examiners[0], by=people["admin"]).assigned[0]
    other = queue_assign_items(queue=queue, items=[written], assignee=examiners[1], by=people["admin"]).assigned[0]
    outcome = queue_reassign(queue=queue, assignments=[lease, other], assignee=examiners[2], by=people["admin"])
    assert [a.mcq_id for a in outcome.assigned] == [item.pk]
    assert [item_id for item_id, _ in outcome.refused] == [written.pk]
    assert Assignment.objects.get(pk=lease.pk).status == A.RELEASED
    assert Assignment.objects.get(pk=other.pk).status == A.ACTIVE  # stays with its holder
    assert Assignment.objects.filter(mcq=item, status=A.ACTIVE).get().assignee == examiners[2]


# --- queue settings, stats and pages' data ------------------------------------------------------------------


def test_queue_create_checks_members_names_and_filters(project, people, examiners):
    queue = queue_create(
        project=project,
        by=people["admin"],
        name=" Examine E2O ",
        stage=S.EXAMINING,
        item_kind="mcq",
        filters={"categories": ["E2O"]},
        members=examiners,
        overlap=2,
    )
    assert queue.name == "Examine E2O" and set(queue.members.all()) == set(examiners)
    with pytest.raises(ValidationError) as excinfo:
        queue_create(project=project, by=people["admin"], name="Examine E2O", stage=S.EXAMINING, item_kind="mcq")
    assert "already has a queue named" in excinfo.value.message_dict["name"][0]
    reviser = [people["reviser"]]
    with pytest.raises(ValidationError) as excinfo:
        queue_create(project=project, by=people["admin"], name="x", stage=S.EXAMINING, item_kind="mcq", members=reviser)
    assert "cannot work at the examining stage" in excinfo.value.message_dict["members"][0]
    with pytest.raises(ValidationError, match="at least 30 seconds"):
        queue_create(project=project, by=people["admin"], name="y", stage=S.EXAMINING, item_kind="mcq", lease_seconds=5)
    with pytest.raises(PermissionDenied):
        queue_create(project=project, by=examiners[0], name="z", stage=S.EXAMINING, item_kind="mcq")
    # Moving the queue to another stage checks its members against that stage.
    with pytest.raises(ValidationError, match="cannot work at the revising stage"):
        queue_update(queue=queue, by=people["admin"], stage=S.REVISING)
    queue_update(queue=queue, by=people["admin"], stage=S.REVISING, members=[people["reviser"]])
    queue.refresh_from_db()
    assert queue.stage == S.REVISING and list(queue.members.all()) == [people["reviser"]]


def test_queue_stats_count_depth_and_leases_in_a_fixed_number_of_queries(
    project, people, examiners, django_assert_num_queries
):
    items = [_mcq(project) for _ in range(4)]
    mcqs = _queue(project, examiners, name="MCQs", overlap=2)
    chains = _queue(project, examiners, name="Chains", item_kind="qa_chain")
    factories.QAChainFactory(clip__video__project=project, status=S.SCORED)
    queue_claim_next(queue=mcqs, user=examiners[0])
    queue_claim_next(queue=mcqs, user=examiners[1])  # item 0 is now full
    queue_claim_next(queue=mcqs, user=examiners[2])
    lapsed = factories.AssignmentFactory(
        item=items[3], assignee=examiners[0], queue=mcqs, leased_at=timezone.now() - timedelta(hours=1)
    )
    assert lapsed.lease_expires_at < timezone.now()
    queues = list(type(mcqs).objects.select_related("project").filter(pk__in=[mcqs.pk, chains.pk]))
    with django_assert_num_queries(3):  # one per item kind, one for the leases
        stats = queue_stats(queues=queues)
    assert (stats[mcqs.pk].depth, stats[mcqs.pk].active, stats[mcqs.pk].expired) == (3, 3, 1)
    assert (stats[chains.pk].depth, stats[chains.pk].active, stats[chains.pk].expired) == (1, 0, 0)


def test_item_rows_list_items_with_their_holders(project, people, examiners, django_assert_num_queries):
    items = [_mcq(project, age_min=10 - i) for i in range(3)]
    queue = _queue(project, examiners, overlap=2)
    queue_claim_next(queue=queue, user=examiners[0])
    queue = type(queue).objects.select_related("project").get(pk=queue.pk)
    with django_assert_num_queries(3):  # the count, the page, its holders
        rows, total = queue_item_rows(queue=queue, limit=2)
    assert total == 3 and [r.item for r in rows] == items[:2]
    assert [h.assignee for h in rows[0].holders] == [examiners[0]] and rows[0].free == 1 and rows[1].free == 2
    assert rows[0].url == f"/p/{project.slug}/mcqs/{items[0].pk}/"


def test_item_url_points_at_each_kinds_editor(project):
    chain = factories.QAChainFactory(clip__video__project=project)
    pair = factories.ChainPairFactory(chain_before=chain)
    mcq = factories.MCQFactory(project=project)
    assert item_url(chain) == f"/p/{project.slug}/chains/{chain.pk}/"
    assert item_url(pair) == f"/p/{project.slug}/pairs/{pair.pk}/"
    assert item_url(mcq) == f"/p/{project.slug}/mcqs/{mcq.pk}/"
