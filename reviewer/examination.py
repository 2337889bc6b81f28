"""Examination and revision: the examiner's pass or flag, the reviser's start, the admin's reopen.

Flow of one item (annotator.lifecycle holds the state machine):

    scored (or submitted, when the gate does not cover the kind) → examining → accepted | flagged
    flagged → revising (a reviser starts) → submitted (the editor's resubmit) → …
    accepted → revising (an admin reopens, with a comment)

An examiner's verdict is an `ExamVerdict` of the item's current *round* (its latest submit). A
queue's `overlap` says how many examiners judge each round: the item waits in "examining" until
that many verdicts are in, then any flag flags it (the reasons of every flag, the comments of
every flagger) and otherwise it is accepted. The overlap that counts is the highest among the
queues of this round's verdicts and examining leases, 1 when nobody came through a queue.

Examiners and revisers are never the item's author (projects.permissions.can refuses them); every
move is a ReviewEvent, so reopening accepted work is logged like every other transition.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import DateTimeField, Exists, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, ngettext

from annotator.lifecycle import Transition, item_transition
from annotator.models import MCQ, ChainPair, ItemKind, ItemRef, ItemStatus, QAChain, ReviewEvent
from projects.models import Project
from projects.permissions import Action, can
from projects.refusals import Refused

from .history import item_label
from .models import Assignment, AssignmentStatus, ExamVerdict, QualityScore, ReviewQueue
from .quality_gate import REASON_BELOW, REASON_GATE_OFF, REASON_PASSED, gate_applies
from .queues import (
    _BEGINNING,
    KIND_FIELDS,
    KIND_MODELS,
    ClaimRefused,
    assignment_complete,
    item_path,
    queue_claim_next,
)
from .stuck_work import NOT_SCORED_LABELS

S = ItemStatus
A = AssignmentStatus

REASON_OTHER = "other"
REASON_REOPEN = "admin_reopen"

# What an examiner checks, per kind of item, in the order the page lists them (keys 1–9 toggle
# them). A failing check is a flag's reason; "other" asks for a comment saying what.
CHECKLISTS: dict[str, list[tuple[str, str]]] = {
    ItemKind.QA_CHAIN.value: [
        ("skills_right", gettext_lazy("Each turn's skill (category) is right")),
        ("coherent_pronouns", gettext_lazy("The chain is coherent: later turns use pronouns, not repeated names")),
        ("answers_grounded", gettext_lazy("Every answer is grounded in what the clip shows")),
        ("needs_video", gettext_lazy("The questions need the video, not common knowledge")),
        ("no_duplicates", gettext_lazy("No two turns ask or answer the same thing")),
        (REASON_OTHER, gettext_lazy("Nothing else is wrong (untick and say what in the comment)")),
    ],
    ItemKind.CHAIN_PAIR.value: [
        ("needs_earlier_clip", gettext_lazy("Each accepted relation really needs the earlier clip")),
        ("relation_type_right", gettext_lazy("Each relation's type is right")),
        ("follows_guideline", gettext_lazy("Each rewrite follows its type's modification guideline")),
        ("rewrite_answerable", gettext_lazy("Each rewritten QA is still answerable from the clips")),
        (REASON_OTHER, gettext_lazy("Nothing else is wrong (untick and say what in the comment)")),
    ],
    ItemKind.MCQ.value: [
        ("category_right", gettext_lazy("The category is right")),
        ("referring_query_marked", gettext_lazy("The referring query is present and marked in the question")),
        ("moments_stamped", gettext_lazy("Every referred moment is stamped")),
        ("options_plausible", gettext_lazy("The distractors are plausible: no option gives the answer away")),
        ("one_correct", gettext_lazy("Exactly one option is correct, and it is the one marked")),
        ("needs_video", gettext_lazy("The question can be answered only with the video")),
        (REASON_OTHER, gettext_lazy("Nothing else is wrong (untick and say what in the comment)")),
    ],
}

# Reasons that other steps put on events, for the lists that show them beside the examiners' reasons.
_OTHER_REASONS = {
    REASON_BELOW: gettext_lazy("The judge scored it below the threshold"),
    REASON_PASSED: gettext_lazy("The judge passed it"),
    REASON_GATE_OFF: gettext_lazy("No quality gate for this kind"),
    REASON_REOPEN: gettext_lazy("Reopened by an admin"),
    "admin_revert": gettext_lazy("Admin revert"),
    **NOT_SCORED_LABELS,
}
_SHORT_OTHER = gettext_lazy("Something else (see the comment)")
ROUND_ZERO = _BEGINNING  # the round of an item never submitted

# Where an examiner may give a verdict: examining, and the statuses an examining queue holds.
EXAMINABLE = (S.SCORED, S.EXAMINING, S.SUBMITTED)


class ReviewRefused(Refused):
    """A review action refused; `code` says why ("not_allowed" means the person may not do it at all)."""

    status = 422
    code_statuses = {"not_allowed": 403, "stale": 409, "already": 409, "not_examinable": 409}

    def __init__(self, code: str, message: str):
        super().__init__(message, code=code)


class VerdictRefused(ReviewRefused):
    """codes: not_allowed, not_examinable, stale, no_reason, unknown_reason, contradiction, needs_comment, already"""


class RevisionRefused(ReviewRefused):
    """codes: not_allowed, not_flagged"""


class ReopenRefused(ReviewRefused):
    """codes: not_allowed, not_accepted, needs_comment"""


# --- checklists and labels -------------------------------------------------------------------------


def kind_of(item) -> str:
    return ItemRef.ref_for(item)["item_kind"].value


def checklist_for(kind: str) -> list[tuple[str, str]]:
    return CHECKLISTS[ItemKind(kind).value]


def reason_label(kind: str, code: str) -> str:
    """A reason code as people read it: the check that failed, or what the step that gave it means."""
    if code == REASON_OTHER:
        return str(_SHORT_OTHER)
    for check, label in CHECKLISTS.get(kind, []):
        if check == code:
            return str(label)
    return str(_OTHER_REASONS.get(code, code.replace("_", " ")))


def reason_labels(kind: str, codes) -> list[str]:
    return [reason_label(kind, c) for c in codes or []]


def item_round(item) -> dt.datetime:
    """The start of the item's current round: its latest submit."""
    return item.submitted_at or ROUND_ZERO


