"""The annotator's workspace where it meets the review app's leases and feedback.

- what every editor (chain, links of a chain pair, MCQ) shows above the item itself: "Why it came
  back" (feedback.item_feedback: the judge's scores and comments, the examiner's flag reasons, or
  the admin's reopen comment, while the item is in revision) and the person's lease on the item,
  as the element static/js/lease.js keeps alive (templates/annotator/_panels.html#lease documents
  the contract): one query for the lease, and for an item in revision two for the feedback;
- the work list and the next item: what this person may take on (annotator.selectors.to_do_q),
  less what someone else holds a lease on.

Each read is a fixed number of queries whatever the project holds (tests pin the counts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Case, Count, Exists, IntegerField, OuterRef, Q, Value, When
from django.urls import reverse
from django.utils import timezone

from annotator.models import MCQ, ChainPair, ItemStatus, QAChain
from annotator.selectors import KINDS, to_do_q, work_statuses, work_summary

from .feedback import item_feedback
from .models import Assignment, AssignmentStatus
from .presence import PRESENCE_BEAT_S, item_presence, presence_label
from .queues import DEFAULT_HEARTBEAT_SECONDS, DEFAULT_LEASE_SECONDS

S = ItemStatus


def lease_for_editor(*, item, user) -> Assignment | None:
    """This person's active lease on the item (annotating, examining or revising), or None: one query.

    A lease past its expiry that is still active is returned too: nobody has taken the item over
    (a claim would have marked it expired), and the page's first heartbeat renews it or says it lapsed.
    `seconds` is set to the lease length the heartbeat renews for, `heartbeat` to the queue's heartbeat period.
    """
    if not getattr(user, "is_authenticated", False):
        return None
    lease = (
        Assignment.objects.filter(**Assignment.ref_for(item), assignee=user, status=AssignmentStatus.ACTIVE)
        .select_related("queue")
        .order_by("-leased_at", "-pk")
        .first()
    )
    if lease is not None:
        lease.seconds = lease.queue.lease_seconds if lease.queue is not None else DEFAULT_LEASE_SECONDS
        lease.heartbeat = lease.queue.heartbeat_seconds if lease.queue is not None else DEFAULT_HEARTBEAT_SECONDS
    return lease


def panels_context(*, item, user) -> dict:
    """Feedback, this person's lease, and who else has the item open: one query for every lease on it."""
    needs_feedback = item.status in (ItemStatus.REVISING, ItemStatus.FLAGGED)
    ref = Assignment.ref_for(item)
    leases = list(
        Assignment.objects.filter(**ref, status=AssignmentStatus.ACTIVE)
        .select_related("queue", "assignee")
        .order_by("-leased_at", "-pk")
    )
    lease = next((a for a in leases if a.assignee_id == getattr(user, "pk", None)), None)
    if lease is not None:
        lease.seconds = lease.queue.lease_seconds if lease.queue is not None else DEFAULT_LEASE_SECONDS
        lease.heartbeat = lease.queue.heartbeat_seconds if lease.queue is not None else DEFAULT_HEARTBEAT_SECONDS
    others = item_presence(item=item, user=user, leases=leases) if getattr(user, "is_authenticated", False) else []
    return {
        "feedback": item_feedback(item=item) if needs_feedback else None,
        "lease": lease,
        "presence": others,
        "presence_label": presence_label(others),
        "presence_url": reverse("reviewer:item_presence", args=[item.project.slug, ref["item_kind"], item.pk]),
        "presence_beat_s": PRESENCE_BEAT_S,
    }


# --- work lists ------------------------------------------------------------------------------------


def _leased_by_others(kind: str, user):
    """Items someone else holds a live lease on: the next-item button passes them by."""
    column = {"chain": "qa_chain", "pair": "chain_pair"}[kind]
    return Exists(
        Assignment.objects.filter(
            **{column: OuterRef("pk")}, status=AssignmentStatus.ACTIVE, lease_expires_at__gt=timezone.now()
        ).exclude(assignee=user)
    )


