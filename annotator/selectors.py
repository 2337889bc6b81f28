"""Reads for the annotator's workspace: an item with what its editor shows, work lists, the next item.

Each read is a fixed number of queries whatever the project holds (tests pin the counts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Case, Count, Exists, IntegerField, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact
from django.utils import timezone

from projects.models import Role
from projects.permissions import roles_of
from reviewer.models import Assignment, AssignmentStatus
from reviewer.queues import DEFAULT_LEASE_SECONDS

from .models import MCQ, ChainPair, ItemStatus, QAChain, QAPair, Relation, ReviewEvent

S = ItemStatus

# Which statuses a role works on here: annotators take drafts on, revisers fix what was flagged.
ANNOTATOR_STATUSES = (S.DRAFT, S.ANNOTATING)
REVISER_STATUSES = (S.REVISING,)
KINDS = ("chain", "pair")


# --- one item ------------------------------------------------------------------------------------


def chain_for_editor(*, project, chain_id: int) -> QAChain | None:
    """The chain with its clip, video and neighbouring chain pairs, in one query; None if not in `project`."""
    chain = (
        QAChain.objects.filter(pk=chain_id, project=project)
        .select_related("clip__video", "pair_as_before", "pair_as_after", "author")
        .defer("clip__video__probe")
        .first()
    )
    if chain is not None:
        chain.project = project
        chain.clip.video.project = project
    return chain


def chain_pairs_for_editor(*, chain: QAChain) -> list[QAPair]:
    """The turns in order, each with `links`: how many relations start or end at it."""
    return list(
        QAPair.objects.filter(chain=chain)
        .annotate(links=Count("relations_out", distinct=True) + Count("relations_in", distinct=True))
        .order_by("index", "pk")
    )


def neighbour_pair(chain: QAChain, name: str) -> ChainPair | None:
    """chain.pair_as_before / pair_as_after as loaded by chain_for_editor, or None."""
    try:
        return getattr(chain, name)
    except ObjectDoesNotExist:
        return None


def lease_for_editor(*, item, user) -> Assignment | None:
    """This person's active lease on the item (annotating, examining or revising), or None: one query.

    A lease past its expiry that is still active is returned too: nobody has taken the item over
    (a claim would have marked it expired), and the page's first heartbeat renews it or says it lapsed.
    `seconds` is set to the lease length the heartbeat renews for.
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
    return lease


def chain_pair_for_editor(*, project, pair_id: int) -> ChainPair | None:
    chain_pair = (
        ChainPair.objects.filter(pk=pair_id, project=project)
        .select_related("video", "chain_before__clip", "chain_after__clip", "author")
        .defer("video__probe")
        .first()
    )
    if chain_pair is not None:
        chain_pair.project = project
        chain_pair.video.project = project
    return chain_pair


def chain_pair_contents(*, chain_pair: ChainPair) -> tuple[list[QAPair], list[QAPair], list[Relation]]:
    """The turns of both chains and the links between them: two queries."""
    pairs = list(
        QAPair.objects.filter(chain_id__in=[chain_pair.chain_before_id, chain_pair.chain_after_id]).order_by(
            "index", "pk"
        )
    )
    before = [p for p in pairs if p.chain_id == chain_pair.chain_before_id]
    after = [p for p in pairs if p.chain_id == chain_pair.chain_after_id]
    by_id = {p.pk: p for p in pairs}
    relations = list(Relation.objects.filter(chain_pair=chain_pair))
    for relation in relations:
        # Attach the ends already loaded, so reading them costs nothing.
        relation.from_pair = by_id.get(relation.from_pair_id) or relation.from_pair
        relation.to_pair = by_id.get(relation.to_pair_id) or relation.to_pair
    relations.sort(key=lambda r: (r.from_pair.index, r.to_pair.index, r.pk))
    return before, after, relations


# --- work lists ------------------------------------------------------------------------------------


def work_statuses(*, project, user) -> tuple[str, ...]:
    """The statuses this person edits in this project, by role."""
    roles = frozenset(Role.values) if user.is_superuser else roles_of(user, project)
    statuses: tuple[str, ...] = ()
    if roles & {Role.ANNOTATOR, Role.ADMIN}:
        statuses += ANNOTATOR_STATUSES
    if roles & {Role.REVISER, Role.ADMIN}:
        statuses += REVISER_STATUSES
    return statuses


def _status_summary(model, *, project, user) -> dict[str, dict[str, int]]:
    rows = (
        model.objects.filter(project=project)
        .values("status")
        .annotate(total=Count("id"), mine=Count("id", filter=Q(author=user)))
    )
    return {r["status"]: {"total": r["total"], "mine": r["mine"]} for r in rows}


def work_summary(*, project, user) -> dict[str, dict[str, dict[str, int]]]:
    """kind → status → {total, mine}: three grouped counts."""
    return {
        "chain": _status_summary(QAChain, project=project, user=user),
        "pair": _status_summary(ChainPair, project=project, user=user),
        "mcq": _status_summary(MCQ, project=project, user=user),
    }


def _leased_by_others(kind: str, user):
    """Items someone else holds a live lease on: the next-item button passes them by."""
    column = {"chain": "qa_chain", "pair": "chain_pair"}[kind]
    return Exists(
        Assignment.objects.filter(
            **{column: OuterRef("pk")}, status=AssignmentStatus.ACTIVE, lease_expires_at__gt=timezone.now()
        ).exclude(assignee=user)
    )


def _judge_returned(column: str) -> Q:
    """Items whose latest move into revising came from submitted: the LLM judge sent them back.

    The query form of annotator.lifecycle.revision_owner == "author" (an admin's revert, which stays
    in revising, is no move into it).
    """
    into = (
        ReviewEvent.objects.filter(**{column: OuterRef("pk")}, to_status=S.REVISING)
        .exclude(from_status=S.REVISING)
        .order_by("-created_at", "-id")
        .values("from_status")[:1]
    )
    return Q(Exact(Coalesce(Subquery(into), Value("")), S.SUBMITTED))


def to_do_q(column: str, *, user, statuses) -> Q:
    """What this person edits among `statuses` (by role, work_statuses): drafts and items being
    annotated (not someone else's half-written one); items in revision the judge sent back to them
    (annotators, their own); items flagged back to revisers (revisers, never their own)."""
    q = Q(status=S.DRAFT) if S.DRAFT in statuses else Q(pk__in=[])
    if S.ANNOTATING in statuses:
        q |= Q(status=S.ANNOTATING) & (Q(author=user) | Q(author__isnull=True))
        q |= Q(status=S.REVISING, author=user) & _judge_returned(column)
    if S.REVISING in statuses:
        q |= Q(status=S.REVISING) & ~Q(author=user) & ~_judge_returned(column)
    return q


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