# --- verdicts -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VerdictOutcome:
    verdict: ExamVerdict
    item: object
    status: str  # the item's status after the verdict
    required: int  # verdicts this round needs
    given: int  # verdicts this round has, this one included
    transition: Transition | None = None  # the decision (accepted or flagged), when it was made

    @property
    def decided(self) -> bool:
        return self.transition is not None

    @property
    def waiting_for(self) -> int:
        return max(self.required - self.given, 0)

    @property
    def message(self) -> str:
        if self.status == S.ACCEPTED:
            if self.given <= 1:
                return gettext("Passed: the item is accepted.")
            if self.verdict.passed:
                return gettext("Your pass is recorded: the item is accepted.")
            return gettext("Your flag is recorded: the item is accepted.")
        if self.status == S.FLAGGED:
            n = len(self.transition.event.reasons) if self.transition else 0
            return ngettext(
                "Flagged: the item goes to a reviser with %(n)d reason.",
                "Flagged: the item goes to a reviser with %(n)d reasons.",
                n,
            ) % {"n": n}
        n = self.waiting_for
        if self.verdict.passed:
            return ngettext(
                "Your pass is recorded; waiting for %(n)d more examiner.",
                "Your pass is recorded; waiting for %(n)d more examiners.",
                n,
            ) % {"n": n}
        return ngettext(
            "Your flag is recorded; waiting for %(n)d more examiner.",
            "Your flag is recorded; waiting for %(n)d more examiners.",
            n,
        ) % {"n": n}


def _lock_item(item):
    model = type(item)
    if model not in (QAChain, ChainPair, MCQ):
        raise TypeError(f"{model.__name__} is not a reviewable item")
    locked = model.objects.select_for_update(of=("self",)).get(pk=item.pk)
    locked.project = item.project
    return locked