def _todo(kind: str, *, project, user, statuses):
    """Items this person may take on, mine first, then in video and clip order."""
    model = QAChain if kind == "chain" else ChainPair
    column = "qa_chain" if kind == "chain" else "chain_pair"
    items = model.objects.filter(to_do_q(column, user=user, statuses=statuses), project=project)
    items = items.exclude(_leased_by_others(kind, user))
    order = ("clip__video_id", "clip__index") if kind == "chain" else ("video_id", "before_index")
    mine = Case(When(author=user, status__in=(S.ANNOTATING, S.REVISING), then=Value(0)), default=Value(1))
    return items.annotate(mine_first=mine).order_by("mine_first", *order, "pk")


@dataclass
class WorkList:
    statuses: tuple[str, ...]
    summary: dict
    chains: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    mcqs: list = field(default_factory=list)


def work_list(*, project, user, status: str | None = None, limit: int = 25) -> WorkList:
    """What this person can do next: counts by status, and the first `limit` items of each kind.

    With `status`, the lists show every item at that status (mine first) instead of the to-do list.
    """
    statuses = work_statuses(project=project, user=user)
    result = WorkList(statuses=statuses, summary=work_summary(project=project, user=user))
    mine_first = Case(When(author=user, then=Value(0)), default=Value(1), output_field=IntegerField())
    if status:
        chains = QAChain.objects.filter(project=project, status=status).annotate(mine_first=mine_first)
        chains = chains.order_by("mine_first", "clip__video_id", "clip__index", "pk")
        pairs = ChainPair.objects.filter(project=project, status=status).annotate(mine_first=mine_first)
        pairs = pairs.order_by("mine_first", "video_id", "before_index", "pk")
        mcqs = MCQ.objects.filter(project=project, status=status)
    elif statuses:
        chains = _todo("chain", project=project, user=user, statuses=statuses)
        pairs = _todo("pair", project=project, user=user, statuses=statuses)
        mcqs = MCQ.objects.filter(to_do_q("mcq", user=user, statuses=statuses), project=project)
    else:
        return result
    result.chains = list(
        chains.select_related("clip__video", "author")
        .defer("clip__video__probe", "machine_draft")
        .annotate(turns=Count("pairs"))[:limit]
    )
    result.pairs = list(
        pairs.select_related("video", "author")
        .defer("video__probe", "machine_draft")
        .annotate(links=Count("relations"))[:limit]
    )
    result.mcqs = list(
        mcqs.annotate(mine_first=mine_first)
        .select_related("author")
        .only("id", "question", "status", "category", "author__username", "updated_at", "project_id")
        .order_by("mine_first", "pk")[:limit]
    )
    return result


def next_item(*, project, user, after: tuple[str, int] | None = None) -> tuple[str, int] | None:
    """("chain" | "pair", id) of the next item to work on, or None when nothing is left.

    Without `after`: my own unfinished work first, then chains before chain pairs (links are drawn
    between annotated chains), each in video and clip order. With `after` (the item just left):
    the next one of the same kind in video and clip order, wrapping round, then the other kind.
    """
    statuses = work_statuses(project=project, user=user)
    if not statuses:
        return None
    kinds = list(KINDS)
    if after is not None and after[0] == "pair":
        kinds.reverse()
    for kind in kinds:
        todo = _todo(kind, project=project, user=user, statuses=statuses)
        if after is not None and after[0] == kind:
            found = _after(kind, todo, after[1])
        else:
            found = todo.values_list("pk", flat=True).first()
        if found is not None:
            return kind, found
    return None


def _after(kind: str, todo, item_id: int) -> int | None:
    """The first of `todo` after item `item_id` in video and clip order, wrapping round; never the item itself."""
    if kind == "chain":
        here = QAChain.objects.filter(pk=item_id).values("clip__video_id", "clip__index").first()
        video_field, index_field = "clip__video_id", "clip__index"
        if here:
            here = {"video": here["clip__video_id"], "index": here["clip__index"]}
    else:
        here = ChainPair.objects.filter(pk=item_id).values("video_id", "before_index").first()
        video_field, index_field = "video_id", "before_index"
        if here:
            here = {"video": here["video_id"], "index": here["before_index"]}
    todo = todo.exclude(pk=item_id).order_by(video_field, index_field, "pk")
    if here:
        later = Q(**{f"{video_field}__gt": here["video"]}) | Q(
            **{video_field: here["video"], f"{index_field}__gt": here["index"]}
        )
        found = todo.filter(later).values_list("pk", flat=True).first()
        if found is not None:
            return found
    return todo.values_list("pk", flat=True).first()
