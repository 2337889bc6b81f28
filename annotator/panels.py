"""What every editor (chain, links of a chain pair, MCQ) shows above the item itself.

- "Why it came back" (reviewer.feedback.item_feedback): the judge's scores and comments, the
  examiner's flag reasons, or the admin's reopen comment, while the item is in revision;
- the person's lease on the item, as the element static/js/lease.js keeps alive
  (templates/annotator/_panels.html#lease documents the contract).

A fixed number of queries: one for the lease, and for an item in revision two for the feedback.
"""

from reviewer.feedback import item_feedback

from .models import ItemStatus
from .selectors import lease_for_editor


def panels_context(*, item, user) -> dict:
    needs_feedback = item.status in (ItemStatus.REVISING, ItemStatus.FLAGGED)
    return {
        "feedback": item_feedback(item=item) if needs_feedback else None,
        "lease": lease_for_editor(item=item, user=user),
    }
