"""Clustered means, McNemar, the paired bootstrap and sample sizes, against reference values.

The reference numbers were computed once with statsmodels 0.14 and SciPy 1.x in a throwaway venv:
    OLS(scores, ones).fit(cov_type="cluster", cov_kwds={"groups": g, "use_correction": False}).bse
    scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue
    norm.ppf(0.975) + norm.ppf(0.8) for the sample sizes
"""

import math

import pytest

from estimates.clustered import (
    clustered_mean,
    detectable_difference,
    mcnemar_exact,
    paired_bootstrap,
    paired_compare,
    questions_needed,
)

SCORES = [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0]
GROUPS = [1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 5, 5]
A = [1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1]
B = [0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1]


def test_clustered_se_matches_statsmodels_cr0():
    result = clustered_mean(SCORES, GROUPS)
    assert result.mean == pytest.approx(0.5833333333333335)
    assert result.se == pytest.approx(0.07917884896521792)
    assert (result.n, result.clusters) == (12, 5)
    # Independent questions: the clustered SE is the plain one.
    alone = clustered_mean(SCORES, list(range(12)))
    assert alone.se == pytest.approx(alone.se_independent)
    assert alone.design_effect == pytest.approx(1.0)


def test_edge_cases_never_divide_by_zero():
    empty = clustered_mean([], [])
    assert empty.mean is None and empty.se is None and empty.interval is None
    all_right = clustered_mean([1, 1, 1], ["v", "v", "w"])
    assert all_right.mean == 1.0 and all_right.se == 0.0 and all_right.design_effect is None
    one_cluster = clustered_mean([1, 0, 1, 0], ["v"] * 4)
    assert one_cluster.clusters == 1 and one_cluster.se is None and one_cluster.interval is None
    with pytest.raises(ValueError, match="2 scores but 1 cluster"):
        clustered_mean([1, 0], ["v"])


def test_paired_difference_and_mcnemar_match_references():
    result = paired_compare(A, B, GROUPS)
    assert result.difference.mean == pytest.approx(0.3333333333333334)
    assert result.difference.se == pytest.approx(0.05555555555555559)
    assert (result.mcnemar.a_only, result.mcnemar.b_only) == (5, 1)
    assert result.mcnemar.p_value == pytest.approx(0.21875)


@pytest.mark.parametrize(
    ("a_only", "b_only", "p"),
    [(3, 17, 0.0025768280029296875), (7, 0, 0.015625), (0, 0, 1.0), (4, 4, 1.0)],
)
def test_mcnemar_exact(a_only, b_only, p):
    a = [1] * a_only + [0] * b_only + [1, 0]
    b = [0] * a_only + [1] * b_only + [1, 0]
    assert mcnemar_exact(a, b).p_value == pytest.approx(p)


def test_bootstrap_is_reproducible_and_covers_the_difference():
    one = paired_bootstrap(A, B, GROUPS, resamples=500, seed=3)
    assert one == paired_bootstrap(A, B, GROUPS, resamples=500, seed=3)
    assert one != paired_bootstrap(A, B, GROUPS, resamples=500, seed=4)
    low, high = one
    assert low <= 1 / 3 <= high and low >= -1 and high <= 1
    # Identical runs: every resample's difference is 0.
    assert paired_bootstrap(A, A, GROUPS, resamples=50) == (0.0, 0.0)


def test_sample_sizes_match_the_normal_approximation():
    assert questions_needed(variance=0.25, delta=0.02) == 4906
    assert questions_needed(variance=0.1, delta=0.02, design_effect=1.5) == 2944
    assert detectable_difference(variance=0.25, n=1000) == pytest.approx(0.04429695174148298)
    assert questions_needed(variance=0.25, delta=0) is None
    n = questions_needed(variance=0.25, delta=0.02)
    assert detectable_difference(variance=0.25, n=n) <= 0.02 < detectable_difference(variance=0.25, n=n - 1)
    assert math.isclose(
        detectable_difference(variance=0.25, n=4, design_effect=0.5), detectable_difference(variance=0.25, n=4)
    )
