"""Work that does not move by itself, and what a project admin does about it.

Three kinds of stuck work:
- items waiting in "submitted" for the LLM judge (no endpoint, a failed or never-run judge job,
  a project whose fallback is to wait for an admin);
- failed background jobs that nobody retried yet (a newer job for the same target replaces one);
- lapsed leases: someone claimed an item and left, and nobody took it since.

Bulk actions: judge again, move on without a score (to examining, or back to the author), retry
failed jobs, and hand lapsed leases to a chosen member. Every move of an item is an
item_transition whose reasons say why (REASON_NOT_SCORED and a cause), so the history explains it.

The gate switched off (or narrowed to fewer kinds) releases every item it held: `gate_off_release`
runs when the project's settings change (registered in ReviewerConfig.ready).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.lifecycle import TransitionRefused, item_transition
from annotator.models import ItemKind, ItemStatus, ReviewEvent
from jobs.models import BackgroundJob, JobStatus
from jobs.selectors import jobs_failed, jobs_latest_for
from jobs.services import JobAlreadyRunning, job_retry
from projects.models import Project
from projects.permissions import Action, can
from projects.refusals import Refused

from .models import Assignment, AssignmentStatus
from .quality_gate import (
    MODELS,
    REASON_GATE_OFF,
    REASON_NOT_SCORED,
    gate_applies,
    gate_on_submit,
    item_not_scored_move,
)
from .queues import KIND_FIELDS, queue_assign_items

S = ItemStatus
A = AssignmentStatus

CAUSE_ADMIN = "moved_by_admin"
# Why an item went on without a score, as examiners read it.
NOT_SCORED_LABELS = {
    REASON_NOT_SCORED: gettext_lazy("Not scored by the judge"),
    "no_model_endpoint": gettext_lazy("no model endpoint"),
    "judge_model_failed": gettext_lazy("the judge model failed"),
    "judge_answer_unusable": gettext_lazy("the judge's answer was unusable"),
    "judge_no_frames": gettext_lazy("no frames for the judge"),
    CAUSE_ADMIN: gettext_lazy("moved on by an admin"),
}
# Statuses in which an item still waits for the stage a lapsed lease was for.
_AT_STAGE = {
    S.ANNOTATING: {S.DRAFT, S.ANNOTATING},
    S.EXAMINING: {S.SUBMITTED, S.SCORED, S.EXAMINING},
    S.REVISING: {S.FLAGGED, S.REVISING},
}
LIMIT = 200
# What item_label reads, loaded with the items.
_LABEL_RELATED = {ItemKind.QA_CHAIN: ("clip__video",), ItemKind.CHAIN_PAIR: ("video",), ItemKind.MCQ: ()}


class StuckRefused(Refused):
    status, code = 403, "stuck_refused"


# --- "not scored" marks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NotScored:
    cause: str
    label: str
    reason: str  # the sentence the move was logged with


def not_scored_notes(items) -> dict[tuple[str, int], NotScored]:
    """For each item whose latest move was made without a judge's score: why. One query per kind.

    Keys are (item kind, item id); items that were scored, or moved for another reason, are absent.
    """
    by_kind: dict[str, list[int]] = defaultdict(list)
    for item in items:
        by_kind[ItemKind(_kind(item)).value].append(item.pk)
    notes = {}
    for kind, ids in by_kind.items():
        column = KIND_FIELDS[ItemKind(kind)]
        # The latest event of each item, by a correlated subquery: DISTINCT ON is PostgreSQL's
        # alone, and `make run` runs on SQLite.
        newest = ReviewEvent.objects.filter(**{column: OuterRef(column)}).order_by("-created_at", "-id")
        latest = ReviewEvent.objects.filter(**{f"{column}_id__in": ids}, pk=Subquery(newest.values("pk")[:1])).values(
            f"{column}_id", "reasons", "comment"
        )
        for row in latest:
            reasons = row["reasons"] or []
            if REASON_NOT_SCORED not in reasons:
                continue
            cause = next((r for r in reasons if r != REASON_NOT_SCORED), "")
            label = NOT_SCORED_LABELS[REASON_NOT_SCORED]
            if cause in NOT_SCORED_LABELS:
                label = f"{label}: {NOT_SCORED_LABELS[cause]}"
            # The reason was logged in English by the worker; a sentence the catalogue knows (e.g. "No
            # model endpoint is set …") is shown in the reader's language, anything else as logged.
            reason = _(row["comment"]) if row["comment"] else ""
            notes[(kind, row[f"{column}_id"])] = NotScored(cause=cause, label=str(label), reason=reason)
    return notes


def not_scored_note(item) -> NotScored | None:
    return not_scored_notes([item]).get((_kind(item), item.pk))


def _kind(item) -> str:
    for kind, model in MODELS.items():
        if isinstance(item, model):
            return kind.value
    raise TypeError(f"{type(item).__name__} is not a reviewable item")


# --- what is stuck ---------------------------------------------------------------------------------------


@dataclass
class WaitingItem:
    kind: str
    item: object
    job: BackgroundJob | None  # its latest judge job, if any

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.item.pk}"

    @property
    def judge_active(self) -> bool:
        return self.job is not None and self.job.status in (JobStatus.QUEUED, JobStatus.RUNNING)


@dataclass
class StuckWork:
    waiting: list[WaitingItem] = field(default_factory=list)
    failed_jobs: list[BackgroundJob] = field(default_factory=list)
    lapsed_leases: list[Assignment] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.waiting) + len(self.failed_jobs) + len(self.lapsed_leases)


def items_waiting(*, project: Project, limit: int = LIMIT) -> list[WaitingItem]:
    """Items in "submitted" (waiting for the judge or the gate), oldest submit first, with their latest judge job."""
    from .quality_gate import JUDGE_TASK

    rows = []
    for kind, model in MODELS.items():
        waiting = model.objects.filter(project=project, status=S.SUBMITTED).select_related(*_LABEL_RELATED[kind])
        items = list(waiting.order_by("submitted_at", "pk")[:limit])
        for item in items:
            item.project = project
        latest = jobs_latest_for(project=project, targets=items) if items else {}
        for item in items:
            job = latest.get(item.pk)
            rows.append(WaitingItem(kind=kind.value, item=item, job=job if job and job.kind == JUDGE_TASK else None))
    rows.sort(key=lambda row: (row.item.submitted_at or row.item.created_at, row.kind, row.item.pk))
    return rows[:limit]


def failed_jobs_open(*, project: Project, limit: int = LIMIT) -> list[BackgroundJob]:
    """Failed jobs that no newer job of the same kind and target replaced, newest first."""
    newer = BackgroundJob.objects.filter(
        project_id=OuterRef("project_id"),
        kind=OuterRef("kind"),
        target_type=OuterRef("target_type"),
        target_id=OuterRef("target_id"),
        pk__gt=OuterRef("pk"),
    ).filter(~Q(target_type="") | Q(params=OuterRef("params")))  # a job with no target: the same parameters
    return list(jobs_failed(project=project).exclude(Exists(newer))[:limit])


def leases_lapsed(*, project: Project, now=None, limit: int = LIMIT) -> list[Assignment]:
    """Leases that ran out while their item still waits at that stage, and nobody claimed it since."""
    now = now or timezone.now()
    newer = Assignment.objects.filter(
        Q(qa_chain=OuterRef("qa_chain")) | Q(mcq=OuterRef("mcq")) | Q(chain_pair=OuterRef("chain_pair")),
        stage=OuterRef("stage"),
        leased_at__gt=OuterRef("leased_at"),
    )
    lapsed = (
        Assignment.objects.filter(project=project, queue__isnull=False)
        .filter(Q(status=A.EXPIRED) | Q(status=A.ACTIVE, lease_expires_at__lte=now))
        .exclude(Exists(newer))
        .select_related("queue", "assignee", "qa_chain__clip__video", "chain_pair__video", "mcq")
        .defer("qa_chain__clip__video__probe", "chain_pair__video__probe", "qa_chain__machine_draft")
        .order_by("lease_expires_at", "pk")
    )
    return [a for a in lapsed[:limit] if a.item.status in _AT_STAGE.get(a.stage, ())]


def stuck_work(*, project: Project) -> StuckWork:
    return StuckWork(
        waiting=items_waiting(project=project),
        failed_jobs=failed_jobs_open(project=project),
        lapsed_leases=leases_lapsed(project=project),
    )


# --- bulk actions -----------------------------------------------------------------------------------------


@dataclass
class BulkOutcome:
    done: int = 0
    refused: list[str] = field(default_factory=list)


def _require_admin(project: Project, user) -> None:
    if not can(user, Action.ADMINISTER, project):
        raise StuckRefused(_("Only the project's admins can act on stuck work."))


def _submitted_items(project: Project, keys) -> list[tuple[str, object]]:
    """("qa_chain:12", …) → the project's items, in a fixed order; unknown keys are skipped."""
    wanted: dict[str, set[int]] = defaultdict(set)
    for key in keys:
        kind, _sep, pk = str(key).partition(":")
        if kind in ItemKind.values and pk.isdigit():
            wanted[kind].add(int(pk))
    found = []
    for kind, ids in sorted(wanted.items()):
        for item in MODELS[ItemKind(kind)].objects.filter(project=project, pk__in=ids).order_by("pk"):
            item.project = project
            found.append((kind, item))
    return found


