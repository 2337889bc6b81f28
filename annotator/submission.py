"""What every editor's submit does once its own checks passed: hand the item on.

The three submit services (chains.chain_submit, relations.chain_pair_submit, mcqs.mcq_submit)
call `item_hand_on` inside their transaction, with the item row locked:

1. submitted (lifecycle.item_submit), logged as the person's act;
2. the route registered for submitted items decides where the item goes next; the review app's
   LLM quality gate queues a judge job (sent to the worker only when the transaction commits)
   when the project's gate covers the item's kind, and otherwise moves it straight on to examining;
3. the person's work on the item is done: the review app completes their lease on it (annotating
   or revising), and a completed lease keeps its slot, so the queue does not hand the item out
   again this round.

Steps 2 and 3 belong to the review app, which sits above the items: it registers them here once
(`hand_on_connect`, from its AppConfig.ready), so the items announce a submit without knowing
who reacts, and the route's outcome comes back in `Submitted` for the editors' message.

All of it commits or none of it: a submit that fails later in the transaction leaves no job and
no completed lease behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext as _

from .lifecycle import Transition, item_submit
from .models import ItemStatus

SENT_TO_JUDGE = "sent to the LLM judge"
PASSED_TO_EXAMINERS = "passed on to examiners"


class Routed(Protocol):
    """Where a submitted item went: a judge job on its way, or the move the route made (or neither).

    Neither means it waits where it is; `waiting` (when the route has it) says why, in words.
    `not_scored` (when the route has it) says why the move was made without a judge's score.
    """

    job: Any
    transition: Transition | None


# (*, item, user) -> Routed, and (*, item, user) -> the person's leases it completed.
Route = Callable[..., Routed]
WorkDone = Callable[..., tuple]


@dataclass
class _Receivers:
    route: Route | None = None
    work_done: WorkDone | None = None


_receivers = _Receivers()


def hand_on_connect(*, route: Route, work_done: WorkDone) -> None:
    """Say what happens to a submitted item (`route`) and to the submitter's hold on it (`work_done`).

    One of each: the order of what a submit does is fixed here, not by who registered first.
    """
    _receivers.route = route
    _receivers.work_done = work_done


@dataclass(frozen=True)
class Submitted:
    """A submit and what it led to. `item` and `event` are the submit's own, as `item_submit` gives."""

    submitted: Transition
    gate: Routed
    leases: tuple = ()

    @property
    def item(self):
        return self.submitted.item

    @property
    def event(self):
        return self.submitted.event

    @property
    def to_judge(self) -> bool:
        return self.gate.job is not None

    @property
    def waiting(self) -> str:
        """Why the item stays submitted with no judge on its way ("" when it went somewhere)."""
        if self.gate.job is not None or self.gate.transition is not None:
            return ""
        return getattr(self.gate, "waiting", "") or ""

    @property
    def not_scored(self) -> str:
        """Why the item moved on without a judge's score ("" when it was not such a move)."""
        if self.gate.transition is None:
            return ""
        return getattr(self.gate, "not_scored", "") or ""

    @property
    def outcome(self) -> str:
        """Where the item went: "judge", "examining", "revising" (the judge could not score it and the
        project sends such items back) or "waiting" (submitted; the judge cannot be asked yet)."""
        if self.waiting:
            return "waiting"
        if self.to_judge:
            return "judge"
        if self.gate.transition is not None and self.gate.transition.item.status == ItemStatus.REVISING:
            return "revising"
        return "examining"

    def message(self, noun: str) -> str:
        """One sentence for the person who submitted, e.g. "Chain submitted and sent to the LLM judge."""
        if self.waiting:
            return _("%(noun)s submitted; it waits for the judge. %(reason)s") % {"noun": noun, "reason": self.waiting}
        if self.not_scored and self.outcome == "revising":
            return _("%(noun)s submitted, but the judge could not score it and it is back with you. %(reason)s") % {
                "noun": noun,
                "reason": self.not_scored,
            }
        if self.not_scored:
            return _("%(noun)s submitted and passed on to examiners, marked not scored. %(reason)s") % {
                "noun": noun,
                "reason": self.not_scored,
            }
        if self.to_judge:
            return f"{noun} submitted and {SENT_TO_JUDGE}: it comes back to you if it scores below the threshold."
        return f"{noun} submitted and {PASSED_TO_EXAMINERS}."


def item_hand_on(*, item, user) -> Submitted:
    """Submit, route and complete the person's work; call inside the caller's transaction, item locked."""
    if _receivers.route is None or _receivers.work_done is None:
        raise ImproperlyConfigured("Nothing receives submitted items: the review app registers it in its ready().")
    submitted = item_submit(item=item, user=user)
    gate = _receivers.route(item=submitted.item, user=user)
    leases = ()
    if getattr(user, "is_authenticated", False):
        leases = tuple(_receivers.work_done(item=submitted.item, user=user))
    if gate.transition is not None:
        item.status = gate.transition.item.status
    return Submitted(submitted=submitted, gate=gate, leases=leases)
