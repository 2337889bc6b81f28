"""Reads for the annotator's workspace: an item with what its editor shows, what a person works on.

The work list and the next item pass by items someone else holds a lease on, so they live with
the leases in reviewer.workspace.

Each read is a fixed number of queries whatever the project holds (tests pin the counts).
"""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Count, Exists, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact

from projects.models import Role
from projects.permissions import roles_of
from videos.models import Clip, VideoStatus

from .models import MCQ, ChainPair, ItemStatus, QAChain, QAPair, Relation, ReviewEvent

S = ItemStatus

# Which statuses a role works on here: annotators take drafts on, revisers fix what was flagged.
ANNOTATOR_STATUSES = (S.DRAFT, S.ANNOTATING)
REVISER_STATUSES = (S.REVISING,)
KINDS = ("chain", "pair")


# --- one item ------------------------------------------------------------------------------------


def _neighbour_chain_id(offset: int) -> Subquery:
    return Subquery(
        QAChain.objects.filter(
            clip__video_id=OuterRef("clip__video_id"), clip__index=OuterRef("clip__index") + offset
        ).values("pk")[:1]
    )


def chain_for_editor(*, project, chain_id: int) -> QAChain | None:
    """The chain with its clip, video and neighbouring chain pairs, in one query; None if not in `project`.

    `prev_chain_id` and `next_chain_id` name the chains of clips i-1 and i+1 (None where a clip has
    none), so the editor can offer to link them by hand where no chain pair joins them yet.
    """
    chain = (
        QAChain.objects.filter(pk=chain_id, project=project)
        .annotate(prev_chain_id=_neighbour_chain_id(-1), next_chain_id=_neighbour_chain_id(1))
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


# --- work without a model --------------------------------------------------------------------------


def _bare_clips(project):
    return Clip.objects.filter(video__project=project, video__status=VideoStatus.READY, chain__isnull=True)


def clips_without_chain_count(*, project) -> int:
    return _bare_clips(project).count()


def clips_without_chain(*, project, limit: int) -> tuple[list[Clip], int]:
    """The first `limit` clips of ready videos that carry no QA chain (video and clip order), and how many there are."""
    clips = _bare_clips(project)
    clips = clips.select_related("video").only("id", "index", "start_s", "end_s", "video__name")
    rows = list(clips.order_by("video_id", "index")[:limit])
    return rows, (len(rows) if len(rows) < limit else clips.count())


def chains_without_pair(*, project, limit: int) -> tuple[list[QAChain], int]:
    """Chains whose next clip has a chain too but no chain pair joins them yet: relations to draw by hand."""
    next_chain = QAChain.objects.filter(
        clip__video_id=OuterRef("clip__video_id"), clip__index=OuterRef("clip__index") + 1
    )
    chains = QAChain.objects.filter(project=project, pair_as_before__isnull=True).filter(Exists(next_chain))
    rows = list(
        chains.select_related("clip__video")
        .only("id", "clip__index", "clip__video__name")
        .order_by("clip__video_id", "clip__index")[:limit]
    )
    return rows, (len(rows) if len(rows) < limit else chains.count())


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
