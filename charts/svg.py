"""Charts as server-rendered SVG: pure functions that turn series into geometry.

Nothing here touches the database or knows what it draws. A function returns a `Chart` whose
bars, lines, ticks and labels carry their pixel positions, values and (optionally) links; the
partial `templates/charts/chart.html` (through studio's `chart_svg` tag) draws any Chart:

    {% include "charts/chart.html" with chart=my_chart %}

so a page needs no chart library and no JavaScript, prints and zooms crisply, and each bar can be
a link to the rows behind its number. Colours are the Okabe-Ito palette (safe for colour-blind
readers); every mark has a <title> with its exact value for hover and screen readers, and pages
are expected to show the same numbers in a table beside the chart.

Kinds: `bar_chart` (vertical or horizontal), `stacked_bar_chart`, `histogram`, `line_chart`,
and `small_multiples` (one small line or bar chart per series, on a shared scale).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
MUTED = "#8a949e"

Href = Callable[[int, int], str | None]  # (series index, category index) → link or None


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    fill: str
    value: float
    title: str  # what hovering shows: category, series and exact value
    href: str | None = None


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    value: float
    title: str
    href: str | None = None


@dataclass(frozen=True)
class Line:
    name: str
    stroke: str
    points: list[Point]  # the markers
    vertices: list[tuple[float, float]] | None = None  # the line's corners, when not every one is a marker

    @property
    def path(self) -> str:
        corners = self.vertices if self.vertices is not None else [(p.x, p.y) for p in self.points]
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "middle"  # SVG text-anchor


@dataclass(frozen=True)
class Gridline:
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True)
class LegendEntry:
    name: str
    fill: str
    x: float = 0
    y: float = 0


@dataclass
class Chart:
    kind: str
    width: int
    height: int
    title: str
    description: str = ""
    bars: list[Bar] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    value_labels: list[Label] = field(default_factory=list)  # the value axis
    category_labels: list[Label] = field(default_factory=list)  # the category axis
    gridlines: list[Gridline] = field(default_factory=list)
    axis: Gridline | None = None  # the baseline (value 0)
    legend: list[LegendEntry] = field(default_factory=list)
    # What the axes count ("items", "%", "minutes", "score"): drawn beside each axis, and in each mark's title.
    unit: str = ""  # the value axis
    category_unit: str = ""  # the category axis (a histogram's bins)
    axis_titles: list[Label] = field(default_factory=list)
    empty: bool = False  # nothing to draw: the partial says so instead


# --- scales -------------------------------------------------------------------------------------


def nice_scale(peak: float, most: int = 5) -> tuple[float, list[float]]:
    """An axis from 0 to a round top at or above `peak`, ticked every 1, 2 or 5 × 10^k, with at most
    `most` steps, so that small counts get whole-number ticks (0, 1, 2, 3 rather than 0, 0.75, …)."""
    if not peak or peak <= 0 or not math.isfinite(peak):
        return 1.0, [0.0, 1.0]
    raw = peak / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw - 1e-12)
    steps = max(1, math.ceil(peak / step - 1e-9))
    return step * steps, [round(step * i, 10) for i in range(steps + 1)]


def format_value(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _thin(n: int, room: float, per_label: float) -> int:
    """Show every k-th category label so that labels do not overlap."""
    fits = max(1, int(room // per_label))
    return max(1, math.ceil(n / fits))


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


# --- bars ----------------------------------------------------------------------------------------

LEFT = 48  # room for value labels (vertical charts)
BOTTOM = 22  # room for category labels
TOP = 8
RIGHT = 8
ROW = 18  # height of one category in a horizontal chart
LEGEND_ROW = 18
UNIT_ROW = 14  # room for an axis's unit


def _legend(chart: Chart, names: Sequence[str], colours: Sequence[str], left: float) -> float:
    """Lay the legend out in rows across the chart's width; returns the height it takes."""
    if len(names) < 2:
        return 0
    x, y = left, TOP - 2
    for name, colour in zip(names, colours, strict=False):
        room = 18 + 6.5 * len(name) + 12
        if x + room > chart.width - RIGHT and x > left:
            x, y = left, y + LEGEND_ROW
        chart.legend.append(LegendEntry(name, colour, x, y))
        x += room
    return y + LEGEND_ROW - (TOP - 2)


