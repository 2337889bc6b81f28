"""Proportions: a Wilson interval for k of n, and a chi-square test of counts against uniform.

Pure functions over plain numbers, so every figure an audit shows can be recomputed by hand.
"""

from __future__ import annotations

import math

Z_95 = 1.959963984540054  # the 97.5th percentile of the standard normal


def wilson_interval(k: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a proportion k/n (95 % by default); (0, 1) when n is 0.

    Preferred over the normal ("Wald") interval because it stays inside [0, 1] and keeps its
    coverage for small n and for proportions near 0 or 1, which is where probe accuracies live.
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z / (1 + z2 / n)) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def chi_square_uniform(counts: list[int] | tuple[int, ...]) -> tuple[float, int, float]:
    """Pearson's chi-square of `counts` against equal expected counts: (statistic, degrees of freedom, p).

    E.g. how often the correct option sits in each position: a small p means the key's position
    is not balanced. With fewer than two cells or no observations the test says nothing: (0, 0, 1).
    """
    total = sum(counts)
    cells = len(counts)
    if cells < 2 or total == 0:
        return 0.0, 0, 1.0
    expected = total / cells
    statistic = sum((c - expected) ** 2 / expected for c in counts)
    dof = cells - 1
    return statistic, dof, chi_square_sf(statistic, dof)


def chi_square_sf(x: float, dof: int) -> float:
    """P(X >= x) for X ~ chi-square(dof): the regularized upper incomplete gamma Q(dof/2, x/2)."""
    if x <= 0:
        return 1.0
    return _gamma_q(dof / 2.0, x / 2.0)


def _gamma_q(a: float, x: float) -> float:
    # Numerical Recipes' split: the series converges fast below a + 1, the continued fraction above.
    if x < a + 1:
        return 1.0 - _gamma_p_series(a, x)
    return _gamma_q_fraction(a, x)


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    denominator = a
    for _ in range(10_000):
        denominator += 1
        term *= x / denominator
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h
