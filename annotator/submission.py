"""What every editor's submit does once its own checks passed: hand the item on through the gate.

The three submit services (chains.chain_submit, relations.chain_pair_submit, mcqs.mcq_submit)
call `item_hand_on` inside their transaction, with the item row locked:

1. submitted (reviewer.workflow.item_submit), logged as the person's act;
2. the LLM quality gate (reviewer.quality_gate.gate_on_submit): a judge job, sent to the worker
   only when the transaction commits, when the project's gate covers the item's kind; otherwise
   straight on to examining;
3. the person's lease on the item (annotating or revising) is completed: their work on it is done,
   and a completed lease keeps its slot, so the queue does not hand the item out again this round.

All of it commits or none of it: a submit that fails later in the transaction leaves no job and
no completed lease behind.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.models import Assignment
from reviewer.quality_gate import GateOutcome, gate_on_submit
from reviewer.queues import assignment_complete

from .lifecycle import Transition, item_submit
from .models import ItemStatus

LEASE_STAGES = (ItemStatus.ANNOTATING, ItemStatus.REVISING)

SENT_TO_JUDGE = "sent to the LLM judge"
PASSED_TO_EXAMINERS = "passed on to examiners"


@dataclass(frozen=True)
class Submitted:
    """A submit and what it led to. `item` and `event` are the submit's own, as `item_submit` gives."""

    submitted: Transition
    gate: GateOutcome
    leases: tuple[Assignment, ...] = ()

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
    def outcome(self) -> str:
        """"judge" or "examining": where the item went."""
        return "judge" if self.to_judge else "examining"

    def message(self, noun: str) -> str:
        """One sentence for the person who submitted, e.g. "Chain submitted and sent to the LLM judge."""
        if self.to_judge:
            return f"{noun} submitted and {SENT_TO_JUDGE}: it comes back to you if it scores below the threshold."
        return f"{noun} submitted and {PASSED_TO_EXAMINERS}."


def item_hand_on(*, item, user) -> Submitted:
    """Submit, gate and complete the person's lease; call inside the caller's transaction, item locked."""
    submitted = item_submit(item=item, user=user)
    gate = gate_on_submit(item=submitted.item, user=user)
    leases = []
    if getattr(user, "is_authenticated", False):
        for stage in LEASE_STAGES:
            lease = assignment_complete(user=user, item=submitted.item, stage=stage)
            if lease is not None:
                leases.append(lease)
    if gate.transition is not None:
        item.status = gate.transition.item.status
    return Submitted(submitted=submitted, gate=gate, leases=tuple(leases))