def stuck_judge_again(*, project: Project, user, item_keys) -> BulkOutcome:
    """Send each chosen submitted item to the judge again (or on, by the gate and its fallback)."""
    _require_admin(project, user)
    outcome = BulkOutcome()
    for kind, item in _submitted_items(project, item_keys):
        if item.status != S.SUBMITTED:
            outcome.refused.append(_("%(kind)s %(id)s is not waiting any more.") % {"kind": kind, "id": item.pk})
            continue
        gate = gate_on_submit(item=item, user=user)
        if gate.waiting:
            outcome.refused.append(f"{kind} {item.pk}: {gate.waiting}")
        else:
            outcome.done += 1
    return outcome


def stuck_move(*, project: Project, user, item_keys, to_status: str) -> BulkOutcome:
    """Move chosen submitted items on without a score: to examining, or back to their author (revising)."""
    _require_admin(project, user)
    if to_status not in (S.EXAMINING, S.REVISING):
        raise ValueError(f"Stuck items move to examining or revising, not {to_status!r}.")
    message = _("Moved on without a judge's score by %(admin)s.") % {"admin": user.get_username()}
    outcome = BulkOutcome()
    for kind, item in _submitted_items(project, item_keys):
        moved = item_not_scored_move(item=item, to_status=to_status, cause=CAUSE_ADMIN, message=message, actor=user)
        if moved is None:
            outcome.refused.append(_("%(kind)s %(id)s is not waiting any more.") % {"kind": kind, "id": item.pk})
        else:
            outcome.done += 1
    return outcome


