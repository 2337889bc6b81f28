"""Review queues and leases: which items a queue holds, and who holds which item for how long.

A queue is a pool of items of one kind at one stage of one project, narrowed by filters. Its
members pull the next item as a *lease* (an `Assignment`) that lapses unless renewed by a
heartbeat; admins assign and reassign by hand. `overlap` says how many people see each item at
the queue's stage (two examiners per item for agreement), and nothing ever hands an item to more.

Which item statuses a stage's queue holds (`stage_q`):

| stage      | items                                                                                   |
|------------|-----------------------------------------------------------------------------------------|
| annotating | draft, annotating (claim-next passes over an item someone else has started writing)     |
| examining  | scored, examining; submitted too when the item does not wait for the LLM judge (the      |
|            | project's gate is off or does not cover the kind: reviewer.quality_gate.gate_applies)   |
| revising   | flagged; revising when it got there from flagged (or an admin reopened it); an item the |
|            | judge sent back is its author's to fix and belongs to no queue                          |

A *round* of a stage starts at the item's latest submit (`submitted_at`; the beginning of time
for an item never submitted). Only assignments of the current round count towards the overlap,
so an item flagged, revised and submitted again is examined afresh.

A slot is *taken* by a completed assignment or by an active one whose lease has not lapsed. An
active lease past its expiry no longer holds the item: the next claim on that item marks it
expired (under the item's lock) and takes the slot; `assignments_expire` sweeps the rest so
dashboards count them.

Concurrency. Every writer that adds an assignment (claim and admin assign) first locks the item
row, then counts the item's assignments again in a new statement (or, for the claim on
PostgreSQL, a VOLATILE database function, whose queries take fresh snapshots). Under READ
COMMITTED (Django's default; REPEATABLE READ would break it) the picking statement may have counted
with a snapshot taken just before another claimer committed, and only a query started after the
lock sees that commit: that recount is what makes claims exact.

On PostgreSQL claim-next is one statement in autocommit (`_claim_statement`): a CTE picks the
oldest candidates with `SELECT … FOR UPDATE SKIP LOCKED`, walking the items' queue-order index
(annotator.models.queue_order_indexes, one per stage) and stopping at the first it may take, so concurrent claimers
pass over each other's items instead of queueing on them; an INSERT … SELECT takes the first
candidate on which `reviewer_claim_slot_free` (the recount, which also marks the item's lapsed
leases expired) says a slot is free, and returns the lease. When it found no candidate, the same
statement says whether the person is a member and whether candidates remain that other claimers
hold locked: so "nothing left" is one round trip too. One round trip, no BEGIN/COMMIT, row locks
held for the statement only. Rarely a claim needs another round: its candidates all filled up
between the statement's snapshot and its locks (the next round passes over them), or everything
left was locked by other claimers (with overlap > 1 such an item may still have a slot, so the
next round waits for the first instead of calling the queue empty). The statement is compiled once
per queue configuration and prepared once per database session (`_run_prepared`).

SQLite has no row locks and no SKIP LOCKED: the project's SQLite set-up opens every transaction
with BEGIN IMMEDIATE, which takes the database's write lock, so claims there simply run one after
another in a transaction (`_claim_locked`), and the same recount keeps them exact.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import (
    BooleanField,
    Count,
    DateTimeField,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.db.models.lookups import GreaterThanOrEqual, In, LessThan, LessThanOrEqual
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.models import MCQ, ChainPair, ItemKind, ItemStatus, MCQVideo, QAChain, ReviewEvent
from projects.models import Membership, Project
from projects.permissions import Action, can, roles_allowed
from projects.refusals import Refused
from projects.services import archived_refusal

from .models import Assignment, AssignmentStatus, QualityScore, ReviewQueue

S = ItemStatus
A = AssignmentStatus

KIND_MODELS = {ItemKind.QA_CHAIN: QAChain, ItemKind.CHAIN_PAIR: ChainPair, ItemKind.MCQ: MCQ}
# The ItemRef column that points at an item of each kind.
KIND_FIELDS = {ItemKind.QA_CHAIN: "qa_chain", ItemKind.CHAIN_PAIR: "chain_pair", ItemKind.MCQ: "mcq"}
# What a person must be allowed to do in the project to work at a stage.
STAGE_ACTIONS = {S.ANNOTATING: Action.ANNOTATE, S.EXAMINING: Action.EXAMINE, S.REVISING: Action.REVISE}
# Where the video of an item is, as a lookup path from the item (MCQs: their first video, below).
_VIDEO_PATHS = {ItemKind.QA_CHAIN: "clip__video", ItemKind.CHAIN_PAIR: "video"}

DEFAULT_LEASE_SECONDS = 4 * 60 * 60  # a working session
DEFAULT_HEARTBEAT_SECONDS = 60
_BEGINNING = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # before any round of any item
FILTER_KEYS = ("categories", "duration_groups", "score_min", "score_max", "video_ids")


class ClaimRefused(Refused):
    """This person may not pull from this queue (not a member, no role for the stage, queue paused)."""

    status, code = 403, "claim_refused"
    code_statuses = {"project_archived": 409}


class LeaseError(Refused):
    """A heartbeat, release or completion that does not apply to this lease; `code` says why."""

    code_statuses = {"not_holder": 403}

    def __init__(self, code: str, message: str):
        super().__init__(message, code=code)


class AssignRefused(Refused):
    """An admin assignment refused as a whole (the assignee cannot work at this stage)."""

    status, code = 400, "assign_refused"


class _SlotGone(Exception):
    """The locked item turned out full (or already this person's): roll back and try the next one."""


# --- items of a queue -------------------------------------------------------------------------------


def kind_model(item_kind: str):
    return KIND_MODELS[ItemKind(item_kind)]


def _first_video(outer: str = "pk"):
    """An MCQ's video for filtering: its first one (the main video, or the reference one of MVPBench)."""
    return MCQVideo.objects.filter(mcq=OuterRef(outer), order=0)


def _duration_q(path: str, groups: list[dict]) -> Q:
    q = Q()
    for group in groups:
        q |= Q(**{f"{path}duration_s__gt": group["low"], f"{path}duration_s__lte": group["high"]})
    return q


def _latest_score(item_kind: str):
    column = KIND_FIELDS[ItemKind(item_kind)]
    scores = QualityScore.objects.filter(**{column: OuterRef("pk")}).order_by("-created_at", "-pk")
    return Subquery(scores.values("overall")[:1], output_field=IntegerField())


def _waits_for_judge(queue: ReviewQueue) -> bool:
    """A submitted item goes to the LLM judge first when the project's gate covers its kind."""
    # Imported here: the gate may come to complete leases (assignment_complete) from this module.
    from .quality_gate import gate_applies

    return gate_applies(project=queue.project, kind=queue.item_kind)


def stage_q(queue: ReviewQueue) -> Q:
    """Items whose status puts them in this queue's stage (see the table in the module docstring)."""
    if queue.stage == S.ANNOTATING:
        return Q(status__in=[S.DRAFT, S.ANNOTATING])
    if queue.stage == S.EXAMINING:
        statuses = [S.SCORED, S.EXAMINING] + ([] if _waits_for_judge(queue) else [S.SUBMITTED])
        return Q(status__in=statuses)
    if queue.stage == S.REVISING:
        column = KIND_FIELDS[ItemKind(queue.item_kind)]
        # An admin's revert logs revising → revising; only a real move into revising says where it came from.
        into_revising = ReviewEvent.objects.filter(**{column: OuterRef("pk")}, to_status=S.REVISING).exclude(
            from_status=S.REVISING
        )
        came_from = Subquery(into_revising.order_by("-created_at", "-pk").values("from_status")[:1])
        return Q(status=S.FLAGGED) | (Q(status=S.REVISING) & Q(In(came_from, [S.FLAGGED, S.ACCEPTED])))
    raise ValueError(f"A queue cannot be at stage {queue.stage!r}.")


def filters_q(queue: ReviewQueue) -> Q:
    """The queue's own filters (already checked by `queue_filters_clean` when saved)."""
    filters, kind, q = queue.filters or {}, ItemKind(queue.item_kind), Q()
    if filters.get("categories"):
        q &= Q(category__in=filters["categories"])
    if filters.get("duration_groups"):
        wanted = {str(name) for name in filters["duration_groups"]}
        groups = [g for g in queue.project.taxonomy("duration_groups") if str(g["name"]) in wanted]
        if kind == ItemKind.MCQ:
            q &= Q(Exists(_first_video().filter(_duration_q("video__", groups))))
        else:
            q &= _duration_q(_VIDEO_PATHS[kind] + "__", groups)
    if filters.get("video_ids"):
        if kind == ItemKind.MCQ:
            q &= Q(Exists(_first_video().filter(video_id__in=filters["video_ids"])))
        else:
            q &= Q(**{f"{_VIDEO_PATHS[kind]}_id__in": filters["video_ids"]})
    if filters.get("score_min") is not None:
        q &= Q(GreaterThanOrEqual(_latest_score(kind), filters["score_min"]))
    if filters.get("score_max") is not None:
        q &= Q(LessThanOrEqual(_latest_score(kind), filters["score_max"]))
    return q


def _round_start():
    return Coalesce(OuterRef("submitted_at"), Value(_BEGINNING, output_field=DateTimeField()))


def _holding(now) -> Q:
    """Assignments that take a slot: done, or leased and not lapsed."""
    return Q(status=A.COMPLETED) | Q(status=A.ACTIVE, lease_expires_at__gt=now)


def _taken(queue: ReviewQueue, now):
    """How many slots of the current round are taken, as a correlated subquery (one COUNT, no GROUP BY)."""
    column = KIND_FIELDS[ItemKind(queue.item_kind)]
    rows = Assignment.objects.filter(
        _holding(now), **{column: OuterRef("pk")}, stage=queue.stage, leased_at__gte=_round_start()
    )
    return Subquery(
        rows.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n"), output_field=IntegerField()
    )


def open_q(queue: ReviewQueue, now=None) -> Q:
    """In the queue and not yet seen by `overlap` people: its depth."""
    now = now or timezone.now()
    return stage_q(queue) & filters_q(queue) & Q(LessThan(_taken(queue, now), queue.overlap))


def queue_items(queue: ReviewQueue):
    """Every item the queue holds (stage and filters), assigned or not; one query, however many items."""
    model = kind_model(queue.item_kind)
    return model.objects.filter(stage_q(queue) & filters_q(queue), project_id=queue.project_id)


def queue_open_items(queue: ReviewQueue, now=None):
    """The items still waiting for someone: in the queue with a free slot."""
    model = kind_model(queue.item_kind)
    return model.objects.filter(open_q(queue, now), project_id=queue.project_id)


def _oldest_first():
    return [Coalesce("submitted_at", "created_at").asc(), "pk"]


def _candidates(queue: ReviewQueue, user, now):
    """What claim-next may give this person, oldest first."""
    column = KIND_FIELDS[ItemKind(queue.item_kind)]
    items = queue_open_items(queue, now)
    if queue.stage == S.ANNOTATING:
        # Someone else's half-written item is theirs to finish.
        items = items.exclude(Q(status=S.ANNOTATING) & Q(author__isnull=False) & ~Q(author=user))
    else:
        items = items.exclude(author=user)  # examiners and revisers never review their own work
    # Not again to someone who holds, did or gave back this item in this round.
    mine = Assignment.objects.filter(
        **{column: OuterRef("pk")},
        stage=queue.stage,
        assignee=user,
        status__in=[A.ACTIVE, A.COMPLETED, A.RELEASED],
        leased_at__gte=_round_start(),
    )
    return items.exclude(Exists(mine)).order_by(*_oldest_first())


def item_url(item) -> str:
    """The page where the item is worked on: the MCQ, chain or chain-pair editor (a plain path)."""
    kind = Assignment.ref_for(item)["item_kind"]
    return item_path(kind=kind, item_id=item.pk, slug=item.project.slug)


def item_path(*, kind: str, item_id: int, slug: str) -> str:
    segment = {ItemKind.QA_CHAIN: "chains", ItemKind.CHAIN_PAIR: "pairs", ItemKind.MCQ: "mcqs"}[ItemKind(kind)]
    return f"/p/{slug}/{segment}/{item_id}/"


def assignment_item_id(assignment: Assignment) -> int:
    return getattr(assignment, f"{KIND_FIELDS[ItemKind(assignment.item_kind)]}_id")


# --- queue settings ------------------------------------------------------------------------------


def _int_list(value, label: str) -> list[int]:
    if isinstance(value, str):
        value = [part for part in value.replace(",", " ").split() if part]
    if not isinstance(value, list | tuple):
        raise ValidationError(_("%(label)s must be a list.") % {"label": label})
    numbers = []
    for part in value:
        try:
            numbers.append(int(part))
        except (TypeError, ValueError):
            raise ValidationError(
                _("%(label)s: %(part)r is not a whole number.") % {"label": label, "part": part}
            ) from None
    return sorted(set(numbers))


def queue_filters_clean(*, filters, project: Project, item_kind: str) -> dict:
    """Checked, normalised filters; a ValidationError maps each bad filter to a message people can act on."""
    if filters in (None, ""):
        return {}
    if not isinstance(filters, dict):
        raise ValidationError({"filters": 'Filters must be an object such as {"categories": ["E2O"]}.'})
    errors: dict[str, str] = {}
    clean: dict = {}
    unknown = sorted(set(filters) - set(FILTER_KEYS))
    if unknown:
        errors["filters"] = f"Unknown filter(s) {', '.join(unknown)}; known: {', '.join(FILTER_KEYS)}."

    categories = filters.get("categories")
    if categories:
        if item_kind != ItemKind.MCQ:
            errors["categories"] = "Categories apply to MCQs only."
        elif not isinstance(categories, list | tuple) or not all(isinstance(c, str) and c.strip() for c in categories):
            errors["categories"] = "Categories must be a list of category codes or task names."
        else:
            clean["categories"] = sorted({c.strip() for c in categories})

    groups = filters.get("duration_groups")
    if groups:
        known = {str(g["name"]): g["name"] for g in project.taxonomy("duration_groups")}
        names = groups if isinstance(groups, list | tuple) else [groups]
        missing = [str(n) for n in names if str(n) not in known]
        if missing:
            errors["duration_groups"] = (
                f"No duration group {', '.join(missing)} in this project; it has {', '.join(known) or 'none'}."
            )
        else:
            clean["duration_groups"] = sorted({known[str(n)] for n in names}, key=str)

    for key, label in (("score_min", "The lowest score"), ("score_max", "The highest score")):
        value = filters.get(key)
        if value in (None, ""):
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            errors[key] = f"{label} must be a whole number from 0 to 100."
            continue
        if not 0 <= number <= 100:
            errors[key] = f"{label} must be from 0 to 100, not {number}."
        else:
            clean[key] = number
    if "score_min" in clean and "score_max" in clean and clean["score_min"] > clean["score_max"]:
        errors["score_max"] = f"The score range is empty: {clean['score_min']} is above {clean['score_max']}."

    video_ids = filters.get("video_ids")
    if video_ids:
        try:
            ids = _int_list(video_ids, "Video ids")
        except ValidationError as exc:
            errors["video_ids"] = exc.messages[0]
        else:
            found = set(project.videos.filter(pk__in=ids).values_list("pk", flat=True))
            missing = [str(i) for i in ids if i not in found]
            if missing:
                errors["video_ids"] = f"No video {', '.join(missing)} in this project."
            else:
                clean["video_ids"] = ids
    if errors:
        raise ValidationError(errors)
    return clean


def people_for_stage(*, project: Project, stage: str):
    """Project members who may work at the stage (the assignee choices), by username."""
    # The role table of projects.permissions, read rather than copied, so the policy stays in one place.
    roles = roles_allowed(STAGE_ACTIONS[stage])
    User = get_user_model()
    return User.objects.filter(
        Q(pk__in=Membership.objects.filter(project=project, role__in=roles).values("user_id")) | Q(is_superuser=True),
        is_active=True,
    ).order_by("username")


def _check_members(*, project: Project, stage: str, members) -> None:
    allowed = set(people_for_stage(project=project, stage=stage).values_list("pk", flat=True))
    refused = sorted(m.get_username() for m in members if m.pk not in allowed)
    if refused:
        role = ItemStatus(stage).label.lower()
        raise ValidationError(
            {"members": f"{', '.join(refused)} cannot work at the {role} stage in this project (no role for it)."}
        )


_QUEUE_FIELDS = (
    "name",
    "stage",
    "item_kind",
    "filters",
    "priority",
    "overlap",
    "lease_seconds",
    "heartbeat_seconds",
    "auto_advance",
    "is_active",
)


def _queue_save(queue: ReviewQueue, *, members) -> ReviewQueue:
    errors = {}
    if not (queue.name or "").strip():
        errors["name"] = "A queue needs a name."
    if queue.stage not in STAGE_ACTIONS:
        errors["stage"] = "The stage is annotating, examining or revising."
    if queue.item_kind not in ItemKind.values:
        errors["item_kind"] = f"The kind is one of {', '.join(ItemKind.values)}."
    if queue.overlap is None or queue.overlap < 1:
        errors["overlap"] = "At least one person sees each item."
    if queue.lease_seconds is None or queue.lease_seconds < 30:
        errors["lease_seconds"] = "A lease lasts at least 30 seconds."
    if queue.heartbeat_seconds is None or queue.heartbeat_seconds < 10:
        errors["heartbeat_seconds"] = "A heartbeat comes at most every 10 seconds."
    if errors:
        raise ValidationError(errors)
    queue.name = queue.name.strip()
    queue.filters = queue_filters_clean(filters=queue.filters, project=queue.project, item_kind=queue.item_kind)
    clash = ReviewQueue.objects.filter(project=queue.project, name=queue.name).exclude(pk=queue.pk)
    if clash.exists():
        raise ValidationError({"name": f"This project already has a queue named {queue.name!r}."})
    if members is not None:
        _check_members(project=queue.project, stage=queue.stage, members=members)
    try:
        with transaction.atomic():
            queue.save()
            if members is not None:
                queue.members.set(members)
    except IntegrityError:  # a same-named queue saved meanwhile
        raise ValidationError({"name": f"This project already has a queue named {queue.name!r}."}) from None
    return queue


def queue_create(*, project: Project, by, members=(), **fields) -> ReviewQueue:
    """A new queue (admins). Fields as on ReviewQueue; a ValidationError names each bad field."""
    if not can(by, Action.ADMINISTER, project):
        raise PermissionDenied(_("Only project admins define queues."))
    unknown = set(fields) - set(_QUEUE_FIELDS)
    if unknown:
        raise TypeError(f"queue_create() got unexpected field(s) {', '.join(sorted(unknown))}")
    return _queue_save(ReviewQueue(project=project, **fields), members=list(members))


def queue_update(*, queue: ReviewQueue, by, members=None, **fields) -> ReviewQueue:
    """Change a queue's settings (admins); leases already given keep their stage and expiry."""
    if not can(by, Action.ADMINISTER, queue.project):
        raise PermissionDenied(_("Only project admins change queues."))
    unknown = set(fields) - set(_QUEUE_FIELDS)
    if unknown:
        raise TypeError(f"queue_update() got unexpected field(s) {', '.join(sorted(unknown))}")
    for name, value in fields.items():
        setattr(queue, name, value)
    if members is None and "stage" in fields:
        members = list(queue.members.all())  # the members must suit the new stage too
    return _queue_save(queue, members=None if members is None else list(members))


# --- claim, heartbeat, release, complete, expire -------------------------------------------------------


def queue_claim_check(*, queue: ReviewQueue, user) -> None:
    """Raise ClaimRefused unless this person may pull from the queue."""
    if queue.project.is_archived:
        raise ClaimRefused(archived_refusal(queue.project), code="project_archived")
    if not queue.is_active:
        raise ClaimRefused(_("The queue %(name)s is paused.") % {"name": queue.name})
    if not can(user, STAGE_ACTIONS[queue.stage], queue.project):
        raise ClaimRefused(
            _("Your role in %(project)s does not include %(stage)s.")
            % {"project": queue.project.name, "stage": ItemStatus(queue.stage).label.lower()}
        )
    if not queue.members.filter(pk=user.pk).exists():
        raise ClaimRefused(
            _("You are not a member of the queue %(name)s; a project admin can add you.") % {"name": queue.name}
        )


def _lock(qs, *, skip_locked: bool):
    features = connection.features
    if not features.has_select_for_update:
        return qs  # SQLite: BEGIN IMMEDIATE already serialises writers
    return qs.select_for_update(
        skip_locked=skip_locked and features.has_select_for_update_skip_locked,
        of=("self",) if features.has_select_for_update_of else (),
    )


def _lease_seconds(queue: ReviewQueue | None) -> int:
    return queue.lease_seconds if queue is not None else DEFAULT_LEASE_SECONDS


def _new_assignment(queue: ReviewQueue, item, *, assignee, by, now) -> Assignment:
    return Assignment(
        project_id=queue.project_id,
        queue=queue,
        stage=queue.stage,
        assignee=assignee,
        assigned_by=by,
        status=A.ACTIVE,
        leased_at=now,
        lease_expires_at=now + dt.timedelta(seconds=_lease_seconds(queue)),
        **Assignment.ref_for(item),
    )


def _sweep_lapsed(queue: ReviewQueue, column: str, item_ids, now) -> None:
    Assignment.objects.filter(
        **{f"{column}__in": item_ids}, stage=queue.stage, status=A.ACTIVE, lease_expires_at__lte=now
    ).update(status=A.EXPIRED)


def _round_holders(queue: ReviewQueue, column: str, items) -> dict[int, list[tuple[int, str]]]:
    """item id → [(assignee id, status)] of this round's assignments that count for claims and assigns."""
    rounds = {item.pk: item.submitted_at or _BEGINNING for item in items}
    rows = Assignment.objects.filter(
        **{f"{column}__in": list(rounds)},
        stage=queue.stage,
        status__in=[A.ACTIVE, A.COMPLETED, A.RELEASED],
        leased_at__gte=min(rounds.values(), default=_BEGINNING),
    ).values_list(column, "assignee_id", "status", "leased_at")
    holders: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for item_id, assignee_id, status, leased_at in rows:
        if leased_at >= rounds[item_id]:
            holders[item_id].append((assignee_id, status))
    return holders


def _claim_locked(queue: ReviewQueue, items: list, user, now) -> tuple[Assignment, object]:
    """The items are locked: count their slots again with fresh data and take the first free one.

    Raises _SlotGone when every one of them turned out full (or already this person's).
    """
    column = KIND_FIELDS[ItemKind(queue.item_kind)]
    rounds = {item.pk: item.submitted_at or _BEGINNING for item in items}
    this_round = Assignment.objects.filter(
        **{f"{column}__in": list(rounds)},
        stage=queue.stage,
        status__in=[A.ACTIVE, A.COMPLETED, A.RELEASED],
        leased_at__gte=min(rounds.values()),
    )
    fields = (column, "assignee_id", "status", "lease_expires_at", "leased_at")
    rows = list(this_round.values_list(*fields))
    if any(status == A.ACTIVE and expires <= now for _, _, status, expires, _ in rows):
        # A lapsed lease gives its slot up here, under the item's lock. The UPDATE checks the
        # expiry again itself, so a heartbeat that renewed the lease meanwhile keeps it alive.
        _sweep_lapsed(queue, column, list(rounds), now)
        rows = list(this_round.values_list(*fields))
    holders: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for item_id, assignee, status, _pk, leased_at in rows:
        if leased_at >= rounds[item_id]:
            holders[item_id].append((assignee, status))
    for item in items:
        mine = holders[item.pk]
        taken = sum(1 for _, status in mine if status != A.RELEASED)
        if taken < queue.overlap and all(assignee != user.pk for assignee, _ in mine):
            assignment = _new_assignment(queue, item, assignee=user, by=None, now=now)
            assignment.save(force_insert=True)
            return assignment, item
    raise _SlotGone


# All a claim reads of the item; a narrow row keeps the sort of the candidates cheap.
_CLAIM_FIELDS = ("pk", "project_id", "status", "author_id", "submitted_at")
CLAIM_BATCH = 4
# Rounds of the one-statement claim before claim-next takes the long way (each round passes over at
# least one candidate or waits for one, so a claim that needs more is a pathological race).
_CLAIM_ROUNDS = 25


# Claim-next runs the same statement over and over with only the time, the person and the items
# already passed over changing. Building it through the ORM costs as much Python time as PostgreSQL
# takes to run it, and planning it on every claim costs PostgreSQL as much again. So the statement
# is compiled once per queue configuration, with the queue's own values (statuses, categories,
# durations, overlap) written into it, and prepared once per database session: its plan is made
# once and fits every claim, because only the time, the person and the passed-over items vary.
_STAND_INS = {
    "now": dt.datetime(1999, 12, 31, 23, 59, 58, 987654, tzinfo=dt.UTC),
    "user": -7_654_321,
    "passed": [-7_654_322],
}
_VARIABLE_TYPES = {"now": "timestamptz", "user": "bigint", "passed": "bigint[]"}
_COMPILED: dict[tuple, str] = {}
_COMPILED_MAX = 256
_PREPARED_PER_SESSION = 200
_PARAM = re.compile(r"%([s%])")
_NAMED = re.compile(r"%(%|\((\w+)\)s)")
_NO_SUCH_STATEMENT = "26000"  # PostgreSQL's invalid_sql_statement_name


def _compiled_key(queue: ReviewQueue, lock: str, limit: int) -> tuple:
    taxonomy = queue.project.taxonomy("duration_groups") if (queue.filters or {}).get("duration_groups") else None
    return (
        queue.pk,
        queue.project_id,
        queue.stage,
        queue.item_kind,
        queue.overlap,
        repr(sorted((queue.filters or {}).items())),
        repr(taxonomy),
        queue.stage == S.EXAMINING and _waits_for_judge(queue),
        _lease_seconds(queue),
        lock,
        limit,
    )


def _inline(sql: str, params, cursor) -> str:
    """The SQL with every parameter written in, except the stand-ins, which become %(now)s and the like."""
    values = iter(params)

    def one(match):
        if match.group(1) == "%":
            return "%%"
        value = next(values)
        for name, stand_in in _STAND_INS.items():
            if value == stand_in or value == connection.ops.adapt_datetimefield_value(stand_in):
                return f"%({name})s"
        # A literal, as psycopg2 would have sent it; a % in it must survive the second formatting.
        return cursor.mogrify("%s", [value]).decode().replace("%", "%%")

    return _PARAM.sub(one, sql)


def _candidates_sql(queue: ReviewQueue, *, lock: str, limit: int, cursor) -> str:
    """The candidate query of `_candidates` for members of the queue, not the passed-over items."""
    model = kind_model(queue.item_kind)
    user = _STAND_INS["user"]
    members = ReviewQueue.members.through.objects.filter(reviewqueue_id=queue.pk, user_id=user)
    not_passed = RawSQL(  # noqa: S611 - table and column names from the model; the ids are a parameter
        f'"{model._meta.db_table}"."{model._meta.pk.column}" <> ALL(%s::bigint[])',
        (_STAND_INS["passed"],),
        output_field=BooleanField(),
    )
    qs = _candidates(queue, user, _STAND_INS["now"]).only(*_CLAIM_FIELDS).filter(Exists(members), not_passed)
    if lock != "none":
        qs = _lock(qs, skip_locked=lock == "skip")
    with transaction.atomic():  # Django compiles FOR UPDATE only inside a transaction; it runs anywhere
        sql, params = qs[:limit].query.sql_with_params()
    sql = _inline(sql, params, cursor)
    if any(f"%({name})s" not in sql for name in _STAND_INS):  # the stand-ins must be found, or it would be wrong
        raise RuntimeError("claim-next: the candidate query's parameters could not be prepared")
    return sql


def _item_names(model) -> list[str]:
    # Django selects deferred-loading fields in the model's field order, which is what from_db expects.
    return [model._meta.pk.attname if f == "pk" else f for f in _CLAIM_FIELDS]


# The columns of a lease, in the model's order (what Assignment.from_db expects back).
_LEASE_COLUMNS = [f.column for f in Assignment._meta.concrete_fields]


def _claim_sql(queue: ReviewQueue, *, lock: str) -> str:
    """The whole claim statement for this queue and lock mode, compiled once (see `_claim_statement`)."""
    limit = CLAIM_BATCH if lock == "skip" else 1
    key = _compiled_key(queue, lock, limit)
    sql = _COMPILED.get(key)
    if sql is not None:
        return sql
    kind = ItemKind(queue.item_kind)
    model = kind_model(kind)
    column = KIND_FIELDS[kind]
    with connection.cursor() as cursor:
        literal = lambda value: cursor.mogrify("%s", [value]).decode().replace("%", "%%")  # noqa: E731
        cand_sql = _candidates_sql(queue, lock=lock, limit=limit, cursor=cursor)
        rest_sql = _candidates_sql(queue, lock="none", limit=1, cursor=cursor)
        item_cols = {f"{KIND_FIELDS[k]}_id": "NULL" for k in ItemKind}
        item_cols[f"{column}_id"] = "cand.id"
        columns = {
            "item_kind": literal(kind.value),
            **item_cols,
            "project_id": literal(queue.project_id),
            "queue_id": literal(queue.pk),
            "stage": literal(queue.stage),
            "assignee_id": "%(user)s",
            "assigned_by_id": "NULL",
            "status": literal(A.ACTIVE.value),
            "leased_at": "%(now)s",
            "lease_expires_at": f"%(now)s + make_interval(secs => {int(_lease_seconds(queue))})",
            "heartbeat_at": "NULL",
            "completed_at": "NULL",
        }
        if set(columns) | {"id"} != set(_LEASE_COLUMNS):  # a new field on Assignment must be given here
            raise RuntimeError("claim-next: the lease's columns changed; update _claim_sql")
        slot_free = (
            f"reviewer_claim_slot_free({literal(kind.value)}, cand.id, {literal(queue.stage)}, "
            f"COALESCE(cand.submitted_at, {literal(_BEGINNING)}), {int(queue.overlap)}, %(user)s::integer, %(now)s)"
        )
    names = _item_names(model)
    width = len(names) + len(_LEASE_COLUMNS)
    members = ReviewQueue.members.through._meta.db_table
    # Table and column names come from the models; values are literals of the queue or parameters.
    sql = (
        f"WITH cand AS MATERIALIZED ({cand_sql}), "  # noqa: S608
        f"ins AS (INSERT INTO {Assignment._meta.db_table} ({', '.join(columns)}) "
        f"SELECT {', '.join(columns.values())} FROM cand WHERE {slot_free} "
        f"LIMIT 1 ON CONFLICT DO NOTHING RETURNING {', '.join(_LEASE_COLUMNS)}) "
        f"SELECT {', '.join(f'cand.{n}' for n in names)}, {', '.join(f'ins.{c}' for c in _LEASE_COLUMNS)}, "
        f"NULL, NULL FROM cand LEFT JOIN ins ON ins.{column}_id = cand.id "
        f"UNION ALL SELECT {', '.join(['NULL'] * width)}, "
        f"EXISTS (SELECT 1 FROM {members} WHERE reviewqueue_id = {int(queue.pk)} AND user_id = %(user)s), "
        f"EXISTS ({rest_sql}) WHERE NOT EXISTS (SELECT 1 FROM cand)"
    )
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.clear()
    _COMPILED[key] = sql
    return sql


def _run_prepared(sql: str, values: dict) -> list[tuple]:
    """Run a claim statement (parameters %(now)s, %(user)s, %(passed)s) as a prepared statement.

    Each database session prepares a statement once and reuses its plan; the statements a session
    prepared are remembered with its connection, and a new connection prepares afresh. (A
    connection pooler in transaction mode would break this; sessions must be the app's own.)
    """
    connection.ensure_connection()
    raw = connection.connection
    known = getattr(connection, "_vidqa_claim_statements", None)
    if known is None or known[0] is not raw:
        known = connection._vidqa_claim_statements = (raw, {})
    statements = known[1]
    order = list(_VARIABLE_TYPES)
    with connection.cursor() as cursor:
        for attempt in (1, 2):
            name = statements.get(sql)
            if name is None:
                if len(statements) >= _PREPARED_PER_SESSION:
                    cursor.execute("DEALLOCATE ALL")
                    statements.clear()
                name = f"vidqa_claim_{len(statements)}"
                numbered = _NAMED.sub(lambda m: "%" if m.group(1) == "%" else f"${order.index(m.group(2)) + 1}", sql)
                cursor.execute(f"PREPARE {name} ({', '.join(_VARIABLE_TYPES.values())}) AS {numbered}")
                statements[sql] = name
            try:
                cursor.execute(f"EXECUTE {name} (%s, %s, %s)", [values[v] for v in order])
            except DatabaseError as exc:
                # Someone ran DISCARD ALL or DEALLOCATE on the session: prepare again (outside a
                # transaction only; inside one the error has already aborted it).
                gone = getattr(exc.__cause__, "pgcode", None) == _NO_SUCH_STATEMENT
                if not gone or attempt == 2 or connection.in_atomic_block:
                    raise
                statements.clear()
                continue
            return cursor.fetchall()
    raise AssertionError("unreachable")


@dataclass
class _Round:
    """What one claim statement saw: its candidates, the lease (if any) and, when it had no candidate,
    whether the person is a member and whether candidates locked by other claimers remain."""

    items: list
    lease: Assignment | None
    member: bool = True
    locked_remain: bool = False


def _claim_statement(queue: ReviewQueue, user, now, *, lock: str, passed: list[int]) -> _Round:
    """PostgreSQL: pick, lock and lease in one statement, in autocommit.

    The candidate query (members only, not the ids in `passed`, `CLAIM_BATCH` rows, "skip" or
    "wait" for locks) runs as a CTE; the INSERT takes the first of its rows on which
    `reviewer_claim_slot_free` (migration reviewer 0007), which counts the item's slots again with
    a fresh snapshot under the row lock, says a slot is free for this person. Only when the CTE
    found nothing does the statement go on to ask, without locking, whether candidates remain that
    other claimers hold locked right now, and whether the person is a member of the queue at all:
    so "nothing left" takes one round trip too.
    """
    model = kind_model(queue.item_kind)
    names = _item_names(model)
    width = len(names) + len(_LEASE_COLUMNS)
    adapt = connection.ops.adapt_datetimefield_value
    rows = _run_prepared(_claim_sql(queue, lock=lock), {"now": adapt(now), "user": user.pk, "passed": passed})
    found = _Round(items=[], lease=None)
    for row in rows:
        if row[0] is None:  # the one row that says why there was no candidate
            found.member, found.locked_remain = row[width], row[width + 1]
            continue
        item = model.from_db(connection.alias, names, row[: len(names)])
        found.items.append(item)
        if row[len(names)] is not None:
            found.lease = Assignment.from_db(
                connection.alias, [f.attname for f in Assignment._meta.concrete_fields], row[len(names) : width]
            )
            found.lease.item_object = item
    return found


def _claim_in_one_statement(queue: ReviewQueue, user, now) -> tuple[Assignment | None, list[int]]:
    """PostgreSQL's claim: (the lease or None, ids passed over when it gives up on the one statement).

    Usually one round trip. A candidate that filled up between the statement's snapshot and its
    lock is passed over in the next round; when everything left is locked by other claimers (with
    overlap > 1 such an item may still have a slot for us) the next round waits for the first.
    """
    passed: list[int] = []
    lock = "skip"
    for _round in range(_CLAIM_ROUNDS):
        found = _claim_statement(queue, user, now, lock=lock, passed=passed)
        if found.lease is not None:
            return found.lease, []
        if found.items:
            passed += [item.pk for item in found.items]
            lock = "skip"
        elif found.locked_remain and lock == "skip":
            lock = "wait"
        elif found.locked_remain:
            lock = "skip"  # what we waited for went meanwhile; look again
        else:
            if not found.member:
                queue_claim_check(queue=queue, user=user)  # the refusal that says why
            return None, []
    return None, passed


def _claim_check_cheap(queue: ReviewQueue, user) -> None:
    """The checks that need no query (the role is remembered per request); membership is in the claim."""
    if queue.project.is_archived or not queue.is_active or not can(user, STAGE_ACTIONS[queue.stage], queue.project):
        queue_claim_check(queue=queue, user=user)


def queue_claim_next(*, queue: ReviewQueue, user, now=None) -> Assignment | None:
    """Lease the next item of the queue to this person, or None when nothing is left for them.

    The oldest eligible item (by its latest submit, else its creation) that has a free slot, that
    this person did not write (examining, revising) and did not already take in this round.
    """
    passed: list[int] = []
    if connection.vendor == "postgresql":
        _claim_check_cheap(queue, user)
        lease, passed = _claim_in_one_statement(queue, user, now or timezone.now())
        if lease is not None or not passed:
            if lease is not None:
                lease.item_object.project = queue.project  # same project; spares item_url a query
            return lease
        # Pathological races only: on, the long way.
    else:
        queue_claim_check(queue=queue, user=user)
    skip_locked_works = connection.features.has_select_for_update_skip_locked
    while True:
        now_ = now or timezone.now()
        try:
            with transaction.atomic():
                candidates = _candidates(queue, user, now_).only(*_CLAIM_FIELDS).exclude(pk__in=passed)
                # A few at once: the one that looked free may have filled up since the query's
                # snapshot, and a fresh query for the next costs as much as this one.
                items = list(_lock(candidates, skip_locked=True)[:CLAIM_BATCH])
                if not items and skip_locked_works:
                    # Every candidate is locked by another claimer; one may still have a slot for us.
                    items = list(_lock(candidates, skip_locked=False)[:1])
                if not items:
                    return None
                assignment, item = _claim_locked(queue, items, user, now_)
        except _SlotGone:
            passed += [item.pk for item in items]
            continue
        item.project = queue.project  # same project; spares item_url a query
        assignment.item_object = item
        return assignment


def project_claim_next(*, project: Project, user, now=None) -> Assignment | None:
    """The next item from this person's queues in the project, highest priority first."""
    if project.is_archived:
        raise ClaimRefused(archived_refusal(project), code="project_archived")
    queues = (
        ReviewQueue.objects.filter(project=project, members=user, is_active=True)
        .select_related("project")
        .order_by("-priority", "name", "pk")
    )
    for queue in queues:
        try:
            assignment = queue_claim_next(queue=queue, user=user, now=now)
        except ClaimRefused:
            continue  # e.g. the role for that stage was taken away; the other queues still count
        if assignment is not None:
            return assignment
    return None


def _holder_only(assignment: Assignment, user, verb: str) -> None:
    if assignment.assignee_id != user.pk:
        refusals = {
            "renew": _("Only the person holding this lease can renew it."),
            "complete": _("Only the person holding this lease can complete it."),
        }
        raise LeaseError("not_holder", refusals.get(verb) or f"Only the person holding this lease can {verb} it.")


def _not_active(assignment: Assignment) -> LeaseError:
    state = AssignmentStatus(assignment.status).label.lower()
    return LeaseError("not_active", _("This lease is already %(state)s.") % {"state": state})


def assignment_heartbeat(*, assignment: Assignment, user, now=None) -> Assignment:
    """Renew the lease for another `lease_seconds` from now (only its holder, only while it is active).

    A lease past its expiry that is still active is renewed too: whoever takes a lapsed lease's
    slot first marks it expired under the item's lock, so "still active" means nobody has.
    """
    _holder_only(assignment, user, "renew")
    now = now or timezone.now()
    expires = now + dt.timedelta(seconds=_lease_seconds(assignment.queue))
    if not Assignment.objects.filter(pk=assignment.pk, status=A.ACTIVE).update(
        heartbeat_at=now, lease_expires_at=expires
    ):
        assignment.refresh_from_db()
        if assignment.status == A.EXPIRED:
            raise LeaseError("lease_expired", _("This lease has expired; claim the item again if it is still free."))
        raise _not_active(assignment)
    assignment.heartbeat_at, assignment.lease_expires_at = now, expires
    return assignment


def assignment_release(*, assignment: Assignment, user, now=None) -> Assignment:
    """Give the item back to the pool: its holder, or a project admin for anyone's lease."""
    if assignment.assignee_id != user.pk and not can(user, Action.ADMINISTER, assignment.project):
        raise LeaseError("not_holder", _("Only the person holding this lease, or a project admin, can release it."))
    if not Assignment.objects.filter(pk=assignment.pk, status=A.ACTIVE).update(status=A.RELEASED):
        assignment.refresh_from_db()
        raise _not_active(assignment)
    assignment.status = A.RELEASED
    return assignment


def assignment_complete(
    *, user, assignment: Assignment | None = None, item=None, stage: str | None = None, now=None
) -> Assignment | None:
    """Mark work done. Give either the lease (its holder completes it) or the item the person acted on.

    The review workflow calls it with `item` (and the stage it acted at) when an examiner passes or
    flags, a reviser resubmits, an annotator submits: that person's active lease on the item, if
    any, becomes completed; None when they held none (an admin may act without a lease). A lease
    that lapsed but was not taken over still counts: nobody else has the item, and the work is done.
    """
    now = now or timezone.now()
    if (assignment is None) == (item is None):
        raise TypeError("assignment_complete() takes either assignment= or item=")
    if assignment is not None:
        _holder_only(assignment, user, "complete")
        if not Assignment.objects.filter(pk=assignment.pk, status=A.ACTIVE).update(
            status=A.COMPLETED, completed_at=now
        ):
            assignment.refresh_from_db()
            raise _not_active(assignment)
        assignment.status, assignment.completed_at = A.COMPLETED, now
        return assignment
    rows = Assignment.objects.filter(**Assignment.ref_for(item), assignee=user, status=A.ACTIVE)
    if stage is not None:
        rows = rows.filter(stage=stage)
    with transaction.atomic():
        found = list(_lock(rows.order_by("pk"), skip_locked=False))
        if not found:
            return None
        Assignment.objects.filter(pk__in=[a.pk for a in found]).update(status=A.COMPLETED, completed_at=now)
    for a in found:
        a.status, a.completed_at = A.COMPLETED, now
    return found[0]


# The stages a submit ends the submitter's work at: annotating the item, or revising it.
SUBMIT_STAGES = (ItemStatus.ANNOTATING, ItemStatus.REVISING)


def assignments_complete_on_submit(*, item, user) -> tuple[Assignment, ...]:
    """The submitter's leases on the item they just submitted, completed (annotator.submission calls it)."""
    completed = (assignment_complete(user=user, item=item, stage=stage) for stage in SUBMIT_STAGES)
    return tuple(lease for lease in completed if lease is not None)


def assignments_expire(*, now=None, batch: int = 1000) -> int:
    """Mark active leases past their expiry as expired, so dashboards count them; returns how many.

    Their items are already back in the pool (a lapsed lease takes no slot): this is bookkeeping,
    safe to run at any time, any number of times, beside claims. Rows a claimer or a heartbeat has
    locked are skipped (that claimer marks them itself), so the sweep never waits on, or deadlocks
    with, a claim.
    """
    now = now or timezone.now()
    done = 0
    while True:
        with transaction.atomic():
            lapsed = Assignment.objects.filter(status=A.ACTIVE, lease_expires_at__lte=now).order_by("pk")
            ids = list(_lock(lapsed, skip_locked=True).values_list("pk", flat=True)[:batch])
            if not ids:
                return done
            done += Assignment.objects.filter(pk__in=ids, status=A.ACTIVE).update(status=A.EXPIRED)
        if len(ids) < batch:
            return done


# --- admin assignment ---------------------------------------------------------------------------------


@dataclass
class AssignOutcome:
    assigned: list[Assignment] = field(default_factory=list)
    # (item id, or None for a lease that names no item of the queue; why it was not assigned), as asked.
    refused: list[tuple[int | None, str]] = field(default_factory=list)


def _item_ids(items: Iterable) -> list[int]:
    ids = []
    for item in items:
        ids.append(item if isinstance(item, int) else item.pk)
    return list(dict.fromkeys(ids))


def _check_assignee(queue: ReviewQueue, assignee) -> None:
    if not can(assignee, STAGE_ACTIONS[queue.stage], queue.project):
        stage = ItemStatus(queue.stage).label.lower()
        raise AssignRefused(
            _("%(get_username)s has no role for %(stage)s in %(name)s.")
            % {"get_username": assignee.get_username(), "stage": stage, "name": queue.project.name}
        )


def _assign_locked(queue, ids, *, assignee, by, now, replacing: dict[int, Assignment] | None = None) -> AssignOutcome:
    """Assign the items to `assignee` under their row locks, in id order (no deadlock between admins)."""
    replacing = replacing or {}
    kind = ItemKind(queue.item_kind)
    column = KIND_FIELDS[kind]
    model = kind_model(kind)
    outcome = AssignOutcome()
    locked = {
        item.pk: item
        for item in _lock(
            model.objects.filter(project_id=queue.project_id, pk__in=ids).order_by("pk"), skip_locked=False
        )
    }
    at_stage = set(model.objects.filter(stage_q(queue), pk__in=list(locked)).values_list("pk", flat=True))
    _sweep_lapsed(queue, column, list(locked), now)
    holders = _round_holders(queue, column, list(locked.values()))
    stage_label = ItemStatus(queue.stage).label.lower()
    new = []
    for item_id in ids:
        item = locked.get(item_id)
        if item is None:
            outcome.refused.append((item_id, f"No {kind.label} {item_id} in this project."))
            continue
        if item_id not in at_stage:
            outcome.refused.append(
                (item_id, f"Its status is {item.get_status_display().lower()}, not one waiting for {stage_label}.")
            )
            continue
        if queue.stage != S.ANNOTATING and item.author_id == assignee.pk:
            outcome.refused.append(
                (item_id, f"{assignee.get_username()} wrote it; reviewers never review their own work.")
            )
            continue
        current = [(who, st) for who, st in holders.get(item_id, []) if st != A.RELEASED]
        old = replacing.get(item_id)
        if old is not None and (old.assignee_id, A.ACTIVE) in current:
            current.remove((old.assignee_id, A.ACTIVE))  # the lease being handed on frees its slot
        if any(who == assignee.pk for who, _ in current):
            outcome.refused.append((item_id, f"{assignee.get_username()} already has it at this stage."))
            continue
        if len(current) >= queue.overlap:
            outcome.refused.append((item_id, f"It already has {len(current)} of {queue.overlap} people."))
            continue
        new.append(_new_assignment(queue, item, assignee=assignee, by=by, now=now))
    handed_on = [replacing[getattr(a, f"{column}_id")].pk for a in new if getattr(a, f"{column}_id") in replacing]
    if handed_on:
        Assignment.objects.filter(pk__in=handed_on, status=A.ACTIVE).update(status=A.RELEASED)
    outcome.assigned = Assignment.objects.bulk_create(new)
    return outcome


def queue_assign_items(*, queue: ReviewQueue, items: Iterable, assignee, by, now=None) -> AssignOutcome:
    """Assign items of the queue to one person (admins), one or many, by the rules claim-next follows.

    Items that cannot go to this person (not at the stage, written by them, already theirs, or
    already seen by `overlap` people) are listed in `refused` with the reason; the rest are assigned.
    """
    if not can(by, Action.ADMINISTER, queue.project):
        raise PermissionDenied(_("Only project admins assign items."))
    _check_assignee(queue, assignee)
    ids = _item_ids(items)
    now = now or timezone.now()
    with transaction.atomic():
        return _assign_locked(queue, ids, assignee=assignee, by=by, now=now)


def queue_reassign(*, queue: ReviewQueue, assignments: Iterable[Assignment], assignee, by, now=None) -> AssignOutcome:
    """Hand active leases of the queue to another person (admins); the old holders' leases are released.

    A lease that cannot move (the new person wrote the item or already has it) stays where it is
    and is listed in `refused` by item id.
    """
    if not can(by, Action.ADMINISTER, queue.project):
        raise PermissionDenied(_("Only project admins reassign items."))
    _check_assignee(queue, assignee)
    now = now or timezone.now()
    column = KIND_FIELDS[ItemKind(queue.item_kind)]
    outcome = AssignOutcome()
    with transaction.atomic():
        wanted = [a.pk for a in assignments]
        current = {
            a.pk: a
            for a in Assignment.objects.filter(pk__in=wanted, queue=queue, status=A.ACTIVE, item_kind=queue.item_kind)
        }
        replacing: dict[int, Assignment] = {}
        for pk in wanted:
            a = current.get(pk)
            if a is None:
                outcome.refused.append((None, f"Lease {pk} is not an active lease of this queue."))
                continue
            if a.assignee_id == assignee.pk:
                outcome.refused.append((getattr(a, column + "_id"), f"{assignee.get_username()} already holds it."))
                continue
            replacing[getattr(a, column + "_id")] = a
        moved = _assign_locked(queue, list(replacing), assignee=assignee, by=by, now=now, replacing=replacing)
    outcome.assigned = moved.assigned
    outcome.refused += moved.refused
    return outcome


# --- what the pages and the API show ----------------------------------------------------------------


@dataclass(frozen=True)
class QueueStats:
    depth: int  # items in the queue with a free slot
    active: int  # live leases
    expired: int  # leases that lapsed (swept or not yet)


def queue_stats(*, queues: Iterable[ReviewQueue], now=None) -> dict[int, QueueStats]:
    """Depth and leases of each queue: one query per item kind among them, and one for the leases."""
    now = now or timezone.now()
    queues = list(queues)
    depth: dict[int, int] = {}
    by_kind: dict[str, list[ReviewQueue]] = defaultdict(list)
    for queue in queues:
        by_kind[queue.item_kind].append(queue)
    for kind, group in by_kind.items():
        counts = {f"q{q.pk}": Count("pk", filter=open_q(q, now) & Q(project_id=q.project_id)) for q in group}
        projects = {q.project_id for q in group}
        depth.update(
            {
                int(k[1:]): v
                for k, v in kind_model(kind).objects.filter(project_id__in=projects).aggregate(**counts).items()
            }
        )
    leases = (
        Assignment.objects.filter(queue__in=[q.pk for q in queues])
        .values("queue")
        .annotate(
            active=Count("pk", filter=Q(status=A.ACTIVE, lease_expires_at__gt=now)),
            expired=Count("pk", filter=Q(status=A.EXPIRED) | Q(status=A.ACTIVE, lease_expires_at__lte=now)),
        )
        .order_by()
    )
    by_queue = {row["queue"]: row for row in leases} if queues else {}
    return {
        q.pk: QueueStats(
            depth=depth.get(q.pk, 0),
            active=by_queue.get(q.pk, {}).get("active", 0),
            expired=by_queue.get(q.pk, {}).get("expired", 0),
        )
        for q in queues
    }


def queues_for(*, project: Project, user):
    """The queues a person sees: all of the project's for its admins, their own for members."""
    queues = ReviewQueue.objects.filter(project=project).select_related("project")
    if not can(user, Action.ADMINISTER, project):
        queues = queues.filter(members=user)
    return queues.order_by("-priority", "name", "pk")


@dataclass
class ItemRow:
    item: object
    url: str
    holders: list[Assignment]
    free: int


def queue_item_rows(*, queue: ReviewQueue, limit: int = 100, now=None) -> tuple[list[ItemRow], int]:
    """The queue's items, oldest first, with this round's holders; and how many there are in all."""
    now = now or timezone.now()
    column = KIND_FIELDS[ItemKind(queue.item_kind)]
    items_qs = queue_items(queue)
    total = items_qs.count()
    items = list(items_qs.select_related("author").order_by(*_oldest_first())[:limit])
    rounds = {item.pk: item.submitted_at or _BEGINNING for item in items}
    held = (
        Assignment.objects.filter(_holding(now), **{f"{column}__in": list(rounds)}, stage=queue.stage)
        .select_related("assignee")
        .order_by("leased_at", "pk")
    )
    holders: dict[int, list[Assignment]] = defaultdict(list)
    for a in held:
        item_id = getattr(a, f"{column}_id")
        if a.leased_at >= rounds[item_id]:
            holders[item_id].append(a)
    rows = []
    for item in items:
        item.project = queue.project
        mine = holders.get(item.pk, [])
        rows.append(ItemRow(item=item, url=item_url(item), holders=mine, free=max(queue.overlap - len(mine), 0)))
    return rows, total


def queue_active_leases(*, queue: ReviewQueue, now=None, limit: int = 200) -> list[Assignment]:
    now = now or timezone.now()
    return list(
        Assignment.objects.filter(queue=queue, status=A.ACTIVE, lease_expires_at__gt=now)
        .select_related("assignee", "assigned_by")
        .order_by("lease_expires_at", "pk")[:limit]
    )


def leases_of(*, project: Project, user, now=None) -> list[Assignment]:
    """This person's live leases in the project, soonest to lapse first."""
    now = now or timezone.now()
    return list(
        Assignment.objects.filter(project=project, assignee=user, status=A.ACTIVE, lease_expires_at__gt=now)
        .select_related("queue")
        .order_by("lease_expires_at", "pk")
    )
