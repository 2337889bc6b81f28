"""The dashboards' panels as people see them: each selector's numbers as charts, a table and links.

`panels_build` runs the nine selectors of `reviewer.dashboards` for one range and turns their data
into `Panel`s (charts from `charts.svg`, table cells, links to the rows behind every number);
`panels_html` draws them (the costly part of the page: thousands of SVG marks). The page view
renders these live for a custom range, and `reviewer.dashboard_snapshots` stores them for presets.
"""

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import ItemStatus
from charts import svg

from . import dashboards as d

S = ItemStatus
STATUS_COLOURS = {
    # Work not yet handed on in greys, the review stages in colour, accepted in green.
    S.DRAFT: "#c4cbd2",
    S.ANNOTATING: "#8a949e",
    S.SUBMITTED: "#56B4E9",
    S.SCORED: "#0072B2",
    S.EXAMINING: "#E69F00",
    S.FLAGGED: "#D55E00",
    S.REVISING: "#CC79A7",
    S.ACCEPTED: "#009E73",
}
# The actions of the throughput panel as its legend and its table's headings name them.
ACTION_NAMES = {
    "submits": gettext_lazy("submits"),
    "revisions": gettext_lazy("revisions"),
    "passes": gettext_lazy("passes"),
    "flags": gettext_lazy("flags"),
}
ACTION_HEADS = {
    "submits": gettext_lazy("Submits"),
    "revisions": gettext_lazy("Revisions"),
    "passes": gettext_lazy("Passes"),
    "flags": gettext_lazy("Flags"),
}
ACTION_COLOURS = {"submits": "#0072B2", "revisions": "#CC79A7", "passes": "#009E73", "flags": "#D55E00"}


@dataclass
class Cell:
    text: str
    href: str | None = None
    numeric: bool = False


@dataclass
class Panel:
    key: str
    number: int
    title: str
    csv_url: str
    intro: str = ""
    charts: list = field(default_factory=list)  # svg.Chart, or (caption, Chart) for small multiples
    columns: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""


def _pct(rate) -> str:
    return "—" if rate is None else f"{rate * 100:.1f}%"


