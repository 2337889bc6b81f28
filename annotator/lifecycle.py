"""The one state machine of every reviewable item (QA chain, the relations of a chain pair, MCQ).

Statuses change only through `item_transition`; each change writes an append-only ReviewEvent.
The row is locked first, so two people acting on the same item at once cannot both win.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from projects.refusals import Refused

from .models import MCQ, ChainPair, ItemRef, ItemStatus, QAChain, ReviewEvent

S = ItemStatus

# from → the statuses it may go to.
TRANSITIONS: dict[str, set[str]] = {
    S.DRAFT: {S.ANNOTATING, S.SUBMITTED},
    S.ANNOTATING: {S.SUBMITTED},
    S.SUBMITTED: {S.SCORED, S.EXAMINING, S.REVISING, S.ANNOTATING},
    S.SCORED: {S.EXAMINING, S.REVISING},
    S.EXAMINING: {S.ACCEPTED, S.FLAGGED},
    S.FLAGGED: {S.REVISING},
    S.REVISING: {S.SUBMITTED},
    S.ACCEPTED: {S.REVISING},  # only an admin reopens accepted work, and it is logged
}

EDITABLE = {S.DRAFT, S.ANNOTATING, S.REVISING}


class TransitionRefused(Refused):
    """The move is not allowed from the item's current status (or the item changed meanwhile)."""


@dataclass(frozen=True)
class Transition:
    item: object
    event: ReviewEvent


def _model(item):
    for model in (QAChain, ChainPair, MCQ):
        if isinstance(item, model):
            return model
    raise TypeError(f"{type(item).__name__} is not a reviewable item")


def item_transition(
    *, item, to_status: str, actor=None, reasons: list | None = None, comment: str = "", expect_from: str | None = None
) -> Transition:
    """Move an item to `to_status` and log it. `expect_from` guards against acting on a stale view."""
    model = _model(item)
    with transaction.atomic():
        locked = model.objects.select_for_update().get(pk=item.pk)
        current = locked.status
        if expect_from is not None and current != expect_from:
            raise TransitionRefused(
                _("This item is now %(now_label)s, not %(expected)s: someone acted on it meanwhile. Reload to see it.")
                % {"now_label": locked.get_status_display().lower(), "expected": ItemStatus(expect_from).label.lower()}
            )
        if to_status not in TRANSITIONS.get(current, set()):
            now_label, wanted = locked.get_status_display().lower(), ItemStatus(to_status).label.lower()
            raise TransitionRefused(
                _("An item that is %(now_label)s cannot become %(wanted)s.")
                % {"now_label": now_label, "wanted": wanted}
            )
        locked.status = to_status
        now = timezone.now()
        fields = ["status", "updated_at"]
        if to_status == S.SUBMITTED:
            locked.submitted_at = now
            fields.append("submitted_at")
        if to_status == S.ACCEPTED:
            locked.accepted_at = now
            fields.append("accepted_at")
        locked.save(update_fields=fields)
        event = ReviewEvent.objects.create(
            project_id=locked.project_id,
            actor=actor if actor is not None and getattr(actor, "is_authenticated", False) else None,
            from_status=current,
            to_status=to_status,
            reasons=list(reasons or []),
            comment=comment,
            item_version=locked.version,
            **ItemRef.ref_for(locked),
        )
    item.status = locked.status
    return Transition(locked, event)


def item_submit(*, item, user) -> Transition:
    """The author hands the item on (to the judge when the project has one, else to examiners)."""
    return item_transition(item=item, to_status=S.SUBMITTED, actor=user)


def item_history(*, item) -> list[ReviewEvent]:
    ref = ItemRef.ref_for(item)
    return list(ReviewEvent.objects.filter(**ref).select_related("actor").order_by("created_at", "id"))


REVISION_AUTHOR = "author"
REVISION_REVISER = "reviser"


def revision_owner(*, item) -> str:
    """Whose an item in revision is: "author" when the LLM judge sent it back (submitted → revising),
    so the annotator who wrote it fixes it; "reviser" when it came from flagged or an admin reopened
    accepted work (and when no move into revising is on record). One query.

    An event that stays in revising (an admin's revert) is not a move into it and is passed over.
    """
    came_from = (
        ReviewEvent.objects.filter(**ItemRef.ref_for(item), to_status=S.REVISING)
        .exclude(from_status=S.REVISING)
        .order_by("-created_at", "-id")
        .values_list("from_status", flat=True)
        .first()
    )
    return REVISION_AUTHOR if came_from == S.SUBMITTED else REVISION_REVISER
