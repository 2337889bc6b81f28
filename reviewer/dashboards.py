"""Reads behind the admins' dashboards: one project, one date range, every figure counted in the database.

Each selector runs one or a few aggregate queries (GROUP BY in SQL, a fixed number however many
rows there are) and returns small dataclasses; Python only folds the aggregated rows. The same
numbers feed the chart, the table and the CSV of a panel (`panel_table`), and `panel_rows` lists
the rows behind any one number, so every figure can be traced to the items it counts.

Definitions (what each number means):

- **Progress by stage**: items of each kind per status, now (not limited to the date range).
- **Throughput**, per person and day of the range: *submits* are ReviewEvents into "submitted"
  from drafting or annotating, *revisions* those from "revising" (a reviser handing the fixed item
  back); *passes* and *flags* are examiners' own verdicts (ExamVerdict), so with an overlap of 2
  both examiners of an item are counted, not only the one whose verdict moved it.
- **Time per item**: for leases completed in the range, the median and 90th percentile of
  completed − leased per stage and kind (time holding the item, heartbeats included); and of the
  examiners' `seconds_spent` per kind, for verdicts given in the range.
- **Flag rate**: among examination rounds *decided* in the range (ReviewEvents from "examining" to
  "accepted" or "flagged"; with overlap > 1 one decision per round, flagged when any examiner
  flagged), the share that ended flagged. Per annotator: by the item's author (its current one).
  Per category: an MCQ by its category; a QA chain once under each distinct skill among its QA
  pairs (a chain of skills II and PA counts for both, once each); a chain pair once under each
  relation type among its relations. Skills and types are the items' current ones. An item
  without any (a chain with no pairs, a pair with no relations) counts under "(none)".
- **Judge scores**: QualityScore rows created in the range (every judge run, older versions too),
  per kind in bins of 10 (0–10, …, 90–100; 100 falls in the last bin), and how many reach the
  project's *current* threshold (the stored verdict used the threshold of its day).
- **Queue depth**: items with a free slot now (`reviewer.queues.queue_stats`: one query per item
  kind among the project's queues, at most three, plus one for the leases), with live and expired
  leases (all time).
- **Expired leases**: leases that lapsed (swept to "expired", or still "active" past their expiry),
  by queue and by the day they lapsed, within the range.
- **Agreement**: per queue, units = (item, round) with at least two verdicts given in the range;
  Krippendorff's alpha (nominal, pass/flag) over them, and Cohen's kappa when every unit was
  judged by the same two examiners. Counted as unit *shapes* (how many passed out of how many, by
  whom) in SQL, so the folding in Python does not grow with the number of units.

Days are calendar days in the project's time zone setting (settings.TIME_ZONE).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Aggregate, Count, Exists, F, FloatField, Func, IntegerField, Max, Min, OuterRef, Q, Value
from django.db.models.functions import Coalesce, Least, TruncDate
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import MCQ, ChainPair, ItemKind, ItemStatus, QAChain, ReviewEvent
from projects.models import Project
from projects.refusals import Refused

from .agreement import cohen_kappa_from_table, krippendorff_alpha_from_counts
from .models import Assignment, AssignmentStatus, ExamVerdict, QualityScore, ReviewQueue
from .queues import queue_stats

S = ItemStatus
KINDS = [(ItemKind.QA_CHAIN, QAChain), (ItemKind.CHAIN_PAIR, ChainPair), (ItemKind.MCQ, MCQ)]
DEFAULT_DAYS = 30
MAX_DAYS = 366
BIN_EDGES = list(range(0, 101, 10))
ROWS_LIMIT = 200

PANELS = {
    "progress": gettext_lazy("Progress by stage"),
    "throughput": gettext_lazy("Throughput per person and day"),
    "time": gettext_lazy("Time per item"),
    "flags-author": gettext_lazy("Flag rate per annotator"),
    "flags-category": gettext_lazy("Flag rate per category"),
    "judge": gettext_lazy("Judge scores"),
    "queues": gettext_lazy("Queue depth"),
    "expired": gettext_lazy("Expired leases"),
    "agreement": gettext_lazy("Agreement (overlap > 1)"),
}


# --- the date range ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    """Calendar days `start`..`end`, both included."""

    start: dt.date
    end: dt.date

    @classmethod
    def last(cls, days: int = DEFAULT_DAYS, today: dt.date | None = None) -> Period:
        today = today or timezone.localdate()
        return cls(today - dt.timedelta(days=days - 1), today)

    @property
    def since(self) -> dt.datetime:
        return timezone.make_aware(dt.datetime.combine(self.start, dt.time.min))

    @property
    def until(self) -> dt.datetime:
        return timezone.make_aware(dt.datetime.combine(self.end + dt.timedelta(days=1), dt.time.min))

    @property
    def days(self) -> list[dt.date]:
        return [self.start + dt.timedelta(days=i) for i in range((self.end - self.start).days + 1)]

    def q(self, column: str = "created_at") -> Q:
        return Q(**{f"{column}__gte": self.since, f"{column}__lt": self.until})


def period_parse(start: str | None, end: str | None, *, today: dt.date | None = None) -> tuple[Period, list[str]]:
    """The range people asked for, or the last 30 days with the reasons it was not usable."""
    default = Period.last(today=today)
    if not start and not end:
        return default, []
    errors = []
    try:
        first = dt.date.fromisoformat(start) if start else default.start
    except ValueError:
        errors.append(f"“{start}” is not a date (YYYY-MM-DD).")
    try:
        last = dt.date.fromisoformat(end) if end else default.end
    except ValueError:
        errors.append(f"“{end}” is not a date (YYYY-MM-DD).")
    if errors:
        return default, errors + ["Showing the last 30 days instead."]
    if first > last:
        return default, [f"The range starts ({first}) after it ends ({last}). Showing the last 30 days instead."]
    if (last - first).days + 1 > MAX_DAYS:
        return default, [f"A range can span at most {MAX_DAYS} days. Showing the last 30 days instead."]
    return Period(first, last), []


# --- helpers -------------------------------------------------------------------------------------


class Percentile(Aggregate):
    """PostgreSQL's ordered-set aggregate percentile_cont(f) WITHIN GROUP (ORDER BY x)."""

    function = "PERCENTILE_CONT"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"

    def __init__(self, expression, fraction: float, **extra):
        super().__init__(expression, fraction=float(fraction), output_field=FloatField(), **extra)


