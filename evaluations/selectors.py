"""What a run's predictions say: accuracy with standard errors clustered by video (overall and per
category, level and duration group), cost and time; the leaderboard; two runs compared.

Scored questions are those answered or unreadable (scored wrong); failed calls are counted apart and
never scored. Standard errors and the paired test come from estimates.clustered (the formulas are
in its docstring).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Sum

from estimates.clustered import ClusteredMean, clustered_mean, paired_compare, questions_needed
from llm.models import LLMCall

from .models import EvaluationRun, Outcome, Prediction, RunStatus

GROUPS = ("category", "level", "duration_group")
DETECT_POINTS = 2  # the difference the compare page asks about: 2 points of accuracy


def _figure(mean: ClusteredMean, *, bounds: tuple[float, float] = (0.0, 1.0)) -> dict:
    """A mean as stored and shown; its normal interval kept within what the mean can be (an accuracy
    within [0, 1], a difference of two within [−1, 1])."""
    interval = mean.interval
    if interval:
        interval = (max(bounds[0], interval[0]), min(bounds[1], interval[1]))
    return {
        "n": mean.n,
        "clusters": mean.clusters,
        "accuracy": mean.mean,
        "se": mean.se,
        "interval_95": list(interval) if interval else None,
    }


def run_summary(run: EvaluationRun) -> dict:
    """The run's figures, as stored on it when it ends (and recomputed for a page while it runs)."""
    rows = list(
        Prediction.objects.filter(run=run).values_list(
            "outcome",
            "score",
            "video",
            *GROUPS,
            "call_id",
            "extract_call_id",
            "judge_call_id",
            "dimensions",
            "record_id",
        )
    )
    scored = [r for r in rows if r[0] != Outcome.FAILED]
    overall = clustered_mean([r[1] for r in scored], [r[2] for r in scored])
    groups: dict[str, list[dict]] = {}
    for g, name in enumerate(GROUPS):
        buckets: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
        for r in scored:
            scores, clusters = buckets[r[3 + g] or ""]
            scores.append(r[1])
            clusters.append(r[2])
        groups[name] = [
            {"key": key, **_figure(clustered_mean(*buckets[key]))} for key in sorted(buckets) if len(buckets) > 1 or key
        ]
    call_ids = [i for r in rows for i in r[6:9] if i]
    # Open answers (SVBench): each judge dimension's mean, and the mean over chains of their turns' mean.
    dimensions: dict[str, dict] = {}
    per_chain = None
    judged = [r for r in scored if r[9]]
    if judged:
        for name in judged[0][9]:
            values = [(r[9].get(name, 0) / 100, r[2]) for r in judged]
            dimensions[name] = _figure(clustered_mean([v for v, _ in values], [c for _, c in values]))
        chains: dict[str, list[float]] = defaultdict(list)
        for r in judged:
            chains[r[10].split(".")[0]].append(r[1])
        names = sorted(chains)
        per_chain = _figure(
            clustered_mean([sum(chains[n]) / len(chains[n]) for n in names], [n.split("#")[0] for n in names])
        )
    usage = LLMCall.objects.filter(pk__in=call_ids).aggregate(
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        cost=Sum("cost_usd"),
        latency=Sum("latency_ms"),
    )
    answered = sum(1 for r in rows if r[0] == Outcome.ANSWERED)
    items = (run.summary or {}).get("items", len(rows))
    return {
        "items": items,
        "scored": len(scored),
        "answered": answered,
        "unreadable": len(scored) - answered,
        "failed": len(rows) - len(scored),
        "missing": max(0, items - len(rows)),
        **_figure(overall),
        "groups": groups,
        "dimensions": dimensions,
        "per_chain": per_chain,
        "calls": len(call_ids),
        "prompt_tokens": usage["prompt"] or 0,
        "completion_tokens": usage["completion"] or 0,
        "cost_usd": float(usage["cost"] or 0),
        "latency_ms_total": usage["latency"] or 0,
    }


def leaderboard(*, project, release=None) -> list[EvaluationRun]:
    """Finished runs (with failed calls too, marked), best accuracy first."""
    runs = EvaluationRun.objects.filter(project=project).select_related("release", "job")
    if release is not None:
        runs = runs.filter(release=release)
    runs = [r for r in runs if r.summary.get("accuracy") is not None]
    return sorted(runs, key=lambda r: (-r.summary["accuracy"], r.pk))


@dataclass
class Comparison:
    a: EvaluationRun
    b: EvaluationRun
    common: int  # questions both runs scored
    accuracy_a: float | None
    accuracy_b: float | None
    difference: dict
    mcnemar: dict | None
    bootstrap_interval: list[float] | None
    needed_for_2_points: int | None
    only_a: int  # questions A got right and B wrong
    only_b: int


def compare_runs(a: EvaluationRun, b: EvaluationRun, *, resamples: int = 2000, seed: int = 0) -> Comparison:
    """Two runs on the same release file, paired on the questions both scored."""
    if (a.release_id, a.file) != (b.release_id, b.file):
        raise ValueError("Only runs on the same release file can be compared question by question.")
    scored = Prediction.objects.exclude(outcome=Outcome.FAILED)
    left = dict(scored.filter(run=a).values_list("index", "score"))
    right = dict(scored.filter(run=b).values_list("index", "score"))
    videos = dict(Prediction.objects.filter(run=a).values_list("index", "video"))
    common = sorted(set(left) & set(right))
    xs, ys, clusters = [left[i] for i in common], [right[i] for i in common], [videos[i] for i in common]
    paired = paired_compare(xs, ys, clusters, resamples=resamples, seed=seed)
    diff = paired.difference
    needed = None
    if diff.n and diff.se is not None and diff.se_independent:
        variance = diff.se_independent**2 * diff.n  # per-question variance of the differences
        needed = questions_needed(variance=variance, delta=DETECT_POINTS / 100, design_effect=diff.design_effect or 1.0)
    return Comparison(
        a=a,
        b=b,
        common=len(common),
        accuracy_a=sum(xs) / len(xs) if xs else None,
        accuracy_b=sum(ys) / len(ys) if ys else None,
        difference=_figure(diff, bounds=(-1.0, 1.0)),
        mcnemar=(
            {"a_only": paired.mcnemar.a_only, "b_only": paired.mcnemar.b_only, "p_value": paired.mcnemar.p_value}
            if paired.mcnemar
            else None
        ),
        bootstrap_interval=list(paired.bootstrap_interval) if paired.bootstrap_interval else None,
        needed_for_2_points=needed,
        only_a=paired.mcnemar.a_only if paired.mcnemar else 0,
        only_b=paired.mcnemar.b_only if paired.mcnemar else 0,
    )


def wrong_predictions(run: EvaluationRun, limit: int = 200):
    return Prediction.objects.filter(run=run).exclude(score=1.0).select_related("mcq").order_by("index")[:limit]


ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)
