"""Inter-rater agreement, as pure functions: Krippendorff's alpha (nominal) and Cohen's kappa.

Both answer None when the statistic is undefined (no pairable values, or no variation at all:
when everyone always says "pass", chance agreement is perfect and agreement beyond it is 0/0);
pages show that as "—", never as 0 or 1.

Alpha follows Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": any number of
raters per unit, missing values allowed, units with fewer than two values left out (they cannot be
paired). It is computed from the coincidence matrix, so a caller with many units can hand over the
*value counts* of each distinct unit shape with a multiplicity (`krippendorff_alpha_from_counts`)
instead of every unit: the dashboards count those shapes in the database.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence


def krippendorff_alpha(units: Iterable[Sequence[Hashable | None]]) -> float | None:
    """Nominal alpha of `units`, each the values its raters gave (None where a rater gave none)."""
    shapes: Counter = Counter()
    for values in units:
        present = Counter(v for v in values if v is not None)
        shapes[frozenset(present.items())] += 1
    return krippendorff_alpha_from_counts((dict(shape), n) for shape, n in shapes.items())


def krippendorff_alpha_from_counts(units: Iterable[tuple[Mapping[Hashable, int], int]]) -> float | None:
    """Nominal alpha from (value → how many raters gave it, how many units look like that) pairs."""
    coincidences: dict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for counts, multiplicity in units:
        m = sum(counts.values())
        if m < 2 or multiplicity <= 0:
            continue  # a lone value has nobody to agree or disagree with
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_c - 1) if c == k else n_c * n_k
                if pairs:
                    coincidences[(c, k)] += multiplicity * pairs / (m - 1)
    totals: dict[Hashable, float] = defaultdict(float)
    for (c, _k), o in coincidences.items():
        totals[c] += o
    n = sum(totals.values())
    if n < 2:
        return None
    observed = sum(o for (c, k), o in coincidences.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if expected == 0:
        return None  # one value only: no variation, agreement beyond chance is undefined
    return 1 - (n - 1) * observed / expected


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of two raters, from (rater A's value, rater B's value) per unit both rated."""
    return cohen_kappa_from_table(Counter(pairs))


def cohen_kappa_from_table(table: Mapping[tuple[Hashable, Hashable], int]) -> float | None:
    """Cohen's kappa from a contingency table: (A's value, B's value) → how many units."""
    n = sum(table.values())
    if n == 0:
        return None
    rows: dict[Hashable, int] = defaultdict(int)
    cols: dict[Hashable, int] = defaultdict(int)
    for (a, b), count in table.items():
        rows[a] += count
        cols[b] += count
    observed = sum(count for (a, b), count in table.items() if a == b) / n
    expected = sum(rows[v] * cols.get(v, 0) for v in rows) / (n * n)
    if expected == 1:
        return None  # both raters used one and the same value throughout
    return (observed - expected) / (1 - expected)