def _epoch(expression):
    return Func(expression, template="EXTRACT(EPOCH FROM %(expressions)s)", output_field=FloatField())


def _names(ids) -> dict[int, str]:
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    return dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username"))


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


# --- progress ------------------------------------------------------------------------------------


@dataclass
class ProgressRow:
    kind: str
    label: str
    counts: dict[str, int]  # status → items
    total: int


def progress_by_stage(*, project: Project) -> list[ProgressRow]:
    """Items of each kind per status, in one query (a UNION of three GROUP BYs)."""
    parts = [
        model.objects.filter(project=project)
        .order_by()
        .values("status")
        .annotate(n=Count("pk"), kind=Value(str(kind)))
        .values_list("kind", "status", "n")
        for kind, model in KINDS
    ]
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for kind, status, n in parts[0].union(*parts[1:], all=True):
        counts[kind][status] = n
    return [
        ProgressRow(
            str(kind), str(kind.label), {s: counts[kind].get(s, 0) for s in S.values}, sum(counts[kind].values())
        )
        for kind, _ in KINDS
    ]


# --- throughput ----------------------------------------------------------------------------------

ACTIONS = ("submits", "revisions", "passes", "flags")


@dataclass
class ThroughputRow:
    person_id: int
    person: str
    day: dt.date
    submits: int = 0
    revisions: int = 0
    passes: int = 0
    flags: int = 0

    @property
    def total(self) -> int:
        return self.submits + self.revisions + self.passes + self.flags


@dataclass
class Throughput:
    days: list[dt.date]
    rows: list[ThroughputRow]  # one per person and day with any work, by person then day

    def per_day(self) -> dict[str, list[int]]:
        index = {d: i for i, d in enumerate(self.days)}
        out = {a: [0] * len(self.days) for a in ACTIONS}
        for row in self.rows:
            for a in ACTIONS:
                out[a][index[row.day]] += getattr(row, a)
        return out

    def people(self) -> list[tuple[int, str, dict[str, int], list[int]]]:
        """(id, name, totals per action, total per day) per person, busiest first."""
        index = {d: i for i, d in enumerate(self.days)}
        people: dict[int, tuple[str, dict[str, int], list[int]]] = {}
        for row in self.rows:
            name, totals, daily = people.setdefault(
                row.person_id, (row.person, dict.fromkeys(ACTIONS, 0), [0] * len(self.days))
            )
            for a in ACTIONS:
                totals[a] += getattr(row, a)
            daily[index[row.day]] += row.total
        ordered = sorted(people.items(), key=lambda kv: (-sum(kv[1][1].values()), kv[1][0]))
        return [(pk, name, totals, daily) for pk, (name, totals, daily) in ordered]


def throughput(*, project: Project, period: Period) -> Throughput:
    """Submits and revisions from the review log, passes and flags from verdicts: two GROUP BYs."""
    handed_on = (
        ReviewEvent.objects.filter(period.q(), project=project, to_status=S.SUBMITTED, actor__isnull=False)
        .annotate(day=TruncDate("created_at"))
        .values("actor", "day")
        .annotate(
            revisions=Count("pk", filter=Q(from_status=S.REVISING)),
            submits=Count("pk", filter=~Q(from_status=S.REVISING)),
        )
        .order_by()
    )
    judged = (
        ExamVerdict.objects.filter(period.q(), project=project)
        .annotate(day=TruncDate("created_at"))
        .values("examiner", "day")
        .annotate(passes=Count("pk", filter=Q(passed=True)), flags=Count("pk", filter=Q(passed=False)))
        .order_by()
    )
    rows: dict[tuple[int, dt.date], ThroughputRow] = {}
    for r in handed_on:
        row = rows.setdefault((r["actor"], r["day"]), ThroughputRow(r["actor"], "", r["day"]))
        row.submits, row.revisions = r["submits"], r["revisions"]
    for r in judged:
        row = rows.setdefault((r["examiner"], r["day"]), ThroughputRow(r["examiner"], "", r["day"]))
        row.passes, row.flags = r["passes"], r["flags"]
    names = _names(pk for pk, _ in rows)
    for row in rows.values():
        row.person = names.get(row.person_id, f"user {row.person_id}")
    ordered = sorted(rows.values(), key=lambda r: (r.person, r.day))
    return Throughput(days=period.days, rows=ordered)