def _clean_reasons(kind: str, reasons, *, passed: bool, comment: str, checklist) -> tuple[list[str], dict]:
    codes = [code for code, _ in checklist_for(kind)]
    seen = []
    for reason in reasons or []:
        if not isinstance(reason, str):
            raise VerdictRefused("unknown_reason", gettext("A reason must be the code of a check."))
        if reason not in seen:
            seen.append(reason)
    unknown = [r for r in seen if r not in codes]
    if unknown:
        raise VerdictRefused(
            "unknown_reason",
            ngettext(
                "Unknown reason %(unknown)s; the checks are %(codes)s.",
                "Unknown reasons %(unknown)s; the checks are %(codes)s.",
                len(unknown),
            )
            % {"unknown": ", ".join(unknown), "codes": ", ".join(codes)},
        )
    ticks = {}
    if checklist:
        if not isinstance(checklist, dict):
            raise VerdictRefused("unknown_reason", gettext("The checklist must map each check to whether it holds."))
        strange = [c for c in checklist if c not in codes]
        if strange:
            raise VerdictRefused(
                "unknown_reason",
                ngettext("Unknown check %(checks)s.", "Unknown checks %(checks)s.", len(strange))
                % {"checks": ", ".join(strange)},
            )
        ticks = {c: bool(v) for c, v in checklist.items()}
    both = [r for r in seen if ticks.get(r) is True]
    if both:
        labels = "; ".join(reason_label(kind, r) for r in both)
        raise VerdictRefused(
            "contradiction", gettext("Ticked as fine and named as a reason at once: %(labels)s.") % {"labels": labels}
        )
    if passed:
        failing = seen + [c for c, ok in ticks.items() if not ok and c not in seen]
        if failing:
            labels = "; ".join(reason_label(kind, r) for r in failing)
            raise VerdictRefused(
                "contradiction",
                gettext("A pass cannot leave checks failing (%(labels)s): flag the item, or tick them again.")
                % {"labels": labels},
            )
    else:
        if not seen:
            raise VerdictRefused(
                "no_reason", gettext("A flag needs at least one reason: untick the check(s) the item fails, then flag.")
            )
        if REASON_OTHER in seen and not comment:
            raise VerdictRefused("needs_comment", gettext("You flagged “something else”: say what in the comment."))
    # The whole checklist as decided: what was not named is taken as holding.
    full = {code: code not in seen and ticks.get(code, True) for code in codes}
    return [c for c in codes if c in seen], full


def _required(item, kind: str, round_start, queue: ReviewQueue | None) -> int:
    """How many verdicts this round needs: the highest overlap among the queues it came through."""
    column = KIND_FIELDS[ItemKind(kind)]
    queue_ids = set(
        ExamVerdict.objects.filter(**{column: item}, round_started_at=round_start)
        .exclude(queue=None)
        .values_list("queue_id", flat=True)
    )
    queue_ids |= set(
        Assignment.objects.filter(
            **{column: item}, stage=S.EXAMINING, status__in=[A.ACTIVE, A.COMPLETED], leased_at__gte=round_start
        )
        .exclude(queue=None)
        .values_list("queue_id", flat=True)
    )
    overlaps = list(ReviewQueue.objects.filter(pk__in=queue_ids).values_list("overlap", flat=True)) if queue_ids else []
    if queue is not None:
        overlaps.append(queue.overlap)
    return max(overlaps, default=1)


