"""Means of per-question scores with standard errors clustered by video, and paired comparisons.

Questions about the same video are not independent draws: a model that misreads a video misses
several of its questions at once. Treating them as independent understates the error (Miller 2024,
"Adding Error Bars to Evals: A Statistical Approach to Language Model Evaluations", §2.2). So:

- **Clustered standard error** of a mean s̄ of n scores in clusters c (the CR0 sandwich estimator of
  an intercept-only regression, Miller's eq. 4):

      SE = sqrt( Σ_c ( Σ_{i∈c} (s_i − s̄) )² ) / n

  With one question per cluster it equals the plain sqrt(Σ(s_i − s̄)²) / n. It equals statsmodels'
  `OLS(s, 1).fit(cov_type="cluster", cov_kwds={"groups": c, "use_correction": False})`.
- **Paired difference** of two runs on the same questions: d_i = a_i − b_i, its mean and clustered SE
  as above; **McNemar's exact test** on 0/1 scores (the two-sided binomial test of the discordant
  pairs against ½); and a **paired bootstrap over clusters** (whole videos resampled with
  replacement, a fixed seed, percentile interval).
- **Sample size**: questions needed to detect a difference δ with a two-sided test at level α and
  the given power, n = DE · (z_{1−α/2} + z_{power})² · Var(d) / δ², where DE, the design effect, is
  the clustered variance over the independent one measured on the data; and conversely the
  smallest difference detectable with n questions.

Pure functions over plain numbers; no NumPy or SciPy at run time.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

Z_95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class ClusteredMean:
    n: int
    clusters: int
    mean: float | None
    se: float | None  # clustered (CR0); None with no score or a single cluster
    se_independent: float | None  # as if every score were independent

    @property
    def interval(self) -> tuple[float, float] | None:
        if self.mean is None or self.se is None:
            return None
        return self.mean - Z_95 * self.se, self.mean + Z_95 * self.se

    @property
    def design_effect(self) -> float | None:
        """Clustered variance over independent variance (1 when clustering changes nothing)."""
        if not self.se or not self.se_independent:
            return None
        return (self.se / self.se_independent) ** 2


def _check(scores: Sequence[float], clusters: Sequence[Hashable]) -> None:
    if len(scores) != len(clusters):
        raise ValueError(f"{len(scores)} scores but {len(clusters)} cluster labels")


def clustered_mean(scores: Sequence[float], clusters: Sequence[Hashable]) -> ClusteredMean:
    """The mean of `scores` with its standard error clustered by `clusters` (one label per score)."""
    _check(scores, clusters)
    n = len(scores)
    if n == 0:
        return ClusteredMean(0, 0, None, None, None)
    mean = math.fsum(scores) / n
    sums: dict[Hashable, float] = defaultdict(float)
    for s, c in zip(scores, clusters, strict=True):
        sums[c] += s - mean
    # One cluster carries no information about the spread between clusters: no standard error.
    se = math.sqrt(math.fsum(v * v for v in sums.values())) / n if len(sums) > 1 else None
    se_iid = math.sqrt(math.fsum((s - mean) ** 2 for s in scores)) / n
    return ClusteredMean(n, len(sums), mean, se, se_iid)


@dataclass(frozen=True)
class McNemar:
    a_only: int  # questions A got right and B wrong
    b_only: int
    p_value: float


def mcnemar_exact(a: Sequence[int | bool], b: Sequence[int | bool]) -> McNemar:
    """McNemar's exact test of two runs' 0/1 scores on the same questions (two-sided)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} scores: a paired test needs the same questions")
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = a_only + b_only
    if n == 0:
        return McNemar(0, 0, 1.0)
    k = min(a_only, b_only)
    tail = math.fsum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return McNemar(a_only, b_only, min(1.0, 2 * tail))


@dataclass(frozen=True)
class PairedComparison:
    difference: ClusteredMean  # of a − b
    mcnemar: McNemar | None  # only for 0/1 scores
    bootstrap_interval: tuple[float, float] | None
    resamples: int


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """A 95 % percentile interval of mean(a − b), resampling whole clusters with replacement."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} scores: a paired comparison needs the same questions")
    _check(a, clusters)
    if not a:
        return None
    per: dict[Hashable, list[float]] = defaultdict(lambda: [0.0, 0])
    for x, y, c in zip(a, b, clusters, strict=True):
        per[c][0] += x - y
        per[c][1] += 1
    groups = list(per.values())
    rng = random.Random(seed)  # noqa: S311 - a reproducible resample, not a secret
    means = []
    for _ in range(resamples):
        total = count = 0.0
        for g in rng.choices(groups, k=len(groups)):
            total += g[0]
            count += g[1]
        means.append(total / count)
    means.sort()
    return _percentile(means, 0.025), _percentile(means, 0.975)


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (NumPy's default)."""
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def paired_compare(
    a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable], *, resamples: int = 2000, seed: int = 0
) -> PairedComparison:
    """Two runs on the same questions (same order): the clustered difference, McNemar, the bootstrap."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} scores: a paired comparison needs the same questions")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    binary = all(x in (0, 1) for x in a) and all(y in (0, 1) for y in b)
    return PairedComparison(
        difference=clustered_mean(diffs, clusters),
        mcnemar=mcnemar_exact(a, b) if binary else None,
        bootstrap_interval=paired_bootstrap(a, b, clusters, resamples=resamples, seed=seed),
        resamples=resamples,
    )


def questions_needed(
    *, variance: float, delta: float, design_effect: float = 1.0, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Questions needed to detect a difference `delta` (e.g. 0.02) in a mean whose per-question variance
    is `variance` (of the paired differences, or p(1 − p) for one accuracy). None when delta is 0."""
    if delta <= 0:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return math.ceil(max(design_effect, 1.0) * z * z * variance / (delta * delta))


def detectable_difference(
    *, variance: float, n: int, design_effect: float = 1.0, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest difference a test at level `alpha` detects with `power` on `n` questions."""
    if n <= 0:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return z * math.sqrt(max(design_effect, 1.0) * variance / n)