# --- time per item --------------------------------------------------------------------------------


@dataclass
class TimingRow:
    source: str  # "lease" (completed − leased) or "verdict" (seconds_spent)
    stage: str
    kind: str
    n: int
    median_s: float | None
    p90_s: float | None

    @property
    def label(self) -> str:
        what = "verdict" if self.source == "verdict" else S(self.stage).label.lower()
        return f"{ItemKind(self.kind).label} · {what}"


def _percentiles(qs, group: list[str], seconds) -> list[dict]:
    """n, median and p90 of `seconds` per group: in SQL on PostgreSQL; SQLite (the one-person
    development set-up, which has no percentile aggregate) reads the values and computes them here."""
    if connection.vendor == "postgresql":
        return list(
            qs.annotate(_s=seconds)
            .values(*group)
            .annotate(n=Count("pk"), median=Percentile("_s", 0.5), p90=Percentile("_s", 0.9))
            .order_by(*group)
        )
    values: dict[tuple, list[float]] = defaultdict(list)
    for row in qs.annotate(_s=seconds).values(*group, "_s"):
        value = row["_s"]
        if isinstance(value, dt.timedelta):
            value = value.total_seconds()
        values[tuple(row[g] for g in group)].append(float(value))
    out = []
    for key in sorted(values):
        xs = sorted(values[key])
        out.append(dict(zip(group, key, strict=True)) | {"n": len(xs), "median": _pct(xs, 0.5), "p90": _pct(xs, 0.9)})
    return out


def _pct(xs: list[float], fraction: float) -> float:
    """percentile_cont: linear interpolation between the closest ranks."""
    if len(xs) == 1:
        return xs[0]
    position = fraction * (len(xs) - 1)
    low = int(position)
    high = min(low + 1, len(xs) - 1)
    return xs[low] + (xs[high] - xs[low]) * (position - low)


def time_per_item(*, project: Project, period: Period) -> list[TimingRow]:
    """Two GROUP BYs with percentiles: completed leases per stage and kind, verdicts per kind."""
    if connection.vendor == "postgresql":
        lease_seconds = _epoch(F("completed_at") - F("leased_at"))
    else:
        lease_seconds = F("completed_at") - F("leased_at")
    leases = Assignment.objects.filter(
        period.q("completed_at"), project=project, status=AssignmentStatus.COMPLETED, completed_at__isnull=False
    )
    verdicts = ExamVerdict.objects.filter(period.q(), project=project, seconds_spent__isnull=False)
    rows = [
        TimingRow("lease", r["stage"], r["item_kind"], r["n"], r["median"], r["p90"])
        for r in _percentiles(leases, ["stage", "item_kind"], lease_seconds)
    ]
    rows += [
        TimingRow("verdict", S.EXAMINING, r["item_kind"], r["n"], r["median"], r["p90"])
        for r in _percentiles(verdicts, ["item_kind"], F("seconds_spent"))
    ]
    order = {S.ANNOTATING: 0, S.EXAMINING: 1, S.REVISING: 2}
    kinds = {str(k): i for i, (k, _) in enumerate(KINDS)}
    rows.sort(key=lambda r: (r.source == "verdict", kinds.get(r.kind, 9), order.get(r.stage, 9)))
    return rows


# --- flag rates ----------------------------------------------------------------------------------


@dataclass
class FlagRow:
    key: str  # what the rows page filters on: an author id ("none" for no author) or "kind:category"
    label: str
    decided: int
    flagged: int

    @property
    def rate(self) -> float | None:
        return _rate(self.flagged, self.decided)


def decided_rounds(*, project: Project, period: Period):
    """ReviewEvents that closed an examination round in the range (accepted or flagged)."""
    return ReviewEvent.objects.filter(
        period.q(), project=project, from_status=S.EXAMINING, to_status__in=[S.ACCEPTED, S.FLAGGED]
    )


_AUTHOR = Coalesce("qa_chain__author", "chain_pair__author", "mcq__author")


def flag_rates_by_author(*, project: Project, period: Period) -> list[FlagRow]:
    """One GROUP BY on the item's author (whichever of the three item columns is set)."""
    rows = list(
        decided_rounds(project=project, period=period)
        .annotate(author=_AUTHOR)
        .values("author")
        .annotate(decided=Count("pk"), flagged=Count("pk", filter=Q(to_status=S.FLAGGED)))
        .order_by()
    )
    names = _names(r["author"] for r in rows)
    out = [
        FlagRow(
            str(r["author"]) if r["author"] is not None else "none",
            names.get(r["author"], "(no author)"),
            r["decided"],
            r["flagged"],
        )
        for r in rows
    ]
    out.sort(key=lambda r: (-(r.rate or 0), -r.decided, r.label))
    return out