def verdict_submit(
    *,
    item,
    examiner,
    passed: bool,
    reasons: list[str],
    comment: str = "",
    checklist: dict | None = None,
    expected_version: int | None = None,
    seconds_spent: int | None = None,
) -> VerdictOutcome:
    """Record one examiner's pass or flag on the item's current round, and decide once enough are in.

    Raises VerdictRefused (see its codes); nothing is recorded then.
    """
    kind = kind_of(item)
    project = item.project
    comment = (comment or "").strip()
    if not can(examiner, Action.EXAMINE, project):
        raise VerdictRefused(
            "not_allowed", gettext("Your role in %(project)s does not include examining.") % {"project": project.name}
        )
    if getattr(item, "author_id", None) == examiner.pk:
        raise VerdictRefused("not_allowed", gettext("You wrote this item: someone else examines it."))
    reasons, full = _clean_reasons(kind, reasons, passed=passed, comment=comment, checklist=checklist)
    column = KIND_FIELDS[ItemKind(kind)]
    with transaction.atomic():
        locked = _lock_item(item)
        if not can(examiner, Action.EXAMINE, project, locked):
            raise VerdictRefused("not_allowed", gettext("You wrote this item: someone else examines it."))
        status = locked.status
        examinable = status in (S.SCORED, S.EXAMINING) or (
            status == S.SUBMITTED and not gate_applies(project=project, kind=kind)
        )
        if not examinable:
            raise VerdictRefused(
                "not_examinable",
                (
                    gettext("This item is %(status)s, not waiting for an examiner: it has been decided already.")
                    if status in (S.ACCEPTED, S.FLAGGED)
                    else gettext("This item is %(status)s, not waiting for an examiner.")
                )
                % {"status": locked.get_status_display().lower()},
            )
        if expected_version is not None and locked.version != expected_version:
            raise VerdictRefused(
                "stale",
                gettext(
                    "This item changed to version %(version)s after you opened version %(expected)s: "
                    "look at what changed and decide again."
                )
                % {"version": locked.version, "expected": expected_version},
            )
        round_start = item_round(locked)
        if ExamVerdict.objects.filter(**{column: locked}, round_started_at=round_start, examiner=examiner).exists():
            raise VerdictRefused("already", gettext("You already gave your verdict on this version of the item."))
        if status != S.EXAMINING:
            item_transition(item=locked, to_status=S.EXAMINING, actor=examiner, expect_from=status)
        lease = (
            Assignment.objects.filter(**{column: locked}, assignee=examiner, status=A.ACTIVE, stage=S.EXAMINING)
            .select_related("queue")
            .order_by("-leased_at", "-pk")
            .first()
        )
        queue = lease.queue if lease is not None else None
        try:
            with transaction.atomic():
                verdict = ExamVerdict.objects.create(
                    project=project,
                    examiner=examiner,
                    assignment=lease,
                    queue=queue,
                    round_started_at=round_start,
                    item_version=locked.version,
                    passed=bool(passed),
                    reasons=reasons,
                    checklist=full,
                    comment=comment,
                    seconds_spent=max(int(seconds_spent), 0) if seconds_spent is not None else None,
                    **ItemRef.ref_for(locked),
                )
        except IntegrityError:  # the unique constraint: a verdict by the same examiner committed meanwhile
            raise VerdictRefused(
                "already", gettext("You already gave your verdict on this version of the item.")
            ) from None
        assignment_complete(user=examiner, item=locked, stage=S.EXAMINING)

        required = _required(locked, kind, round_start, queue)
        verdicts = list(ExamVerdict.objects.filter(**{column: locked}, round_started_at=round_start).order_by("pk"))
        transition = None
        if len(verdicts) >= required:
            flags = [v for v in verdicts if not v.passed]
            if flags:
                codes = [c for c, _ in checklist_for(kind)]
                union = [c for c in codes if any(c in v.reasons for v in flags)]
                transition = item_transition(
                    item=locked,
                    to_status=S.FLAGGED,
                    actor=examiner,
                    reasons=union,
                    comment="\n\n".join(v.comment for v in flags if v.comment),
                    expect_from=S.EXAMINING,
                )
            else:
                transition = item_transition(item=locked, to_status=S.ACCEPTED, actor=examiner, expect_from=S.EXAMINING)
    item.status = locked.status
    return VerdictOutcome(
        verdict=verdict,
        item=locked,
        status=locked.status,
        required=required,
        given=len(verdicts),
        transition=transition,
    )


# --- revision and reopening ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RevisionStarted:
    item: object
    transition: Transition | None  # None when it was already being revised

    @property
    def already(self) -> bool:
        return self.transition is None


def revision_start(*, item, reviser) -> RevisionStarted:
    """A reviser takes a flagged item on (flagged → revising); an item already in revision is left as it is."""
    project = item.project
    if not can(reviser, Action.REVISE, project):
        raise RevisionRefused(
            "not_allowed", gettext("Your role in %(project)s does not include revising.") % {"project": project.name}
        )
    if not can(reviser, Action.REVISE, project, item):
        raise RevisionRefused("not_allowed", gettext("You wrote this item: someone else revises it."))
    with transaction.atomic():
        locked = _lock_item(item)
        if locked.status == S.REVISING:
            item.status = locked.status
            return RevisionStarted(item=locked, transition=None)
        if locked.status != S.FLAGGED:
            raise RevisionRefused(
                "not_flagged",
                gettext("This item is %(status)s: only a flagged item can be taken into revision.")
                % {"status": locked.get_status_display().lower()},
            )
        moved = item_transition(item=locked, to_status=S.REVISING, actor=reviser, expect_from=S.FLAGGED)
    item.status = locked.status
    return RevisionStarted(item=moved.item, transition=moved)


