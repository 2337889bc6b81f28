"""Agreement maths against published worked examples, and where the statistics are undefined."""

import pytest

from reviewer.agreement import cohen_kappa, cohen_kappa_from_table, krippendorff_alpha, krippendorff_alpha_from_counts

N = None


def test_alpha_matches_krippendorffs_nominal_example_with_missing_values():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
    # 12 units, values 1..5, some missing; nominal alpha = 0.743.
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3]
    c = [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]
    assert krippendorff_alpha(zip(a, b, c, d, strict=True)) == pytest.approx(0.743, abs=5e-4)


def test_alpha_matches_krippendorffs_binary_two_observer_example():
    # Same paper, section A: two observers, ten units, binary data; alpha = 0.095.
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha(zip(a, b, strict=True)) == pytest.approx(0.095, abs=5e-4)


def test_alpha_from_unit_shapes_equals_alpha_from_units():
    units = [(True, True)] * 7 + [(True, False)] * 2 + [(False, False)] * 3 + [(True, True, False)]
    shapes = [({True: 2}, 7), ({True: 1, False: 1}, 2), ({False: 2}, 3), ({True: 2, False: 1}, 1)]
    assert krippendorff_alpha_from_counts(shapes) == pytest.approx(krippendorff_alpha(units))


def test_alpha_edge_cases():
    assert krippendorff_alpha([(1, 1), (0, 0), (1, 1)]) == pytest.approx(1.0)  # perfect, with variation
    assert krippendorff_alpha([(1, 1), (1, 1)]) is None  # no variation: undefined, not 1
    assert krippendorff_alpha([(1, 1)]) is None  # one unit, one value
    assert krippendorff_alpha([(1, 0)]) == pytest.approx(0.0)  # one unit, the two raters differ
    assert krippendorff_alpha([(1, N), (N, 0)]) is None  # nothing pairable
    assert krippendorff_alpha([]) is None
    # Systematic disagreement is worse than chance.
    assert krippendorff_alpha([(1, 0), (0, 1), (1, 0), (0, 1)]) < 0
    # Units of one value do not change it, whatever their number of raters.
    assert krippendorff_alpha([(1, 1), (0, 0), (1, 0), (1,), (N, 0)]) == krippendorff_alpha([(1, 1), (0, 0), (1, 0)])


def test_kappa_matches_the_textbook_example():
    # 50 proposals read by two readers: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no; p_o = 0.7,
    # p_e = 0.5, kappa = 0.4 (the standard example, e.g. Wikipedia's "Cohen's kappa").
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa_from_table({("y", "y"): 20, ("y", "n"): 5, ("n", "y"): 10, ("n", "n"): 15}) == pytest.approx(0.4)


def test_kappa_edge_cases():
    assert cohen_kappa([(1, 1), (0, 0)]) == pytest.approx(1.0)
    assert cohen_kappa([(1, 1), (1, 1)]) is None  # both always say the same one thing
    assert cohen_kappa([]) is None
    assert cohen_kappa([(1, 0)]) == pytest.approx(0.0)  # one unit: p_o = 0, p_e = 0
    assert cohen_kappa([(1, 0), (0, 1)]) == pytest.approx(-1.0)
