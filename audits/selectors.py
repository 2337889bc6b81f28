"""Reading the probes' answers: per item a shortcut score, per probe (category, model) an accuracy
with its 95 % Wilson interval against chance.

- An item's **shortcut score** is the share of its answered probe calls that chose the key, with
  the probes that did. Failed calls are not answers: they are counted apart.
- A group's **accuracy** is answered-correct ÷ answered over its calls; **chance** is the mean of
  1 ÷ options over the same calls (4 options → 25 %). A group is **above chance** when its
  interval's lower end is above chance.
- **Blind accuracy** is the text-only probe's accuracy: questions answered without the video.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotator.models import MCQ
from estimates.proportions import wilson_interval

from .models import Probe, ProbeAnswer, ProbeRun

BLIND_PROBE = Probe.TEXT


@dataclass(frozen=True)
class Accuracy:
    key: str  # probe, category or model name; "" for all
    answered: int
    correct: int
    failed: int
    chance: float

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.answered if self.answered else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.correct, self.answered) if self.answered else None

    @property
    def above_chance(self) -> bool:
        return bool(self.interval and self.interval[0] > self.chance)

    @property
    def points_over_chance(self) -> float | None:
        return None if self.accuracy is None else round(100 * (self.accuracy - self.chance), 1)


@dataclass
class ItemScore:
    mcq_id: int
    answered: int = 0
    correct: int = 0
    failed: int = 0
    probes: set[str] = field(default_factory=set)  # probes that got it right at least once

    @property
    def score(self) -> float | None:
        return self.correct / self.answered if self.answered else None


@dataclass
class ProbeSummary:
    items: dict[int, ItemScore] = field(default_factory=dict)
    by_probe: list[Accuracy] = field(default_factory=list)
    by_category: dict[str, list[Accuracy]] = field(default_factory=dict)  # probe → per category
    by_model: dict[str, list[Accuracy]] = field(default_factory=dict)  # probe → per model
    blind: Accuracy | None = None
    last_run: ProbeRun | None = None

    @property
    def probed(self) -> bool:
        return bool(self.items)


class _Tally:
    def __init__(self) -> None:
        self.answered = self.correct = self.failed = 0
        self.chance_sum = 0.0

    def add(self, ok: bool, correct: bool | None, chance: float) -> None:
        if not ok:
            self.failed += 1
            return
        self.answered += 1
        self.correct += int(bool(correct))
        self.chance_sum += chance

    def accuracy(self, key: str) -> Accuracy:
        chance = self.chance_sum / self.answered if self.answered else 0.0
        return Accuracy(key, self.answered, self.correct, self.failed, chance)


def probe_summary(*, project, mcq_ids: Iterable[int] | None = None) -> ProbeSummary:
    """The probes' figures for the project's MCQs (or `mcq_ids` among them). Two queries."""
    rows = ProbeAnswer.objects.filter(project=project)
    if mcq_ids is not None:
        rows = rows.filter(mcq_id__in=list(mcq_ids))
    category = dict(MCQ.objects.filter(project=project).values_list("pk", "category"))
    summary = ProbeSummary(last_run=ProbeRun.objects.filter(project=project).first())
    probes: dict[str, _Tally] = defaultdict(_Tally)
    cats: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    models: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    for mcq_id, probe, model, ok, correct, count in rows.values_list(
        "mcq_id", "probe", "model", "ok", "correct", "option_count"
    ).order_by("mcq_id", "probe", "model", "variant"):
        chance = 1.0 / count if count else 0.0
        item = summary.items.setdefault(mcq_id, ItemScore(mcq_id))
        if ok:
            item.answered += 1
            item.correct += int(bool(correct))
            if correct:
                item.probes.add(probe)
        else:
            item.failed += 1
        probes[probe].add(ok, correct, chance)
        cats[(probe, category.get(mcq_id, ""))].add(ok, correct, chance)
        models[(probe, model)].add(ok, correct, chance)
    order = {p: i for i, p in enumerate(Probe.values)}
    summary.by_probe = [probes[p].accuracy(p) for p in sorted(probes, key=order.get)]
    for (probe, cat), tally in sorted(cats.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        summary.by_category.setdefault(probe, []).append(tally.accuracy(cat))
    for (probe, model), tally in sorted(models.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        summary.by_model.setdefault(probe, []).append(tally.accuracy(model))
    summary.blind = next((a for a in summary.by_probe if a.key == BLIND_PROBE), None)
    return summary


def item_probe_answers(*, mcq) -> list[ProbeAnswer]:
    """An item's probe calls, for the examine page: probe, model, variant order."""
    return list(ProbeAnswer.objects.filter(mcq=mcq).order_by("probe", "model", "variant"))
