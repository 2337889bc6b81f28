"""SVG chart geometry: scales, bars, stacks, groups, histograms, lines and small multiples."""

import pytest
from django.template.loader import render_to_string

from charts import svg as charts


@pytest.mark.parametrize(
    ("peak", "top", "marks"),
    [
        (4, 4, [0, 1, 2, 3, 4]),
        (3, 3, [0, 1, 2, 3]),
        (7, 8, [0, 2, 4, 6, 8]),
        (100, 100, [0, 20, 40, 60, 80, 100]),
        (66.7, 80, [0, 20, 40, 60, 80]),
        (0.3, 0.3, [0, 0.1, 0.2, 0.3]),
        (1234, 1500, [0, 500, 1000, 1500]),
    ],
)
def test_nice_scale_has_round_ticks_at_or_above_the_peak(peak, top, marks):
    got_top, got_marks = charts.nice_scale(peak)
    assert got_top == pytest.approx(top) and got_marks == pytest.approx(marks)
    assert charts.nice_scale(0) == (1.0, [0.0, 1.0])


def test_vertical_bars_are_proportional_and_linked():
    chart = charts.bar_chart(["a", "b", "c"], [1, 2, 0], title="T", href=lambda s, i: f"/rows/{i}")
    assert [b.value for b in chart.bars] == [1, 2]  # a zero draws no bar
    a, b = chart.bars
    assert b.height == pytest.approx(2 * a.height) and a.y + a.height == pytest.approx(b.y + b.height)
    assert (a.href, b.href) == ("/rows/0", "/rows/1") and a.title == "a: 1"
    assert [label.text for label in chart.category_labels] == ["a", "b", "c"]
    assert not chart.legend and not chart.empty


def test_stacked_bars_stack_and_grouped_bars_stand_side_by_side():
    series = [("x", [1, 3]), ("y", [2, 1])]
    stacked = charts.stacked_bar_chart(["p", "q"], series, title="T")
    first = [b for b in stacked.bars if b.title.startswith("p")]
    assert first[0].y == pytest.approx(first[1].y + first[1].height)  # y sits on x
    assert [e.name for e in stacked.legend] == ["x", "y"]
    grouped = charts.stacked_bar_chart(["p", "q"], series, title="T", grouped=True, horizontal=True)
    p = [b for b in grouped.bars if b.title.startswith("p")]
    assert p[0].x == p[1].x and p[1].width == pytest.approx(2 * p[0].width) and p[1].y > p[0].y
    assert grouped.height > charts.TOP + 2 * charts.ROW  # a horizontal chart grows with its rows


def test_histograms_label_their_bins_and_refuse_bad_edges():
    chart = charts.histogram([0, 10, 20], [3, 1], title="Scores")
    assert [label.text for label in chart.category_labels] == ["0–10", "10–20"] and chart.kind == "histogram"
    with pytest.raises(ValueError, match="one edge more"):
        charts.histogram([0, 10], [1, 2], title="x")


def test_nothing_to_draw_is_an_empty_chart():
    assert charts.bar_chart([], [], title="T").empty
    assert charts.bar_chart(["a"], [0], title="T").empty
    assert charts.line_chart(["a"], [("s", [None])], title="T").empty


def test_lines_skip_missing_points_and_small_multiples_share_a_scale():
    line = charts.line_chart(["d1", "d2", "d3"], [("s", [1, None, 3])], title="T")
    assert [p.value for p in line.lines[0].points] == [1, 3] and len(line.lines[0].path.split()) == 2
    low, high = charts.small_multiples(["d1", "d2"], [("low", [1, 1]), ("high", [4, 4])])
    # Same value, same height: the scale is shared, so 1 sits lower than 4.
    assert low.lines[0].points[0].y > high.lines[0].points[0].y
    assert low.height == high.height == 40 and not low.value_labels


def test_the_partial_draws_titles_links_and_an_empty_note():
    chart = charts.bar_chart(["a & b"], [2], title="Counts <per> kind", href=lambda s, i: "/x?a=1&b=2")
    svg = render_to_string("charts/chart.html", {"chart": chart, "chart_id": "c1"})
    assert 'role="img"' in svg and 'aria-labelledby="c1-t"' in svg
    assert '<title id="c1-t">Counts &lt;per&gt; kind</title>' in svg
    assert '<a href="/x?a=1&amp;b=2">' in svg and "<title>a &amp; b: 2</title>" in svg
    empty = render_to_string("charts/chart.html", {"chart": charts.bar_chart([], [], title="E")})
    assert "Nothing in this range" in empty and "<rect" not in empty


# --- units on the axes -------------------------------------------------------------------------------


def test_a_vertical_chart_names_both_axes_units_and_makes_room_for_them():
    plain = charts.bar_chart(["a", "b"], [3, 5], title="t", width=300, height=150)
    chart = charts.bar_chart(["a", "b"], [3, 5], title="t", width=300, height=150, unit="items", category_unit="score")
    assert [lb.text for lb in chart.axis_titles] == ["items", "score"]
    assert chart.axis.y1 == plain.axis.y1 - charts.UNIT_ROW  # the category unit's row under the labels
    assert max(b.height for b in chart.bars) < max(b.height for b in plain.bars)  # the value unit's above
    out = charts.render_svg(chart)
    assert ">items</text>" in out and ">score</text>" in out
    assert "b: 5 items" in out  # a bar's title says what it counts


def test_a_horizontal_chart_puts_its_unit_under_the_value_axis_and_grows():
    plain = charts.bar_chart(["a", "b"], [3, 5], title="t", horizontal=True)
    chart = charts.bar_chart(["a", "b"], [3, 5], title="t", horizontal=True, unit="%")
    assert chart.height == plain.height + charts.UNIT_ROW
    (unit,) = chart.axis_titles
    assert unit.text == "%" and unit.y > max(lb.y for lb in chart.value_labels)
    assert "b: 5%" in charts.render_svg(chart)


def test_a_line_chart_names_its_units_and_a_chart_without_units_draws_none():
    chart = charts.line_chart(["x", "y"], [("s", [1, 2])], title="t", unit="minutes", category_unit="day")
    assert [lb.text for lb in chart.axis_titles] == ["minutes", "day"]
    assert "axis-unit" not in charts.render_svg(charts.line_chart(["x", "y"], [("s", [1, 2])], title="t"))