_CATEGORY_PATHS = {
    ItemKind.MCQ: "mcq__category",
    ItemKind.QA_CHAIN: "qa_chain__pairs__skill",
    ItemKind.CHAIN_PAIR: "chain_pair__relations__relation_type",
}


def flag_rates_by_category(*, project: Project, period: Period) -> list[FlagRow]:
    """One GROUP BY (kind, category) over the decided rounds, counted once per distinct round.

    Each round names one item, so only that kind's joins (MCQ category, the chain's pairs' skills,
    the chain pair's relations' types) find rows and the first non-null of the three is its
    category: one scan of the range's review log instead of one per kind.
    """
    rows = (
        decided_rounds(project=project, period=period)
        .values("item_kind", category=Coalesce(*_CATEGORY_PATHS.values()))
        .annotate(decided=Count("pk", distinct=True), flagged=Count("pk", distinct=True, filter=Q(to_status=S.FLAGGED)))
        .order_by()
    )
    out = []
    for r in rows:
        kind, category = ItemKind(r["item_kind"]), r["category"] or ""
        out.append(FlagRow(f"{kind}:{category}", f"{kind.label} · {category or '(none)'}", r["decided"], r["flagged"]))
    out.sort(key=lambda r: (-(r.rate or 0), -r.decided, r.label))
    return out


# --- judge scores -------------------------------------------------------------------------------


@dataclass
class JudgeKind:
    kind: str
    label: str
    bins: list[int]  # scores per bin of BIN_EDGES
    passing: int  # at or above the project's threshold

    @property
    def total(self) -> int:
        return sum(self.bins)

    @property
    def pass_rate(self) -> float | None:
        return _rate(self.passing, self.total)


@dataclass
class JudgeScores:
    threshold: int
    kinds: list[JudgeKind] = field(default_factory=list)


def judge_scores(*, project: Project, period: Period) -> JudgeScores:
    """One GROUP BY (kind, bin) of the scores given in the range."""
    threshold = project.judge_threshold
    rows = (
        QualityScore.objects.filter(period.q(), project=project)
        .annotate(bin=Least(F("overall") / 10, Value(9), output_field=IntegerField()))
        .values("item_kind", "bin")
        .annotate(n=Count("pk"), passing=Count("pk", filter=Q(overall__gte=threshold)))
        .order_by()
    )
    kinds = {str(k): JudgeKind(str(k), str(k.label), [0] * 10, 0) for k, _ in KINDS}
    for r in rows:
        kind = kinds[r["item_kind"]]
        kind.bins[r["bin"]] += r["n"]
        kind.passing += r["passing"]
    return JudgeScores(threshold=threshold, kinds=[k for k in kinds.values() if k.total] or [])


# --- queues ------------------------------------------------------------------------------------


@dataclass
class QueueRow:
    queue: ReviewQueue
    depth: int
    active: int
    expired: int


def project_queues(*, project: Project) -> list[ReviewQueue]:
    queues = list(ReviewQueue.objects.filter(project=project).order_by("-priority", "name", "pk"))
    for q in queues:
        q.project = project  # the depth query reads the project's gate settings
    return queues


def queue_depths(*, project: Project, queues: list[ReviewQueue] | None = None, now=None) -> list[QueueRow]:
    """Depth and leases of every queue: `queue_stats`, one query per item kind (≤ 3) and one for leases."""
    queues = project_queues(project=project) if queues is None else queues
    stats = queue_stats(queues=queues, now=now) if queues else {}
    return [QueueRow(q, stats[q.pk].depth, stats[q.pk].active, stats[q.pk].expired) for q in queues]


def _lapsed_q(now) -> Q:
    return Q(status=AssignmentStatus.EXPIRED) | Q(status=AssignmentStatus.ACTIVE, lease_expires_at__lte=now)


@dataclass
class ExpiredLeases:
    days: list[dt.date]
    series: list[tuple[int | None, str, list[int]]]  # (queue id, name, count per day)

    @property
    def total(self) -> int:
        return sum(sum(counts) for _, _, counts in self.series)


def expired_leases(*, project: Project, period: Period, now=None) -> ExpiredLeases:
    """One GROUP BY (queue, day the lease lapsed)."""
    now = now or timezone.now()
    rows = (
        Assignment.objects.filter(_lapsed_q(now), period.q("lease_expires_at"), project=project)
        .annotate(day=TruncDate("lease_expires_at"))
        .values("queue", "queue__name", "day")
        .annotate(n=Count("pk"))
        .order_by()
    )
    index = {d: i for i, d in enumerate(period.days)}
    series: dict[int | None, tuple[str, list[int]]] = {}
    for r in rows:
        name, counts = series.setdefault(r["queue"], (r["queue__name"] or "(no queue)", [0] * len(index)))
        counts[index[r["day"]]] += r["n"]
    ordered = sorted(series.items(), key=lambda kv: (-sum(kv[1][1]), kv[1][0]))
    return ExpiredLeases(days=period.days, series=[(pk, name, counts) for pk, (name, counts) in ordered])