def _num(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _duration(seconds) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


class _Links:
    """URLs of one dashboard view, each carrying the date range."""

    def __init__(self, project, period):
        self.slug = project.slug
        self.range = {"from": period.start.isoformat(), "to": period.end.isoformat()}
        # Paths are reversed once per panel, not once per bar: a page has thousands of links.
        self._rows = {p: reverse("reviewer:dashboard_rows", args=[self.slug, p]) for p in d.PANELS}
        self._queue = reverse("reviewer:queue_detail", args=[self.slug, 0]).rsplit("/0/", 1)[0]

    def rows(self, panel: str, **params) -> str:
        query = urlencode({**self.range, **{k: v for k, v in params.items() if v is not None}})
        return f"{self._rows[panel]}?{query}"

    def csv(self, panel: str) -> str:
        return f"{reverse('reviewer:dashboard_csv', args=[self.slug, panel])}?{urlencode(self.range)}"

    def queue(self, queue_id: int) -> str:
        return f"{self._queue}/{queue_id}/"


def _n(value: int, href: str | None) -> Cell:
    return Cell(f"{value:,}", href if value else None, numeric=True)


# --- one builder per panel: the chart(s) and the table from the selector's data ---------------------------


def _progress(panel: Panel, data, links: _Links) -> None:
    statuses = S.values
    panel.charts = [
        svg.stacked_bar_chart(
            [r.label for r in data],
            [(str(S(s).label), [r.counts[s] for r in data]) for s in statuses],
            title=_("Items per kind and status"),
            horizontal=True,
            label_width=190,
            colours=[STATUS_COLOURS[s] for s in statuses],
            unit=_("items"),
            href=lambda si, ki: links.rows("progress", kind=data[ki].kind, status=statuses[si]),
        )
    ]
    panel.columns = [_("Kind"), *(str(S(s).label) for s in statuses), _("Total")]
    panel.rows = [
        [Cell(r.label)]
        + [_n(r.counts[s], links.rows("progress", kind=r.kind, status=s)) for s in statuses]
        + [_n(r.total, links.rows("progress", kind=r.kind))]
        for r in data
    ]
    panel.intro = _("Every item now, whatever the range.")


def _throughput(panel: Panel, data: d.Throughput, links: _Links) -> None:
    per_day = data.per_day()
    days = [day.strftime("%m-%d") for day in data.days]
    panel.charts = [
        svg.stacked_bar_chart(
            days,
            [(str(ACTION_NAMES[a]), per_day[a]) for a in d.ACTIONS],
            title=_("Work per day, everyone"),
            colours=list(ACTION_COLOURS.values()),
            unit=_("items"),
            category_unit=_("day"),
        )
    ]
    people = data.people()
    sparks = svg.small_multiples(
        days,
        [(name, daily) for _pk, name, _totals, daily in people],
        width=150,
        height=28,
        href=lambda p, i: links.rows("throughput", person=people[p][0], day=data.days[i].isoformat()),
    )
    panel.columns = [_("Person"), *(str(ACTION_HEADS[a]) for a in d.ACTIONS), _("Total"), _("Per day")]
    panel.rows = [
        [Cell(name)]
        + [_n(totals[a], links.rows("throughput", person=pk, action=a)) for a in d.ACTIONS]
        + [_n(sum(totals.values()), links.rows("throughput", person=pk)), Cell("", None)]
        for pk, name, totals, _daily in people
    ]
    for row, spark in zip(panel.rows, sparks, strict=True):
        row[-1] = spark  # the template draws a Chart cell as a sparkline
    panel.intro = _(
        "Submits and revisions come from the review log; passes and flags are each examiner's own verdicts."
    )


def _time(panel: Panel, data: list[d.TimingRow], links: _Links) -> None:
    minutes = [
        (_("median"), [round((r.median_s or 0) / 60, 2) for r in data]),
        (_("90th percentile"), [round((r.p90_s or 0) / 60, 2) for r in data]),
    ]
    panel.charts = [
        svg.stacked_bar_chart(
            [r.label for r in data],
            minutes,
            title=_("Minutes per item: median and 90th percentile"),
            horizontal=True,
            grouped=True,
            label_width=210,
            unit=_("minutes"),
            href=lambda _s, i: _time_link(links, data[i]),
        )
    ]
    panel.columns = [_("Kind · stage"), _("Items"), _("Median"), _("90th percentile")]
    panel.rows = [
        [
            Cell(r.label),
            _n(r.n, _time_link(links, r)),
            Cell(_duration(r.median_s), numeric=True),
            Cell(_duration(r.p90_s), numeric=True),
        ]
        for r in data
    ]
    panel.intro = _("Leases completed in the range: from lease to completion. Verdicts: the examiner's own time.")


def _time_link(links: _Links, r: d.TimingRow) -> str:
    if r.source == "verdict":
        return links.rows("time", source="verdict", kind=r.kind)
    return links.rows("time", source="lease", kind=r.kind, stage=r.stage)


def _flags(panel: Panel, data: list[d.FlagRow], links: _Links, param: str) -> None:
    def params(r: d.FlagRow) -> dict:
        return {param: r.key}

    panel.charts = [
        svg.bar_chart(
            [r.label for r in data],
            [round((r.rate or 0) * 100, 1) for r in data],
            title=_("Flag rate, %(percent)s of decided rounds") % {"percent": "%"},
            horizontal=True,
            label_width=200,
            colour=3,
            unit="%",
            href=lambda _s, i: links.rows(panel.key, outcome="flagged", **params(data[i])),
        )
    ]
    panel.columns = [_("Annotator") if param == "author" else _("Category"), _("Decided"), _("Flagged"), _("Flag rate")]
    panel.rows = [
        [
            Cell(r.label),
            _n(r.decided, links.rows(panel.key, **params(r))),
            _n(r.flagged, links.rows(panel.key, outcome="flagged", **params(r))),
            Cell(_pct(r.rate), numeric=True),
        ]
        for r in data
    ]


def _judge(panel: Panel, data: d.JudgeScores, links: _Links) -> None:
    for kind in data.kinds:
        chart = svg.histogram(
            d.BIN_EDGES,
            kind.bins,
            title=_("%(kind)s: judge scores") % {"kind": kind.label},
            width=320,
            height=170,
            colour=1,
            unit=_("items"),
            category_unit=_("score"),
            href=lambda _s, i, k=kind.kind: links.rows("judge", kind=k, bin=i),
        )
        panel.charts.append(
            (
                _("%(kind)s: %(total)s scores, %(rate)s at ≥ %(threshold)s")
                % {
                    "kind": kind.label,
                    "total": f"{kind.total:,}",
                    "rate": _pct(kind.pass_rate),
                    "threshold": data.threshold,
                },
                chart,
            )
        )
    panel.columns = [
        _("Kind"),
        *(f"{lo}–{lo + 10}" for lo in d.BIN_EDGES[:-1]),
        _("Scores"),
        f"≥ {data.threshold}",
        _("Pass rate"),
    ]
    panel.rows = [
        [Cell(k.label)]
        + [_n(n, links.rows("judge", kind=k.kind, bin=i)) for i, n in enumerate(k.bins)]
        + [
            Cell(f"{k.total:,}", numeric=True),
            Cell(f"{k.passing:,}", numeric=True),
            Cell(_pct(k.pass_rate), numeric=True),
        ]
        for k in data.kinds
    ]
    panel.intro = _(
        "Every judge run in the range; the pass rate is at the project's threshold now (%(threshold)s)."
    ) % {"threshold": data.threshold}


def _queues(panel: Panel, data: list[d.QueueRow], links: _Links) -> None:
    panel.charts = [
        svg.bar_chart(
            [r.queue.name for r in data],
            [r.depth for r in data],
            title=_("Items with a free slot, per queue"),
            horizontal=True,
            label_width=200,
            colour=0,
            unit=_("items"),
            href=lambda _s, i: links.queue(data[i].queue.pk),
        )
    ]
    panel.columns = [
        _("Queue"),
        _("Stage"),
        _("Items"),
        _("Overlap"),
        _("Depth"),
        _("Active leases"),
        _("Expired leases"),
    ]
    panel.rows = [
        [
            Cell(r.queue.name, links.queue(r.queue.pk)),
            Cell(r.queue.get_stage_display()),
            Cell(r.queue.get_item_kind_display()),
            Cell(str(r.queue.overlap), numeric=True),
            Cell(f"{r.depth:,}", links.queue(r.queue.pk) + "#items-h", numeric=True),
            Cell(f"{r.active:,}", links.queue(r.queue.pk) + "#leases-h", numeric=True),
            _n(r.expired, links.rows("expired", queue=r.queue.pk)),
        ]
        for r in data
    ]
    panel.intro = _("Now, whatever the range. Expired leases: all time (the next panel shows those in the range).")


def _expired(panel: Panel, data: d.ExpiredLeases, links: _Links) -> None:
    days = [day.strftime("%m-%d") for day in data.days]
    series = data.series

    def key(pk):
        return "none" if pk is None else pk

    panel.charts = [
        svg.stacked_bar_chart(
            days,
            [(name, counts) for _pk, name, counts in series],
            title=_("Leases that lapsed, per day and queue"),
            unit=_("leases"),
            category_unit=_("day"),
            href=lambda s, i: links.rows("expired", queue=key(series[s][0]), day=data.days[i].isoformat()),
        )
    ]
    panel.columns = [_("Queue"), _("Lapsed in the range"), _("Busiest day")]
    panel.rows = []
    for pk, name, counts in series:
        peak = max(range(len(counts)), key=counts.__getitem__)
        panel.rows.append(
            [
                Cell(name, links.queue(pk) if pk else None),
                _n(sum(counts), links.rows("expired", queue=key(pk))),
                Cell(
                    f"{data.days[peak].isoformat()} ({counts[peak]})",
                    links.rows("expired", queue=key(pk), day=data.days[peak].isoformat()),
                ),
            ]
        )


def _agreement(panel: Panel, data: list[d.QueueAgreement], links: _Links) -> None:
    def key(pk):
        return "none" if pk is None else pk

    parts = [
        (_("all passed"), "all_passed"),
        ("split", "split"),  # untranslated, like the table's "Split" column below
        (_("all flagged"), "all_flagged"),
    ]
    panel.charts = [
        svg.stacked_bar_chart(
            [r.name for r in data],
            [(label, [getattr(r, attr) for r in data]) for label, attr in parts],
            title=_("Units (item rounds with two or more verdicts) by how the examiners agreed"),
            horizontal=True,
            label_width=200,
            colours=["#009E73", "#E69F00", "#D55E00"],
            unit=_("units"),
            href=lambda s, i: links.rows("agreement", queue=key(data[i].queue_id), split="1" if s == 1 else None),
        )
    ]
    panel.columns = [
        _("Queue"),
        _("Overlap"),
        _("Units"),
        "Split",  # untranslated: the catalogue's "Split" is a release split, not examiners disagreeing
        _("Examiners"),
        _("Observed agreement"),
        _("Krippendorff's α"),
        _("Cohen's κ"),
    ]
    panel.rows = [
        [
            Cell(r.name, links.queue(r.queue_id) if r.queue_id else None),
            Cell(str(r.overlap or "—"), numeric=True),
            _n(r.units, links.rows("agreement", queue=key(r.queue_id))),
            _n(r.split, links.rows("agreement", queue=key(r.queue_id), split="1")),
            Cell(str(r.examiners), numeric=True),
            Cell(_pct(r.observed), numeric=True),
            Cell(_num(r.alpha), numeric=True),
            Cell(_num(r.kappa), numeric=True),
        ]
        for r in data
    ]
    panel.intro = _(
        "Pass or flag per unit. α is undefined (—) without variation, e.g. when every verdict was a pass; "
        "κ only when the same two examiners judged every unit."
    )


BUILDERS = {
    "progress": _progress,
    "throughput": _throughput,
    "time": _time,
    "flags-author": lambda p, data, links: _flags(p, data, links, "author"),
    "flags-category": lambda p, data, links: _flags(p, data, links, "category"),
    "judge": _judge,
    "queues": _queues,
    "expired": _expired,
    "agreement": _agreement,
}


def panels_build(*, project, period: d.Period, now=None) -> tuple[list[Panel], dict[str, d.Table], bool]:
    """Every panel for `period`, the numbers of each as its CSV holds them, and whether the project has queues."""
    now = now or timezone.now()
    links = _Links(project, period)
    queues = d.project_queues(project=project)
    panels, tables = [], {}
    for number, (key, title) in enumerate(d.PANELS.items(), start=1):
        panel = Panel(key=key, number=number, title=title, csv_url=links.csv(key))
        data = d.panel_data(key, project=project, period=period, queues=queues, now=now)
        BUILDERS[key](panel, data, links)
        tables[key] = d.panel_table(key, data)
        panels.append(panel)
    return panels, tables, bool(queues)


def panels_html(panels: list[Panel], *, project, has_queues: bool) -> str:
    """The panels drawn, exactly as the dashboards page shows them (its `panels` partial)."""
    context = {"panels": panels, "project": project, "has_queues": has_queues}
    return render_to_string("reviewer/dashboard.html#panels", context)