def item_reopen(*, item, by, comment: str) -> Transition:
    """An admin sends accepted work back to revision (accepted → revising), saying why; it is logged."""
    project = item.project
    if not can(by, Action.ADMINISTER, project):
        raise ReopenRefused("not_allowed", gettext("Only a project admin can reopen accepted work."))
    comment = (comment or "").strip()
    if not comment:
        raise ReopenRefused("needs_comment", gettext("Say why the item is reopened: the reviser reads it."))
    with transaction.atomic():
        locked = _lock_item(item)
        if locked.status != S.ACCEPTED:
            raise ReopenRefused(
                "not_accepted",
                gettext("This item is %(status)s, not accepted: there is nothing to reopen.")
                % {"status": locked.get_status_display().lower()},
            )
        moved = item_transition(
            item=locked,
            to_status=S.REVISING,
            actor=by,
            reasons=[REASON_REOPEN],
            comment=comment,
            expect_from=S.ACCEPTED,
        )
    item.status = locked.status
    return moved


# --- what the examiner's page reads ------------------------------------------------------------------------


def item_verdicts(*, item) -> list[ExamVerdict]:
    """Every verdict on the item, all rounds, oldest first."""
    return list(ExamVerdict.objects.filter(**ItemRef.ref_for(item)).select_related("examiner").order_by("pk"))


def previous_submitted_version(*, item) -> int | None:
    """The version the item had at the submit before its latest one (None on its first submission)."""
    versions = list(
        ReviewEvent.objects.filter(**ItemRef.ref_for(item), to_status=S.SUBMITTED)
        .order_by("-created_at", "-pk")
        .values_list("item_version", flat=True)[:2]
    )
    if len(versions) < 2:
        return None
    return versions[1]