def stuck_jobs_retry(*, project: Project, user, job_ids) -> BulkOutcome:
    """Retry the chosen failed jobs of the project; each refusal (no endpoint, already running) is listed."""
    _require_admin(project, user)
    outcome = BulkOutcome()
    ids = [int(i) for i in job_ids if str(i).isdigit()]
    for job in BackgroundJob.objects.filter(project=project, pk__in=ids).order_by("pk"):
        try:
            job_retry(job=job, user=user)
        except JobAlreadyRunning:
            outcome.refused.append(_("Job %(id)s: a newer one is already on its way.") % {"id": job.pk})
        except (Refused, ValueError) as exc:
            outcome.refused.append(_("Job %(id)s: %(reason)s") % {"id": job.pk, "reason": exc})
        except ObjectDoesNotExist:
            outcome.refused.append(_("Job %(id)s: its target no longer exists.") % {"id": job.pk})
        else:
            outcome.done += 1
    return outcome


def stuck_leases_reassign(*, project: Project, user, assignment_ids, assignee) -> BulkOutcome:
    """Give the items of chosen lapsed leases to `assignee`, queue by queue, by the queues' own rules."""
    _require_admin(project, user)
    ids = [int(i) for i in assignment_ids if str(i).isdigit()]
    lapsed = {a.pk: a for a in leases_lapsed(project=project, limit=10_000) if a.pk in ids}
    outcome = BulkOutcome()
    for pk in ids:
        if pk not in lapsed:
            outcome.refused.append(_("Lease %(id)s is no longer a lapsed lease of this project.") % {"id": pk})
    by_queue: dict[int, list[Assignment]] = defaultdict(list)
    for lease in lapsed.values():
        by_queue[lease.queue_id].append(lease)
    for leases in by_queue.values():
        queue = leases[0].queue
        column = KIND_FIELDS[ItemKind(queue.item_kind)]
        try:
            assigned = queue_assign_items(
                queue=queue, items=[getattr(a, f"{column}_id") for a in leases], assignee=assignee, by=user
            )
        except Refused as exc:
            outcome.refused.append(f"{queue.name}: {exc}")
            continue
        outcome.done += len(assigned.assigned)
        outcome.refused += [f"{queue.name}, item {item_id}: {why}" for item_id, why in assigned.refused]
    return outcome


# --- the gate switched off ------------------------------------------------------------------------------


def gate_off_release(*, project: Project, actor=None) -> int:
    """Pass every submitted item of a kind the gate no longer covers on to examining, with the reason.

    Items of kinds the gate still covers stay with the judge. Returns how many moved.
    """
    moved = 0
    comment = _("The quality gate was switched off for this kind; passed on to examining unscored.")
    for kind, model in MODELS.items():
        if gate_applies(project=project, kind=kind.value):
            continue
        for item in model.objects.filter(project=project, status=S.SUBMITTED).order_by("pk"):
            try:
                with transaction.atomic():
                    item_transition(
                        item=item,
                        to_status=S.EXAMINING,
                        actor=actor,
                        reasons=[REASON_GATE_OFF],
                        comment=comment,
                        expect_from=S.SUBMITTED,
                    )
            except TransitionRefused:
                continue  # someone moved it meanwhile
            moved += 1
    return moved


GATE_FIELDS = {"judge_enabled", "models_per_step"}


def gate_settings_changed(*, project: Project, user, changed: dict) -> None:
    """Receiver of projects' settings changes: a gate switched off (or narrowed) releases its waiting items."""
    if GATE_FIELDS & set(changed):
        gate_off_release(project=project, actor=user)


def stuck_work_total(*, project: Project, submitted: int | None = None) -> int:
    """How many things the stuck-work page lists (for "what to do next"); `submitted` when already counted."""
    if submitted is None:
        submitted = sum(m.objects.filter(project=project, status=S.SUBMITTED).count() for m in MODELS.values())
    return submitted + len(failed_jobs_open(project=project)) + len(leases_lapsed(project=project))
