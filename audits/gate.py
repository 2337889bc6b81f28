"""The release gate: what the audit says of the items a release would hold, and whether it may go out.

The project's `audit_gate` decides: **off** (the release ignores the audit), **warn** (it goes out and
its page and manifest say what was found) or **refuse** (no release while it fails). A release fails
the gate when one of its MCQs has a blocker of the static checks, or when its blind (text-only probe)
accuracy exceeds chance by more than `audit_gate_margin` points. Items never probed are counted, not
guessed: a release whose items were never probed fails only on blockers, and says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.utils.translation import gettext as _

from projects.models import AuditGate

from .selectors import Accuracy, probe_summary
from .static_checks import project_static_audit


@dataclass(frozen=True)
class GateDecision:
    setting: str
    margin_points: float
    checked: int
    blockers: tuple[int, ...]  # MCQ ids with a blocker
    blind: Accuracy | None
    probed: int  # items with at least one answered probe call
    probes: tuple[Accuracy, ...] = ()  # every probe's figures over these items

    @property
    def blind_exceeds(self) -> bool:
        points = self.blind.points_over_chance if self.blind else None
        return points is not None and points > self.margin_points

    @property
    def failing(self) -> bool:
        return bool(self.blockers) or self.blind_exceeds

    @property
    def refuses(self) -> bool:
        return self.setting == AuditGate.REFUSE and self.failing

    @property
    def warns(self) -> bool:
        return self.setting == AuditGate.WARN and self.failing

    def messages(self) -> list[str]:
        """The reasons, in plain sentences (in the active language)."""
        out = []
        if self.blockers:
            shown = ", ".join(str(i) for i in self.blockers[:20]) + (" …" if len(self.blockers) > 20 else "")
            out.append(
                _("%(n)s MCQ(s) have a blocker of the static checks: %(ids)s.")
                % {"n": len(self.blockers), "ids": shown}
            )
        if self.blind_exceeds:
            out.append(
                _(
                    "Blind accuracy is %(acc).1f %% (text only, %(n)s answers) against %(chance).1f %% by chance: "
                    "%(points).1f points over, more than the %(margin).1f the project allows."
                )
                % {
                    "acc": 100 * self.blind.accuracy,
                    "n": self.blind.answered,
                    "chance": 100 * self.blind.chance,
                    "points": self.blind.points_over_chance,
                    "margin": self.margin_points,
                }
            )
        return out

    def manifest(self) -> dict:
        """The audit summary a release's manifest carries."""
        blind = None
        if self.blind is not None and self.blind.answered:
            low, high = self.blind.interval
            blind = {
                "probe": "text",
                "answered": self.blind.answered,
                "correct": self.blind.correct,
                "failed": self.blind.failed,
                "accuracy": round(self.blind.accuracy, 4),
                "interval_95": [round(low, 4), round(high, 4)],
                "chance": round(self.blind.chance, 4),
                "points_over_chance": self.blind.points_over_chance,
            }
        return {
            "gate": self.setting,
            "margin_points": self.margin_points,
            "mcqs_checked": self.checked,
            "mcqs_with_blockers": list(self.blockers),
            "mcqs_probed": self.probed,
            "blind": blind,
            "probes": [_figures(a) for a in self.probes if a.answered or a.failed],
            "passed": not self.failing,
        }


def _figures(a: Accuracy) -> dict:
    interval = [round(x, 4) for x in a.interval] if a.interval else None
    accuracy = round(a.accuracy, 4) if a.accuracy is not None else None
    return {
        "probe": a.key,
        "answered": a.answered,
        "correct": a.correct,
        "failed": a.failed,
        "accuracy": accuracy,
        "interval_95": interval,
        "chance": round(a.chance, 4),
        "above_chance": a.above_chance,
    }


def release_gate(*, project, mcq_ids: Iterable[int]) -> GateDecision:
    """The gate's decision for a release holding `mcq_ids` (the project's setting applied)."""
    ids = sorted(set(mcq_ids))
    if not ids:
        return GateDecision(project.audit_gate, project.audit_gate_margin, 0, (), None, 0)
    audit = project_static_audit(project=project, mcq_ids=ids, blockers_only=True)
    probes = probe_summary(project=project, mcq_ids=ids)
    probed = sum(1 for item in probes.items.values() if item.answered)
    return GateDecision(
        setting=project.audit_gate,
        margin_points=project.audit_gate_margin,
        checked=audit.checked,
        blockers=tuple(audit.blocked),
        blind=probes.blind,
        probed=probed,
        probes=tuple(probes.by_probe),
    )
