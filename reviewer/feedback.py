"""Why an item came back: what the editors show at the top of an item in revision (or flagged).

`item_feedback` reads the latest move that sent the item back and says who sent it and why:

| came back through                  | source     | what it carries                                        |
|------------------------------------|------------|--------------------------------------------------------|
| submitted → revising (the judge)   | "judge"    | overall, threshold, per-dimension scores and comments  |
|                                    |            | of the latest failing QualityScore of this round       |
| examining → flagged (→ revising)   | "examiner" | the flag's reason codes with their checklist labels,   |
|                                    |            | the examiner's comment and name                        |
| accepted → revising (or any other) | "admin"    | the admin's comment and name                           |

An item that is neither in revision nor flagged has no feedback (None). Two queries at most: the
item's latest moves back (with their actors), and, for the judge, its score.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import F
from django.utils.functional import Promise

from annotator.models import ItemRef, ItemStatus, ReviewEvent

from .models import QualityScore

S = ItemStatus

JUDGE, EXAMINER, ADMIN = "judge", "examiner", "admin"
# Enough of the latest moves back to find the flag behind a flagged → revising move.
_RECENT = 4


@dataclass(frozen=True)
class Reason:
    code: str
    label: str


@dataclass(frozen=True)
class DimensionScore:
    name: str
    label: str
    score: int
    below: bool  # under the threshold: what to look at first


@dataclass(frozen=True)
class Feedback:
    source: str  # "judge" | "examiner" | "admin"
    at: datetime
    actor: str = ""  # the examiner's or admin's username; "" for the judge
    comment: str = ""
    reasons: tuple[Reason, ...] = ()
    overall: int | None = None
    threshold: int | None = None
    dimensions: tuple[DimensionScore, ...] = ()

    @property
    def headline(self) -> str:
        if self.source == JUDGE:
            if self.overall is not None:
                return f"The LLM judge scored this {self.overall}/100, below the threshold of {self.threshold}."
            return "The LLM judge sent this back."
        who = f" {self.actor}" if self.actor else ""
        if self.source == EXAMINER:
            return f"Examiner{who} flagged this."
        return f"Admin{who} reopened this for revision."


def reason_labels() -> dict[str, str]:
    """Checklist code → label from reviewer.examination.CHECKLISTS, when that module has them.

    Read lazily and leniently: CHECKLISTS may map a kind to its items or codes to labels, and an
    item may be a mapping, an object with code/label, or a (code, label) pair. Codes it does not
    know are shown as they are.
    """
    try:
        from .examination import CHECKLISTS
    except ImportError:
        return {}
    labels: dict[str, str] = {}

    def walk(node) -> None:
        if isinstance(node, dict):
            code = node.get("code")
            if isinstance(code, str):
                labels.setdefault(code, str(node.get("label") or node.get("name") or node.get("text") or code))
                return
            for key, value in node.items():
                if isinstance(key, str) and isinstance(value, str):
                    labels.setdefault(key, value)
                else:
                    walk(value)
        elif isinstance(node, list | tuple):
            # A label may be a lazily translated string (a Promise), read in the active language.
            if len(node) == 2 and isinstance(node[0], str) and isinstance(node[1], str | Promise):
                labels.setdefault(node[0], str(node[1]))
                return
            for value in node:
                walk(value)
        elif isinstance(getattr(node, "code", None), str):
            labels.setdefault(node.code, str(getattr(node, "label", "") or node.code))

    walk(CHECKLISTS)
    return labels


def _reasons(codes) -> tuple[Reason, ...]:
    codes = [str(c) for c in codes or [] if str(c)]
    if not codes:
        return ()
    labels = reason_labels()
    return tuple(Reason(code=c, label=labels.get(c, c)) for c in codes)


def _username(event: ReviewEvent) -> str:
    return event.actor.get_username() if event.actor_id else ""


def _judge(item, event: ReviewEvent) -> Feedback:
    scores = QualityScore.objects.filter(**ItemRef.ref_for(item), passed=False)
    if item.submitted_at is not None:
        scores = scores.filter(created_at__gte=item.submitted_at)  # this round's, not an older verdict
    score = scores.order_by("-created_at", "-pk").first()
    if score is None:
        return Feedback(source=JUDGE, at=event.created_at, comment=event.comment)
    # Weakest first: what to fix first (stored JSON keeps no order anyway).
    dimensions = tuple(
        DimensionScore(name=name, label=name.replace("_", " ").capitalize(), score=value, below=value < score.threshold)
        for name, value in sorted((score.dimensions or {}).items(), key=lambda kv: (_number(kv[1]), kv[0]))
        if isinstance(value, int) and not isinstance(value, bool)
    )
    return Feedback(
        source=JUDGE,
        at=score.created_at,
        comment=score.comments or event.comment,
        overall=score.overall,
        threshold=score.threshold,
        dimensions=dimensions,
    )


def _number(value) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else float("inf")


def _examiner(flag: ReviewEvent) -> Feedback:
    return Feedback(
        source=EXAMINER, at=flag.created_at, actor=_username(flag), comment=flag.comment, reasons=_reasons(flag.reasons)
    )


def item_feedback(*, item) -> Feedback | None:
    """Why the item came back, or None when it is not in revision or flagged (or nothing says why)."""
    if item.status not in (S.REVISING, S.FLAGGED):
        return None
    # Moves into flagged or revising; one that stays put (an admin's revert while revising) is no move.
    events = list(
        ReviewEvent.objects.filter(**ItemRef.ref_for(item), to_status__in=[S.REVISING, S.FLAGGED])
        .exclude(from_status=F("to_status"))
        .select_related("actor")
        .order_by("-created_at", "-id")[:_RECENT]
    )
    if not events:
        return None
    latest = events[0]
    if latest.to_status == S.FLAGGED:
        return _examiner(latest)
    if latest.from_status == S.SUBMITTED:
        return _judge(item, latest)
    if latest.from_status == S.FLAGGED:
        flag = next((e for e in events[1:] if e.to_status == S.FLAGGED), None)
        if flag is not None:
            return _examiner(flag)
        return Feedback(source=EXAMINER, at=latest.created_at, comment=latest.comment, reasons=_reasons(latest.reasons))
    return Feedback(
        source=ADMIN,
        at=latest.created_at,
        actor=_username(latest),
        comment=latest.comment,
        reasons=_reasons(latest.reasons),
    )