def examiner_lease(*, item, user, now=None) -> Assignment | None:
    """This person's live lease on the item at the examining stage, with its queue."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(
            **ItemRef.ref_for(item), assignee=user, status=A.ACTIVE, stage=S.EXAMINING, lease_expires_at__gt=now
        )
        .select_related("queue")
        .order_by("-leased_at", "-pk")
        .first()
    )


def _label_related(kind: str) -> tuple[str, ...]:
    return {
        ItemKind.QA_CHAIN.value: ("clip__video",),
        ItemKind.CHAIN_PAIR.value: ("video",),
        ItemKind.MCQ.value: (),
    }[kind]


def _defer(kind: str) -> tuple[str, ...]:
    related = {
        ItemKind.QA_CHAIN.value: ("clip__video__probe",),
        ItemKind.CHAIN_PAIR.value: ("video__probe",),
        ItemKind.MCQ.value: (),
    }[kind]
    return ("machine_draft", *related)


def examinable_items(*, project: Project, user, limit: int = 20, free_only: bool = False, now=None) -> dict[str, list]:
    """Items waiting for examination that this person did not write and has not judged this round,
    oldest first, per kind (one query per kind). `free_only`: also none someone else holds a live lease on."""
    now = now or timezone.now()
    out = {}
    for kind in ItemKind.values:
        model, column = KIND_MODELS[ItemKind(kind)], KIND_FIELDS[ItemKind(kind)]
        statuses = [S.SCORED, S.EXAMINING] + ([] if gate_applies(project=project, kind=kind) else [S.SUBMITTED])
        this_round = Coalesce(OuterRef("submitted_at"), Value(ROUND_ZERO, output_field=DateTimeField()))
        mine = ExamVerdict.objects.filter(**{column: OuterRef("pk")}, examiner=user, round_started_at=this_round)
        items = model.objects.filter(project=project, status__in=statuses).exclude(author=user).exclude(Exists(mine))
        if free_only:
            held = Assignment.objects.filter(
                **{column: OuterRef("pk")}, stage=S.EXAMINING, status=A.ACTIVE, lease_expires_at__gt=now
            ).exclude(assignee=user)
            items = items.exclude(Exists(held))
        out[kind] = list(
            items.select_related(*_label_related(kind)).defer(*_defer(kind)).order_by("submitted_at", "pk")[:limit]
        )
        for item in out[kind]:
            item.project = project
    return out


def _oldest(items: list, field: str):
    return min(items, key=lambda i: (getattr(i, field) or ROUND_ZERO, i.created_at), default=None)


def _claim_from(queues, user, now):
    for queue in queues:
        try:
            assignment = queue_claim_next(queue=queue, user=user, now=now)
        except ClaimRefused:
            continue  # e.g. the role for that stage was taken away; the other queues still count
        if assignment is not None:
            return assignment.item_object, assignment
    return None, None


def examine_next_item(*, project: Project, user, now=None):
    """The next item for this examiner: claimed from their examining queues, highest priority first;
    when they belong to no examining queue, the oldest item waiting for examination that nobody else
    holds. Returns (item, assignment or None), or (None, None) when nothing is left."""
    now = now or timezone.now()
    queues = list(
        ReviewQueue.objects.filter(project=project, members=user, is_active=True, stage=S.EXAMINING)
        .select_related("project")
        .order_by("-priority", "name", "pk")
    )
    if queues:
        return _claim_from(queues, user, now)
    waiting = examinable_items(project=project, user=user, limit=1, free_only=True, now=now)
    return _oldest([i for items in waiting.values() for i in items], "submitted_at"), None


def revise_next_item(*, project: Project, user, now=None):
    """The next item for this reviser: from their revising queues, else (no revising queue) the oldest
    flagged item they did not write and nobody else holds. Returns (item, assignment or None)."""
    now = now or timezone.now()
    queues = list(
        ReviewQueue.objects.filter(project=project, members=user, is_active=True, stage=S.REVISING)
        .select_related("project")
        .order_by("-priority", "name", "pk")
    )
    if queues:
        return _claim_from(queues, user, now)
    firsts = []
    for kind in ItemKind.values:
        model, column = KIND_MODELS[ItemKind(kind)], KIND_FIELDS[ItemKind(kind)]
        held = Assignment.objects.filter(
            **{column: OuterRef("pk")}, stage=S.REVISING, status=A.ACTIVE, lease_expires_at__gt=now
        ).exclude(assignee=user)
        item = (
            model.objects.filter(project=project, status=S.FLAGGED)
            .exclude(author=user)
            .exclude(Exists(held))
            .order_by("updated_at", "pk")
            .first()
        )
        if item is not None:
            item.project = project
            firsts.append(item)
    return _oldest(firsts, "updated_at"), None


# --- the reviser's list ----------------------------------------------------------------------------------


@dataclass
class FlagNote:
    examiner: object
    reasons: list[str]  # labels
    comment: str


@dataclass
class RevisionRow:
    kind: str
    item: object
    status: str
    since: dt.datetime | None  # when it was flagged (or reopened)
    reasons: list[str]  # labels of the reasons it was sent back with
    comment: str  # the comment of that transition (the flaggers' comments, or the admin's)
    sent_by: object | None  # who flagged or reopened it
    flags: list[FlagNote] = field(default_factory=list)  # each flagging examiner of that round
    judge: QualityScore | None = None  # the latest failing judge score
    reviser: object | None = None  # who took it into revision
    holder: object | None = None  # who holds a live revising lease on it
    reopened: bool = False

    @property
    def label(self) -> str:
        return item_label(self.item)

    @property
    def kind_label(self) -> str:
        return ItemKind(self.kind).label

    @property
    def editor_url(self) -> str:
        return item_path(kind=self.kind, item_id=self.item.pk, slug=self.item.project.slug)


@dataclass
class RevisionList:
    rows: list[RevisionRow]
    truncated: bool  # more items than the limit of some kind


def revision_list(*, project: Project, user, limit: int = 200, now=None) -> RevisionList:
    """Flagged items, and items in revision that came from a flag or a reopen, of every kind, with why.

    Items this person wrote are left out (they never revise their own work). A fixed number of
    queries: one per kind for the items, then one each for events, verdicts, judge scores and leases.
    """
    now = now or timezone.now()
    found: dict[str, list] = {}
    truncated = False
    for kind in ItemKind.values:
        model, column = KIND_MODELS[ItemKind(kind)], KIND_FIELDS[ItemKind(kind)]
        # A move into revising; an event that stays there (an admin's revert) is none.
        into_revising = ReviewEvent.objects.filter(**{column: OuterRef("pk")}, to_status=S.REVISING).exclude(
            from_status=S.REVISING
        )
        came_from = Subquery(into_revising.order_by("-created_at", "-pk").values("from_status")[:1])
        items = list(
            model.objects.filter(project=project)
            .annotate(came_from=came_from)
            .filter(Q(status=S.FLAGGED) | Q(status=S.REVISING, came_from__in=[S.FLAGGED, S.ACCEPTED]))
            .exclude(author=user)
            .select_related(*_label_related(kind))
            .defer(*_defer(kind))
            .order_by("updated_at", "pk")[: limit + 1]
        )
        if len(items) > limit:
            truncated, items = True, items[:limit]
        for item in items:
            item.project = project
        found[kind] = items
    if not any(found.values()):
        return RevisionList(rows=[], truncated=False)

    def ref_q(prefix: str = "") -> Q:
        q = Q(pk__in=[])
        for kind, items in found.items():
            if items:
                q |= Q(**{f"{prefix}{KIND_FIELDS[ItemKind(kind)]}__in": [i.pk for i in items]})
        return q

    def key(row) -> tuple[str, int]:
        kind = row.item_kind
        return kind, getattr(row, f"{KIND_FIELDS[ItemKind(kind)]}_id")

    events: dict[tuple, list[ReviewEvent]] = defaultdict(list)
    for event in (
        ReviewEvent.objects.filter(ref_q(), to_status__in=[S.FLAGGED, S.REVISING])
        .select_related("actor")
        .order_by("created_at", "pk")
    ):
        events[key(event)].append(event)
    flags: dict[tuple, list[ExamVerdict]] = defaultdict(list)
    for verdict in ExamVerdict.objects.filter(ref_q(), passed=False).select_related("examiner").order_by("pk"):
        flags[key(verdict)].append(verdict)
    judged: dict[tuple, QualityScore] = {}
    for score in QualityScore.objects.filter(ref_q(), passed=False).order_by("created_at", "pk"):
        judged[key(score)] = score  # the latest wins
    holders: dict[tuple, object] = {}
    for lease in (
        Assignment.objects.filter(ref_q(), stage=S.REVISING, status=A.ACTIVE, lease_expires_at__gt=now)
        .select_related("assignee")
        .order_by("leased_at", "pk")
    ):
        holders[key(lease)] = lease.assignee

    rows = []
    for kind, items in found.items():
        for item in items:
            k = (kind, item.pk)
            history = events.get(k, [])
            into_revising = next(
                (e for e in reversed(history) if e.to_status == S.REVISING and e.from_status != S.REVISING), None
            )
            flagged = next((e for e in reversed(history) if e.to_status == S.FLAGGED), None)
            reopened = (
                item.status == S.REVISING and into_revising is not None and into_revising.from_status == S.ACCEPTED
            )
            cause = into_revising if reopened else flagged
            # A flagged item keeps its round until it is resubmitted: the flags of that round are why.
            round_start = item_round(item)
            round_flags = [] if reopened else [v for v in flags.get(k, []) if v.round_started_at == round_start]
            rows.append(
                RevisionRow(
                    kind=kind,
                    item=item,
                    status=item.status,
                    since=cause.created_at if cause else None,
                    reasons=reason_labels(kind, cause.reasons if cause else []),
                    comment=cause.comment if cause else "",
                    sent_by=cause.actor if cause else None,
                    flags=[FlagNote(v.examiner, reason_labels(kind, v.reasons), v.comment) for v in round_flags],
                    judge=judged.get(k),
                    reviser=into_revising.actor if item.status == S.REVISING and into_revising else None,
                    holder=holders.get(k),
                    reopened=reopened,
                )
            )
    far = dt.datetime.max.replace(tzinfo=dt.UTC)
    rows.sort(key=lambda r: (r.status != S.FLAGGED, r.since or far, r.kind, r.item.pk))
    return RevisionList(rows=rows, truncated=truncated)