# --- agreement ---------------------------------------------------------------------------------


@dataclass
class QueueAgreement:
    queue_id: int | None
    name: str
    overlap: int | None
    units: int = 0  # item rounds with at least two verdicts
    all_passed: int = 0
    split: int = 0
    all_flagged: int = 0
    examiners: int = 0
    alpha: float | None = None
    kappa: float | None = None  # only when the same two examiners judged every unit

    @property
    def observed(self) -> float | None:
        """Share of units on which every examiner said the same."""
        return _rate(self.all_passed + self.all_flagged, self.units)


_UNIT = ["queue", "item_kind", "qa_chain", "chain_pair", "mcq", "round_started_at"]


def _unit_shapes(verdicts) -> list[tuple]:
    """(queue, verdicts, passes, lowest examiner, highest examiner, lowest passing examiner, units) per
    distinct shape of the units with two or more verdicts: GROUP BY unit inside, GROUP BY shape outside."""
    units = (
        verdicts.values(*_UNIT)
        .annotate(
            m=Count("pk"),
            p=Count("pk", filter=Q(passed=True)),
            r1=Min("examiner"),
            r2=Max("examiner"),
            passer=Min("examiner", filter=Q(passed=True)),
        )
        .filter(m__gte=2)
        .order_by()
    )
    inner, params = units.query.sql_with_params()
    sql = (
        "SELECT u.queue, u.m, u.p, u.r1, u.r2, u.passer, COUNT(*) FROM ("  # noqa: S608 - inner SQL is the ORM's
        + inner
        + ") u GROUP BY u.queue, u.m, u.p, u.r1, u.r2, u.passer"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def agreement(*, project: Project, period: Period, queues: list[ReviewQueue] | None = None) -> list[QueueAgreement]:
    """Per queue with overlap > 1 (or any queue whose items got two or more verdicts in the range)."""
    queues = project_queues(project=project) if queues is None else queues
    verdicts = ExamVerdict.objects.filter(period.q(), project=project)
    shapes = _unit_shapes(verdicts)
    examiners = dict(
        verdicts.values("queue").annotate(n=Count("examiner", distinct=True)).order_by().values_list("queue", "n")
    )
    by_queue: dict[int | None, list[tuple]] = defaultdict(list)
    for queue_id, *shape in shapes:
        by_queue[queue_id].append(tuple(shape))
    rows = []
    known = {q.pk: q for q in queues}
    wanted = [q.pk for q in queues if q.overlap > 1] + [
        pk for pk in by_queue if pk not in known or known[pk].overlap <= 1
    ]
    for pk in dict.fromkeys(wanted):
        queue = known.get(pk)
        row = QueueAgreement(
            pk, queue.name if queue else "(no queue)", queue.overlap if queue else None, examiners=examiners.get(pk, 0)
        )
        counts, pairs, table = [], set(), defaultdict(int)
        for m, p, r1, r2, passer, n in by_queue.get(pk, []):
            row.units += n
            if p == m:
                row.all_passed += n
            elif p == 0:
                row.all_flagged += n
            else:
                row.split += n
            counts.append(({True: p, False: m - p}, n))
            pairs.add((m, r1, r2))
            first_passed = p == 2 or (p == 1 and passer == r1)
            second_passed = p == 2 or (p == 1 and passer == r2)
            table[(first_passed, second_passed)] += n
        row.alpha = krippendorff_alpha_from_counts(counts)
        if len(pairs) == 1 and next(iter(pairs))[0] == 2:
            row.kappa = cohen_kappa_from_table(table)
        rows.append(row)
    return rows


# --- tables: what the page lists and the CSV holds -----------------------------------------------------


@dataclass
class Table:
    columns: list[str]
    rows: list[list]


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def panel_table(panel: str, data) -> Table:
    """The numbers of a panel as plain rows (the CSV, and the table beside the chart)."""
    if panel == "progress":
        return Table(["kind", *S.values, "total"], [[r.label, *(r.counts[s] for s in S.values), r.total] for r in data])
    if panel == "throughput":
        return Table(
            ["person", "day", *ACTIONS],
            [[r.person, r.day.isoformat(), r.submits, r.revisions, r.passes, r.flags] for r in data.rows],
        )
    if panel == "time":
        return Table(
            ["kind", "stage", "source", "n", "median_s", "p90_s"],
            [
                [
                    str(ItemKind(r.kind).label),
                    str(S(r.stage).label),
                    r.source,
                    r.n,
                    _round(r.median_s, 1),
                    _round(r.p90_s, 1),
                ]
                for r in data
            ],
        )
    if panel in ("flags-author", "flags-category"):
        first = "annotator" if panel == "flags-author" else "category"
        return Table(
            [first, "decided", "flagged", "flag_rate"], [[r.label, r.decided, r.flagged, _round(r.rate)] for r in data]
        )
    if panel == "judge":
        # Bins are [from, to) but the last one [90, 100]; each row repeats its kind's pass count.
        rows = [
            [k.label, BIN_EDGES[i], BIN_EDGES[i + 1], n, k.total, k.passing, data.threshold]
            for k in data.kinds
            for i, n in enumerate(k.bins)
        ]
        return Table(["kind", "from", "to", "scores", "kind_scores", "kind_passing", "threshold"], rows)
    if panel == "queues":
        return Table(
            ["queue", "stage", "kind", "overlap", "depth", "active_leases", "expired_leases"],
            [
                [
                    r.queue.name,
                    r.queue.get_stage_display(),
                    r.queue.get_item_kind_display(),
                    r.queue.overlap,
                    r.depth,
                    r.active,
                    r.expired,
                ]
                for r in data
            ],
        )
    if panel == "expired":
        rows = []
        for _pk, name, counts in data.series:
            rows += [[name, day.isoformat(), n] for day, n in zip(data.days, counts, strict=True) if n]
        rows.sort(key=lambda r: (r[1], r[0]))
        return Table(["queue", "day", "expired"], rows)
    if panel == "agreement":
        return Table(
            [
                "queue",
                "overlap",
                "units",
                "all_passed",
                "split",
                "all_flagged",
                "examiners",
                "observed",
                "alpha",
                "kappa",
            ],
            [
                [
                    r.name,
                    r.overlap,
                    r.units,
                    r.all_passed,
                    r.split,
                    r.all_flagged,
                    r.examiners,
                    _round(r.observed),
                    _round(r.alpha),
                    _round(r.kappa),
                ]
                for r in data
            ],
        )
    raise KeyError(panel)


def panel_data(panel: str, *, project: Project, period: Period, queues: list[ReviewQueue] | None = None, now=None):
    """Run one panel's selector."""
    if panel == "progress":
        return progress_by_stage(project=project)
    if panel == "throughput":
        return throughput(project=project, period=period)
    if panel == "time":
        return time_per_item(project=project, period=period)
    if panel == "flags-author":
        return flag_rates_by_author(project=project, period=period)
    if panel == "flags-category":
        return flag_rates_by_category(project=project, period=period)
    if panel == "judge":
        return judge_scores(project=project, period=period)
    if panel == "queues":
        return queue_depths(project=project, queues=queues, now=now)
    if panel == "expired":
        return expired_leases(project=project, period=period, now=now)
    if panel == "agreement":
        return agreement(project=project, period=period, queues=queues)
    raise KeyError(panel)


# --- the rows behind a number ------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    text: str
    href: str | None = None


@dataclass
class RowsPage:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    total: int
    limit: int = ROWS_LIMIT


class RowsRefused(Refused, ValueError):
    """The parameters do not name a number of this panel; the message says which one is wrong."""

    status, code = 400, "rows_refused"


_ITEM_RELATED = ("qa_chain__clip__video", "chain_pair__video", "mcq")


def item_cell(project: Project, ref) -> Cell:
    """An item (through an ItemRef row, or the item itself) as its label, linked to its history page."""
    from django.urls import reverse

    item = ref if isinstance(ref, QAChain | ChainPair | MCQ) else ref.item
    kind = {QAChain: "qa_chain", ChainPair: "chain_pair", MCQ: "mcq"}[type(item)]
    if kind == "qa_chain":
        text = f"Chain #{item.pk} ({item.clip.video.name}, clip {item.clip.index})"
    elif kind == "chain_pair":
        text = f"Pair #{item.pk} ({item.video.name}, clips {item.before_index}→{item.before_index + 1})"
    else:
        text = f"MCQ #{item.pk}: {item.question[:60]}{'…' if len(item.question) > 60 else ''}"
    return Cell(text, reverse("reviewer:item_history", args=[project.slug, kind, item.pk]))


def _when(value) -> Cell:
    return Cell(timezone.localtime(value).strftime("%Y-%m-%d %H:%M") if value else "—")


def _user(user) -> Cell:
    return Cell(user.get_username() if user else "—")


def _int(params: dict, key: str, *, required: bool = True, allow_none: bool = False) -> int | None:
    raw = (params.get(key) or "").strip()
    if allow_none and raw == "none":
        return None
    if not raw and not required:
        return None
    if not raw.isdecimal():
        raise RowsRefused(
            _("“%(key)s” must be a number, not “%(raw_or_nothing)s”.")
            % {"key": key, "raw_or_nothing": raw or "nothing"}
        )
    return int(raw)


def _choice(params: dict, key: str, choices, *, required: bool = True) -> str:
    raw = (params.get(key) or "").strip()
    if not raw and not required:
        return ""
    if raw not in choices:
        raise RowsRefused(
            _("“%(key)s” must be one of %(value)s, not “%(raw_or_nothing)s”.")
            % {"key": key, "value": ", ".join(map(str, choices)), "raw_or_nothing": raw or "nothing"}
        )
    return raw


def _day(params: dict) -> dt.date | None:
    raw = (params.get("day") or "").strip()
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise RowsRefused(_("“day” must be a date (YYYY-MM-DD), not “%(raw)s”.") % {"raw": raw}) from None


def _page(qs, limit: int) -> tuple[list, int]:
    return list(qs[:limit]), qs.count()


def panel_rows(panel: str, *, project: Project, period: Period, params: dict, now=None, limit: int = ROWS_LIMIT):
    """The rows one number of a panel counts (at most `limit`, and how many in all): a fixed number of queries."""
    now = now or timezone.now()
    kinds = [str(k) for k, _ in KINDS]
    if panel == "progress":
        kind = _choice(params, "kind", kinds)
        status = _choice(params, "status", S.values, required=False)
        model = dict(KINDS)[ItemKind(kind)]
        qs = model.objects.filter(project=project).select_related("author").order_by("-updated_at", "-pk")
        if kind == "qa_chain":
            qs = qs.select_related("clip__video")
        elif kind == "chain_pair":
            qs = qs.select_related("video")
        if status:
            qs = qs.filter(status=status)
        items, total = _page(qs, limit)
        rows = [
            [item_cell(project, i), Cell(i.get_status_display()), _user(i.author), _when(i.updated_at)] for i in items
        ]
        title = f"{ItemKind(kind).label}s{' · ' + S(status).label.lower() if status else ''}, now"
        return RowsPage(title, ["Item", "Status", "Author", "Last change"], rows, total, limit)

    if panel == "throughput":
        person = _int(params, "person")
        action = _choice(params, "action", ACTIONS, required=False)
        day = _day(params)
        span = Period(day, day) if day else period
        events = ReviewEvent.objects.filter(span.q(), project=project, actor_id=person, to_status=S.SUBMITTED)
        if action == "submits":
            events = events.exclude(from_status=S.REVISING)
        elif action == "revisions":
            events = events.filter(from_status=S.REVISING)
        verdicts = ExamVerdict.objects.filter(span.q(), project=project, examiner_id=person)
        if action in ("passes", "flags"):
            verdicts = verdicts.filter(passed=action == "passes")
        if action in ("passes", "flags"):
            events = events.none()
        if action in ("submits", "revisions"):
            verdicts = verdicts.none()
        events = events.select_related(*_ITEM_RELATED).order_by("-created_at", "-pk")
        verdicts = verdicts.select_related(*_ITEM_RELATED).order_by("-created_at", "-pk")
        found = [
            (e.created_at, item_cell(project, e), "revision" if e.from_status == S.REVISING else "submit")
            for e in events[:limit]
        ] + [(v.created_at, item_cell(project, v), "pass" if v.passed else "flag") for v in verdicts[:limit]]
        found.sort(key=lambda r: r[0], reverse=True)
        total = events.count() + verdicts.count()
        name = _names([person]).get(person, f"user {person}")
        rows = [[item, Cell(what), _when(when)] for when, item, what in found[:limit]]
        what = action or "work"
        return RowsPage(f"{name}: {what}, {span.start} to {span.end}", ["Item", "Action", "When"], rows, total, limit)

    if panel == "time":
        source = _choice(params, "source", ("lease", "verdict"))
        kind = _choice(params, "kind", kinds)
        if source == "lease":
            stage = _choice(params, "stage", [S.ANNOTATING, S.EXAMINING, S.REVISING])
            qs = (
                Assignment.objects.filter(
                    period.q("completed_at"),
                    project=project,
                    status=AssignmentStatus.COMPLETED,
                    stage=stage,
                    item_kind=kind,
                )
                .annotate(held=F("completed_at") - F("leased_at"))
                .select_related("assignee", *_ITEM_RELATED)
                .order_by("-held", "-pk")
            )
            leases, total = _page(qs, limit)
            rows = [
                [item_cell(project, a), _user(a.assignee), Cell(f"{a.held.total_seconds():.0f}"), _when(a.completed_at)]
                for a in leases
            ]
            title = f"{ItemKind(kind).label} · {S(stage).label.lower()}: leases completed, longest first"
            return RowsPage(title, ["Item", "Held by", "Seconds", "Completed"], rows, total, limit)
        qs = (
            ExamVerdict.objects.filter(period.q(), project=project, item_kind=kind, seconds_spent__isnull=False)
            .select_related("examiner", *_ITEM_RELATED)
            .order_by("-seconds_spent", "-pk")
        )
        verdicts, total = _page(qs, limit)
        rows = [
            [item_cell(project, v), _user(v.examiner), Cell(str(v.seconds_spent)), _when(v.created_at)]
            for v in verdicts
        ]
        title = f"{ItemKind(kind).label}: verdicts, slowest first"
        return RowsPage(title, ["Item", "Examiner", "Seconds", "Given"], rows, total, limit)

    if panel in ("flags-author", "flags-category"):
        qs = decided_rounds(project=project, period=period)
        if panel == "flags-author":
            author = _int(params, "author", allow_none=True)
            qs = (
                qs.annotate(author=_AUTHOR).filter(author=author)
                if author is not None
                else qs.annotate(author=_AUTHOR).filter(author__isnull=True)
            )
            subject = _names([author]).get(author, "(no author)") if author is not None else "(no author)"
        else:
            raw = params.get("category") or ""
            kind, _sep, category = raw.partition(":")
            if kind not in kinds:
                raise RowsRefused(
                    _("“category” must be a kind and a category such as mcq:E2O, not “%(raw)s”.") % {"raw": raw}
                )
            path = _CATEGORY_PATHS[ItemKind(kind)]
            qs = qs.filter(item_kind=kind).filter(**({path: category} if category else {f"{path}__isnull": True}))
            qs = qs.distinct()
            subject = f"{ItemKind(kind).label} · {category or '(none)'}"
        if params.get("outcome") == "flagged":
            qs = qs.filter(to_status=S.FLAGGED)
        qs = qs.select_related("actor", *_ITEM_RELATED).order_by("-created_at", "-pk")
        events, total = _page(qs, limit)
        rows = [
            [
                item_cell(project, e),
                Cell(e.get_to_status_display()),
                _user(e.actor),
                Cell("; ".join(map(str, e.reasons))),
                _when(e.created_at),
            ]
            for e in events
        ]
        outcome = "flagged" if params.get("outcome") == "flagged" else "decided"
        return RowsPage(
            f"{subject}: rounds {outcome}", ["Item", "Outcome", "Examiner", "Reasons", "When"], rows, total, limit
        )

    if panel == "judge":
        kind = _choice(params, "kind", kinds)
        low = _int(params, "bin")
        if low not in range(10):
            raise RowsRefused(_("“bin” must be 0 to 9 (scores 0–9, …, 90–100)."))
        band = Q(overall__gte=low * 10) & (Q(overall__lt=low * 10 + 10) if low < 9 else Q())
        qs = (
            QualityScore.objects.filter(period.q(), band, project=project, item_kind=kind)
            .select_related(*_ITEM_RELATED)
            .order_by("-created_at", "-pk")
        )
        scores, total = _page(qs, limit)
        rows = [
            [item_cell(project, s), Cell(str(s.overall)), Cell(f"v{s.item_version}"), _when(s.created_at)]
            for s in scores
        ]
        title = f"{ItemKind(kind).label}: judge scores {BIN_EDGES[low]}–{BIN_EDGES[low + 1]}"
        return RowsPage(title, ["Item", "Overall", "Version", "Judged"], rows, total, limit)

    if panel == "expired":
        queue = _int(params, "queue", allow_none=True)
        day = _day(params)
        span = Period(day, day) if day else period
        qs = Assignment.objects.filter(_lapsed_q(now), span.q("lease_expires_at"), project=project)
        qs = qs.filter(queue_id=queue) if queue is not None else qs.filter(queue__isnull=True)
        qs = qs.select_related("assignee", "queue", *_ITEM_RELATED).order_by("-lease_expires_at", "-pk")
        leases, total = _page(qs, limit)
        rows = [
            [
                item_cell(project, a),
                _user(a.assignee),
                Cell(a.get_stage_display()),
                _when(a.leased_at),
                _when(a.lease_expires_at),
            ]
            for a in leases
        ]
        name = leases[0].queue.name if leases and leases[0].queue else "(no queue)"
        return RowsPage(
            f"{name}: leases that lapsed, {span.start} to {span.end}",
            ["Item", "Held by", "Stage", "Leased", "Lapsed"],
            rows,
            total,
            limit,
        )

    if panel == "agreement":
        queue = _int(params, "queue", allow_none=True)
        verdicts = ExamVerdict.objects.filter(period.q(), project=project)
        verdicts = verdicts.filter(queue_id=queue) if queue is not None else verdicts.filter(queue__isnull=True)
        # One column per kind is set, the others are NULL (never equal in SQL): compare the one item id.
        verdicts = verdicts.annotate(unit_item=Coalesce("qa_chain", "chain_pair", "mcq"))
        same_unit = verdicts.filter(
            item_kind=OuterRef("item_kind"),
            unit_item=OuterRef("unit_item"),
            round_started_at=OuterRef("round_started_at"),
        ).exclude(pk=OuterRef("pk"))
        qs = verdicts.filter(Exists(same_unit))
        if params.get("split") == "1":
            qs = qs.filter(Exists(same_unit.exclude(passed=OuterRef("passed"))))
        qs = qs.select_related("examiner", *_ITEM_RELATED).order_by(
            "item_kind", "qa_chain", "chain_pair", "mcq", "round_started_at", "examiner__username"
        )
        verdicts_page, total = _page(qs, limit)
        rows = [
            [
                item_cell(project, v),
                _when(v.round_started_at),
                _user(v.examiner),
                Cell("pass" if v.passed else "flag"),
                Cell("; ".join(map(str, v.reasons))),
                _when(v.created_at),
            ]
            for v in verdicts_page
        ]
        which = "units the examiners split on" if params.get("split") == "1" else "units with two or more verdicts"
        return RowsPage(
            f"Verdicts of {which}",
            ["Item", "Round from", "Examiner", "Verdict", "Reasons", "Given"],
            rows,
            total,
            limit,
        )

    raise RowsRefused(
        _("The panel %(get)s has no rows page; its numbers link to their own pages.")
        % {"get": PANELS.get(panel, panel)}
    )
