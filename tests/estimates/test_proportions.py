"""Wilson intervals and the chi-square test, against values computed with SciPy (written in here)."""

import pytest

from estimates.proportions import chi_square_sf, chi_square_uniform, wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (8, 10, 0.4901624715366418, 0.9433178485456248),
        (0, 10, 0.0, 0.2775327998628892),
        (81, 263, 0.2552885198782742, 0.36620957698280004),
        (10, 10, 0.7224672001371108, 1.0),
    ],
)
def test_wilson_interval(k, n, low, high):
    assert wilson_interval(k, n) == pytest.approx((low, high), abs=1e-12)


def test_wilson_refuses_impossible_counts_and_knows_nothing_of_no_trials():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson_interval(5, 4)


@pytest.mark.parametrize(
    ("x", "dof", "p"),
    [
        # scipy.stats.chi2.sf(x, dof)
        (3.84, 1, 0.05004352124870519),
        (7.815, 3, 0.049993902974883875),
        (10, 4, 0.04042768199451279),
        (20, 3, 0.00016974243555282632),
        (0.5, 2, 0.7788007830714049),
        (150, 4, 2.035764090974152e-31),
    ],
)
def test_chi_square_survival_matches_scipy(x, dof, p):
    assert chi_square_sf(x, dof) == pytest.approx(p, rel=1e-9)


def test_chi_square_against_uniform():
    statistic, dof, p = chi_square_uniform([36, 0, 4, 0])
    # expected 10 per cell: (26² + 10² + 6² + 10²) / 10
    assert (statistic, dof) == (pytest.approx(91.2), 3)
    assert p < 1e-17
    assert chi_square_uniform([25, 25, 25, 25]) == (0.0, 3, 1.0)
    assert chi_square_uniform([]) == (0.0, 0, 1.0) and chi_square_uniform([0, 0]) == (0.0, 0, 1.0)