def stacked_bar_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    description: str = "",
    href: Href | None = None,
    horizontal: bool = False,
    grouped: bool = False,
    width: int = 640,
    height: int = 220,
    label_width: int = 140,
    colours: Sequence[str] | None = None,
    kind: str = "stacked",
    unit: str = "",
    category_unit: str = "",
) -> Chart:
    """Bars per category, one segment per series stacked on each other, or side by side when
    `grouped` (one series: a plain bar chart). Horizontal charts grow with their categories."""
    categories = [str(c) for c in categories]
    colours = list(colours) if colours else [_colour(i) for i in range(len(series))]
    n, k = len(categories), len(series)
    values = [[(vs[i] or 0) for _, vs in series] for i in range(n)]
    peaks = [max(v) if grouped else sum(v) for v in values]
    row = max(ROW, 10 * k + 6) if grouped else ROW
    chart = Chart(
        kind=kind,
        width=width,
        height=height,
        title=title,
        description=description,
        unit=unit,
        category_unit=category_unit,
    )
    legend = _legend(chart, [name for name, _ in series], colours, label_width if horizontal else LEFT)
    if horizontal:
        chart.height = int(TOP + legend + n * row + BOTTOM + (UNIT_ROW if unit else 0))
    if n == 0 or not any(peaks):
        chart.empty = True
        return chart
    top, marks = nice_scale(max(peaks))
    plot_top = TOP + legend

    def mark(i: int, s: int, start: float, value: float, rect: tuple[float, float, float, float]) -> None:
        title_text = _title(categories[i], series[s][0] if k > 1 else "", value, unit)
        chart.bars.append(Bar(*rect, colours[s], value, title_text, href(s, i) if href else None))

    if horizontal:
        left, right = label_width, width - RIGHT - 44  # room for the value at the bar's end
        bottom = plot_top + n * row
        if unit:  # under the value axis's numbers, at its end
            chart.axis_titles.append(Label(right, bottom + 14 + UNIT_ROW, unit, "end"))

        def scale(v: float) -> float:
            return (right - left) * v / top

        for t in marks:
            x = left + scale(t)
            chart.gridlines.append(Gridline(x, plot_top, x, bottom))
            chart.value_labels.append(Label(x, bottom + 14, format_value(t)))
        chart.axis = Gridline(left, plot_top, left, bottom)
        for i, category in enumerate(categories):
            y, start = plot_top + i * row + 2, 0.0
            chart.category_labels.append(Label(left - 6, y + row / 2 + 2, _clip(category, label_width // 7), "end"))
            for s in range(k):
                value = values[i][s]
                if grouped:
                    thick = (row - 4) / k
                    if value:
                        mark(i, s, 0, value, (left, y + s * thick, scale(value), thick - 1))
                        chart.value_labels.append(
                            Label(left + scale(value) + 4, y + s * thick + thick - 2, format_value(value), "start")
                        )
                elif value:
                    mark(i, s, start, value, (left + scale(start), y, scale(value), row - 4))
                start += value
            if not grouped:
                chart.value_labels.append(
                    Label(left + scale(peaks[i]) + 4, y + row / 2 + 2, format_value(peaks[i]), "start")
                )
        return chart

    left, right, bottom = LEFT, width - RIGHT, height - BOTTOM
    plot_top, bottom = _unit_room(chart, plot_top, bottom, right)

    def scale_v(v: float) -> float:
        return (bottom - plot_top) * v / top

    for t in marks:
        y = bottom - scale_v(t)
        chart.gridlines.append(Gridline(left, y, right, y))
        chart.value_labels.append(Label(left - 6, y + 4, format_value(t), "end"))
    chart.axis = Gridline(left, bottom, right, bottom)
    band = (right - left) / n
    gap = min(band * 0.2, 8)
    every = _thin(n, right - left, max(7 * max(len(c) for c in categories), 28))
    for i, category in enumerate(categories):
        x, start = left + i * band + gap / 2, 0.0
        if i % every == 0:
            chart.category_labels.append(Label(x + (band - gap) / 2, bottom + 15, category))
        for s in range(k):
            value = values[i][s]
            if value:
                h = scale_v(value)
                if grouped:
                    w = (band - gap) / k
                    mark(i, s, 0, value, (x + s * w, bottom - h, w - 1, h))
                else:
                    mark(i, s, start, value, (x, bottom - scale_v(start) - h, band - gap, h))
            start += value
    return chart


def _unit_room(chart: Chart, plot_top: float, bottom: float, right: float) -> tuple[float, float]:
    """A vertical chart's units: the value axis's above its numbers, the category axis's under its
    labels at the right; the plot gives up the room. Returns the new (plot_top, bottom)."""
    if chart.unit:
        plot_top += UNIT_ROW
        chart.axis_titles.append(Label(2, plot_top - 6, chart.unit, "start"))
    if chart.category_unit:
        bottom -= UNIT_ROW
        chart.axis_titles.append(Label(right, chart.height - 3, chart.category_unit, "end"))
    return plot_top, bottom


def bar_chart(
    categories: Sequence[str], values: Sequence[float], *, title: str, series_name: str = "", colour: int = 0, **kw
) -> Chart:
    """One value per category; `href(0, i)` links the i-th bar."""
    kw.setdefault("colours", [_colour(colour)])
    return stacked_bar_chart(categories, [(series_name, values)], title=title, kind="bar", **kw)


def histogram(edges: Sequence[float], counts: Sequence[float], *, title: str, closed_last: bool = True, **kw) -> Chart:
    """Counts per bin; bin i is [edges[i], edges[i+1]) (the last one closed when `closed_last`)."""
    if len(edges) != len(counts) + 1:
        raise ValueError("a histogram needs one edge more than it has bins")
    labels = [f"{format_value(edges[i])}–{format_value(edges[i + 1])}" for i in range(len(counts))]
    chart = bar_chart(labels, counts, title=title, **kw)
    chart.kind = "histogram"
    return chart


def _title(category: str, series: str, value: float, unit: str = "") -> str:
    amount = format_value(value) + (unit if unit == "%" else f" {unit}" if unit else "")
    return f"{category}{' · ' + series if series else ''}: {amount}"


def _clip(text: str, room: int) -> str:
    return text if len(text) <= room else text[: max(room - 1, 1)] + "…"


# --- lines ---------------------------------------------------------------------------------------


def line_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    *,
    title: str,
    description: str = "",
    href: Href | None = None,
    width: int = 640,
    height: int = 220,
    top: float | None = None,
    axes: bool = True,
    colours: Sequence[str] | None = None,
    zero_markers: bool = True,
    unit: str = "",
    category_unit: str = "",
) -> Chart:
    """One line per series over the categories (e.g. days); None leaves a gap in the line's points.
    Each point is a marker with its value (and link); `zero_markers=False` leaves out the markers
    of zeros, which keeps a page of many small multiples light."""
    categories = [str(c) for c in categories]
    colours = list(colours) if colours else [_colour(i) for i in range(len(series))]
    chart = Chart(
        kind="line",
        width=width,
        height=height,
        title=title,
        description=description,
        unit=unit,
        category_unit=category_unit,
    )
    legend = _legend(chart, [name for name, _ in series], colours, LEFT) if axes else 0
    values = [v for _, vs in series for v in vs if v is not None]
    if not categories or not values:
        chart.empty = True
        return chart
    top, marks = (top, [0.0, top]) if top is not None else nice_scale(max(values))
    plot_top = TOP + legend if axes else 3
    left, right = (LEFT, width - RIGHT) if axes else (2, width - 2)
    bottom = height - BOTTOM if axes else height - 3
    if axes:
        plot_top, bottom = _unit_room(chart, plot_top, bottom, right)

    def y_of(v: float) -> float:
        return bottom - (bottom - plot_top) * v / top if top else bottom

    n = len(categories)
    step = (right - left) / (n - 1) if n > 1 else 0
    if axes:
        for t in marks:
            y = y_of(t)
            chart.gridlines.append(Gridline(left, y, right, y))
            chart.value_labels.append(Label(left - 6, y + 4, format_value(t), "end"))
        chart.axis = Gridline(left, bottom, right, bottom)
        every = _thin(n, right - left, max(7 * max(len(c) for c in categories), 28))
        chart.category_labels = [
            Label(left + i * step if n > 1 else (left + right) / 2, bottom + 15, c)
            for i, c in enumerate(categories)
            if i % every == 0
        ]
    for s, (name, vs) in enumerate(series):
        xs = [left + i * step if n > 1 else (left + right) / 2 for i in range(n)]
        path = [(xs[i], y_of(v)) for i, v in enumerate(vs) if v is not None]
        points = [
            Point(
                xs[i],
                y_of(v),
                v,
                _title(categories[i], name if len(series) > 1 else "", v, unit),
                href(s, i) if href else None,
            )
            for i, v in enumerate(vs)
            if v is not None and (v or zero_markers)
        ]
        chart.lines.append(Line(name, colours[s], points, path))
    return chart


def small_multiples(
    categories: Sequence[str],
    panels: Sequence[tuple[str, Sequence[float | None]]],
    *,
    width: int = 160,
    height: int = 40,
    shared_scale: bool = True,
    href: Href | None = None,
) -> list[Chart]:
    """One small axis-less line chart per panel (e.g. a person's daily counts), on one shared scale
    by default so that their heights compare; each point keeps its exact value in its title."""
    values = [v for _, vs in panels for v in vs if v is not None]
    shared = nice_scale(max(values))[0] if values and shared_scale else None
    charts = []
    for p, (name, vs) in enumerate(panels):
        link = (lambda _s, i, p=p: href(p, i)) if href else None
        charts.append(
            line_chart(
                categories,
                [(name, vs)],
                title=name,
                width=width,
                height=height,
                top=shared,
                axes=False,
                href=link,
                zero_markers=False,
            )
        )
    return charts


# --- drawing ---------------------------------------------------------------------------------------

INK, MUTED_INK, GRID = "#1d232b", "#5d6875", "#e3e7eb"


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def render_svg(chart: Chart, chart_id: str = "chart") -> str:
    """The chart as one inline <svg> string (escaped here; mark it safe to output).

    Built in Python rather than a template loop: a page of a dozen charts has thousands of marks, and
    a template tag per mark would cost more than the queries behind them."""
    from html import escape

    cid = escape(chart_id)
    labelled = f"{cid}-t {cid}-d" if chart.description else f"{cid}-t"
    out = [
        f'<svg class="chart chart-{escape(chart.kind)}" viewBox="0 0 {chart.width} {chart.height}" '
        f'width="{chart.width}" height="{chart.height}" role="img" aria-labelledby="{labelled}" '
        'preserveAspectRatio="xMinYMin meet" font-family="system-ui, sans-serif" font-size="11">',
        f'<title id="{cid}-t">{escape(chart.title)}</title>',
    ]
    if chart.description:
        out.append(f'<desc id="{cid}-d">{escape(chart.description)}</desc>')
    if chart.empty:
        out.append(
            f'<text x="{chart.width / 2:g}" y="{chart.height / 2:g}" text-anchor="middle" fill="{MUTED_INK}" '
            'font-style="italic">Nothing in this range</text>'
        )
    else:
        out.append(f'<g stroke="{GRID}" stroke-width="1">')
        out += [f'<line x1="{_f(g.x1)}" y1="{_f(g.y1)}" x2="{_f(g.x2)}" y2="{_f(g.y2)}"/>' for g in chart.gridlines]
        out.append("</g>")
        if chart.axis:
            a = chart.axis
            out.append(f'<line x1="{_f(a.x1)}" y1="{_f(a.y1)}" x2="{_f(a.x2)}" y2="{_f(a.y2)}" stroke="{MUTED_INK}"/>')
        for colour, labels in ((MUTED_INK, chart.value_labels), (INK, chart.category_labels)):
            out.append(f'<g fill="{colour}">')
            out += [
                f'<text x="{_f(lb.x)}" y="{_f(lb.y)}" text-anchor="{lb.anchor}">{escape(lb.text)}</text>'
                for lb in labels
            ]
            out.append("</g>")
        if chart.axis_titles:
            out.append(f'<g fill="{MUTED_INK}" font-style="italic" class="axis-unit">')
            out += [
                f'<text x="{_f(lb.x)}" y="{_f(lb.y)}" text-anchor="{lb.anchor}">{escape(lb.text)}</text>'
                for lb in chart.axis_titles
            ]
            out.append("</g>")
        out.append("<g>")
        for b in chart.bars:
            rect = (
                f'<rect x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.width)}" height="{_f(b.height)}" fill="{b.fill}">'
                f"<title>{escape(b.title)}</title></rect>"
            )
            out.append(f'<a href="{escape(b.href)}">{rect}</a>' if b.href else rect)
        out.append("</g>")
        for line in chart.lines:
            out.append(f'<g><polyline points="{line.path}" fill="none" stroke="{line.stroke}" stroke-width="1.5"/>')
            for p in line.points:
                dot = (
                    f'<circle cx="{_f(p.x)}" cy="{_f(p.y)}" r="2.5" fill="{line.stroke}">'
                    f"<title>{escape(p.title)}</title></circle>"
                )
                out.append(f'<a href="{escape(p.href)}">{dot}</a>' if p.href else dot)
            out.append("</g>")
    if chart.legend:
        out.append(f'<g fill="{INK}">')
        for e in chart.legend:
            out.append(
                f'<rect x="{_f(e.x)}" y="{_f(e.y)}" width="10" height="10" fill="{e.fill}"/>'
                f'<text x="{_f(e.x + 14)}" y="{_f(e.y + 9)}">{escape(e.name)}</text>'
            )
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)
