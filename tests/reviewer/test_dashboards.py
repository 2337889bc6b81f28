"""Dashboard selectors on hand-built data: every figure is the exact number worked out by hand."""

import datetime as dt
from contextlib import contextmanager
from types import SimpleNamespace
from unittest import mock

import pytest
from django.db import connection
from django.db.models import Count, F, Q
from django.test.utils import CaptureQueriesContext

from annotator.models import ItemRef, ItemStatus, ReviewEvent
from projects.models import Role
from reviewer import dashboards as d
from reviewer.agreement import krippendorff_alpha
from reviewer.models import Assignment, ExamVerdict, QualityScore
from tests.factories import (
    AssignmentFactory,
    ChainPairFactory,
    MCQFactory,
    MembershipFactory,
    ProjectFactory,
    QAChainFactory,
    QAPairFactory,
    QualityScoreFactory,
    RelationFactory,
    ReviewQueueFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

S = ItemStatus
UTC = dt.UTC
NOW = dt.datetime(2026, 3, 31, 12, 0, tzinfo=UTC)
PERIOD = d.Period(dt.date(2026, 3, 2), dt.date(2026, 3, 31))
OLD = dt.datetime(2026, 2, 1, 10, 0, tzinfo=UTC)  # before the range


def at(day: int, hour: int = 10, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 3, day, hour, minute, tzinfo=UTC)


@contextmanager
def frozen(when):
    # auto_now_add stamps rows with timezone.now(); review events cannot be updated afterwards.
    with mock.patch("django.utils.timezone.now", return_value=when):
        yield


def event(project, item, frm, to, actor, when):
    with frozen(when):
        return ReviewEvent.objects.create(
            project=project, actor=actor, from_status=frm, to_status=to, **ItemRef.ref_for(item)
        )


def verdict(project, item, examiner, passed, round_start, when, *, queue, seconds=None):
    with frozen(when):
        return ExamVerdict.objects.create(
            project=project,
            examiner=examiner,
            queue=queue,
            round_started_at=round_start,
            item_version=1,
            passed=passed,
            seconds_spent=seconds,
            **ItemRef.ref_for(item),
        )


def score(item, overall, when, threshold=90):
    s = QualityScoreFactory(item=item, overall=overall, threshold=threshold)
    QualityScore.objects.filter(pk=s.pk).update(created_at=when)
    return s


def build_world():
    """A small project whose every figure is worked out in the comments of the tests below."""
    project = ProjectFactory(judge_threshold=80)
    people = {}
    for name, role in (
        ("a1", Role.ANNOTATOR),
        ("a2", Role.ANNOTATOR),
        ("e1", Role.EXAMINER),
        ("e2", Role.EXAMINER),
        ("e3", Role.EXAMINER),
        ("r1", Role.REVISER),
    ):
        people[name] = UserFactory(username=f"{name}-{project.slug}")
        MembershipFactory(project=project, user=people[name], role=role)
    w = SimpleNamespace(project=project, **people)
    a1, a2, e1, e2, e3, r1 = (people[n] for n in ("a1", "a2", "e1", "e2", "e3", "r1"))

    w.m1 = MCQFactory(project=project, author=a1, category="E2O", status=S.ACCEPTED)
    w.m2 = MCQFactory(project=project, author=a1, category="S2A", status=S.FLAGGED)
    w.m3 = MCQFactory(project=project, author=a2, category="E2O", status=S.EXAMINING, submitted_at=at(6))
    w.c1 = QAChainFactory(project=project, clip__video__project=project, author=a2, status=S.ACCEPTED)
    pairs = [QAPairFactory(chain=w.c1, index=i, skill=skill) for i, skill in enumerate(["II", "II", "PA"])]
    w.cp = ChainPairFactory(chain_before=w.c1, author=a2, status=S.EXAMINING)  # its later chain: annotating
    later = QAPairFactory(chain=w.cp.chain_after, index=0)
    RelationFactory(chain_pair=w.cp, from_pair=pairs[0], to_pair=later, relation_type="person")

    w.q_mcq = ReviewQueueFactory(project=project, name="MCQs: examine", item_kind="mcq", overlap=2)
    w.q_chain = ReviewQueueFactory(project=project, name="Chains: examine", item_kind="qa_chain", overlap=1)

    # Review log: submits, a revision, decided rounds (one before the range).
    event(project, w.m1, S.ANNOTATING, S.SUBMITTED, a1, at(5))
    event(project, w.m2, S.ANNOTATING, S.SUBMITTED, a1, at(5, 11))
    event(project, w.m3, S.ANNOTATING, S.SUBMITTED, a2, at(6))
    event(project, w.c1, S.ANNOTATING, S.SUBMITTED, a2, at(6, 11))
    event(project, w.m1, S.SUBMITTED, S.SUBMITTED, a1, OLD)  # outside the range
    event(project, w.m1, S.EXAMINING, S.ACCEPTED, e1, at(7))
    event(project, w.m2, S.EXAMINING, S.FLAGGED, e2, at(7))
    event(project, w.c1, S.EXAMINING, S.ACCEPTED, e3, at(8))
    event(project, w.m2, S.REVISING, S.SUBMITTED, r1, at(10))
    event(project, w.m2, S.EXAMINING, S.FLAGGED, e2, at(12))
    event(project, w.cp, S.EXAMINING, S.FLAGGED, e1, at(13))
    event(project, w.m3, S.EXAMINING, S.FLAGGED, e1, OLD)  # outside the range

    # Verdicts: m1 both pass, m2 first round split, m2 second round both flag, m3 one so far.
    q = w.q_mcq
    verdict(project, w.m1, e1, True, at(5), at(7), queue=q, seconds=120)
    verdict(project, w.m1, e2, True, at(5), at(7), queue=q, seconds=60)
    verdict(project, w.m2, e1, False, at(5, 11), at(7), queue=q, seconds=300)
    verdict(project, w.m2, e2, True, at(5, 11), at(7), queue=q, seconds=30)
    verdict(project, w.m2, e1, False, at(10), at(12), queue=q, seconds=90)
    verdict(project, w.m2, e2, False, at(10), at(12), queue=q)
    verdict(project, w.m3, e1, True, at(6), at(8), queue=q, seconds=45)
    verdict(project, w.c1, e3, True, at(6, 11), at(8), queue=w.q_chain, seconds=500)
    verdict(project, w.m3, e1, True, OLD, OLD, queue=q, seconds=1)  # outside the range
    verdict(project, w.m3, e2, False, OLD, OLD, queue=q, seconds=1)

    # Leases: completed (timed), live, expired, lapsed but not swept.
    def lease(item, who, stage, status, leased, *, minutes=30, completed=None, queue=q):
        return AssignmentFactory(
            item=item,
            assignee=who,
            stage=stage,
            status=status,
            queue=queue,
            leased_at=leased,
            lease_expires_at=leased + dt.timedelta(minutes=minutes),
            completed_at=completed,
        )

    lease(w.m1, e1, S.EXAMINING, "completed", at(7), completed=at(7, 10, 2))  # 120 s
    lease(w.m1, e2, S.EXAMINING, "completed", at(7), completed=at(7, 10, 1))  # 60 s
    lease(w.m2, e1, S.EXAMINING, "completed", at(7), completed=at(7, 10, 10))  # 600 s
    lease(w.c1, a2, S.ANNOTATING, "completed", at(6, 9), completed=at(6, 9, 30), queue=None)  # 1800 s
    lease(w.m2, e2, S.EXAMINING, "completed", OLD, completed=OLD + dt.timedelta(seconds=5))  # outside
    lease(w.m3, e1, S.EXAMINING, "active", NOW - dt.timedelta(minutes=10))  # live
    lease(w.m3, e2, S.EXAMINING, "expired", at(20))  # lapsed on the 20th
    lease(w.m3, e3, S.EXAMINING, "active", at(30))  # lapsed on the 30th, not swept yet
    lease(w.m2, e3, S.EXAMINING, "expired", OLD)  # lapsed before the range

    # Judge scores: the project's threshold is 80 now (the rows say 90).
    for overall in (95, 85, 79, 100):
        score(w.c1, overall, at(9))
    score(w.m1, 50, at(9))
    score(w.c1, 10, OLD)
    return w


@pytest.fixture
def w():
    return build_world()


def test_period_parsing_and_bounds():
    today = dt.date(2026, 3, 31)
    assert d.period_parse(None, None, today=today) == (d.Period(dt.date(2026, 3, 2), today), [])
    assert d.period_parse("2026-03-01", "2026-03-03", today=today)[0].days == [
        dt.date(2026, 3, 1),
        dt.date(2026, 3, 2),
        dt.date(2026, 3, 3),
    ]
    period, errors = d.period_parse("2026-03-05", "2026-03-01", today=today)
    assert period == d.Period.last(today=today) and "starts" in errors[0]
    period, errors = d.period_parse("March", "", today=today)
    assert "not a date" in errors[0] and period.end == today
    assert "at most" in d.period_parse("2020-01-01", "2026-01-01", today=today)[1][0]
    assert PERIOD.since == dt.datetime(2026, 3, 2, tzinfo=UTC) and PERIOD.until == dt.datetime(2026, 4, 1, tzinfo=UTC)


def test_progress_counts_items_per_kind_and_status(w):
    rows = {r.kind: r for r in d.progress_by_stage(project=w.project)}
    assert rows["mcq"].counts == {**dict.fromkeys(S.values, 0), "accepted": 1, "flagged": 1, "examining": 1}
    assert rows["qa_chain"].counts["accepted"] == 1 and rows["qa_chain"].counts["annotating"] == 1
    assert rows["qa_chain"].total == 2 and rows["chain_pair"].total == 1 and rows["chain_pair"].counts["examining"] == 1
    # Another project's items are not counted.
    MCQFactory(status=S.ACCEPTED)
    assert {r.kind: r.total for r in d.progress_by_stage(project=w.project)} == {
        "qa_chain": 2,
        "chain_pair": 1,
        "mcq": 3,
    }


def test_throughput_per_person_and_day(w):
    t = d.throughput(project=w.project, period=PERIOD)
    got = {(r.person.split("-")[0], r.day.day): (r.submits, r.revisions, r.passes, r.flags) for r in t.rows}
    assert got == {
        ("a1", 5): (2, 0, 0, 0),
        ("a2", 6): (2, 0, 0, 0),
        ("r1", 10): (0, 1, 0, 0),
        ("e1", 7): (0, 0, 1, 1),
        ("e2", 7): (0, 0, 2, 0),
        ("e1", 8): (0, 0, 1, 0),
        ("e3", 8): (0, 0, 1, 0),
        ("e1", 12): (0, 0, 0, 1),
        ("e2", 12): (0, 0, 0, 1),
    }
    per_day = t.per_day()
    assert len(per_day["submits"]) == 30 and per_day["passes"][PERIOD.days.index(dt.date(2026, 3, 7))] == 3
    people = {name.split("-")[0]: (totals, sum(daily)) for _pk, name, totals, daily in t.people()}
    assert people["e1"] == ({"submits": 0, "revisions": 0, "passes": 2, "flags": 2}, 4)


def test_time_per_item_medians_and_p90(w):
    rows = {(r.source, r.stage, r.kind): r for r in d.time_per_item(project=w.project, period=PERIOD)}
    exam = rows[("lease", "examining", "mcq")]
    # [60, 120, 600]: median 120; p90 at rank 1.8 → 120 + 0.8 × 480.
    assert (exam.n, exam.median_s, exam.p90_s) == (3, 120, pytest.approx(504))
    annotate = rows[("lease", "annotating", "qa_chain")]
    assert (annotate.n, annotate.median_s, annotate.p90_s) == (1, 1800, 1800)
    # Verdict times of MCQs in the range: [30, 45, 60, 90, 120, 300] (one has none).
    mcq = rows[("verdict", "examining", "mcq")]
    assert (mcq.n, mcq.median_s, mcq.p90_s) == (6, 75, pytest.approx(210))
    assert rows[("verdict", "examining", "qa_chain")].median_s == 500
    assert len(rows) == 4


def test_the_python_percentile_matches_postgresql():
    assert d._pct([60, 120, 600], 0.9) == pytest.approx(504)
    assert d._pct([30, 45, 60, 90, 120, 300], 0.5) == 75
    assert d._pct([7], 0.9) == 7


def test_flag_rate_per_annotator(w):
    rows = {
        r.label.split("-")[0]: (r.decided, r.flagged, r.rate)
        for r in d.flag_rates_by_author(project=w.project, period=PERIOD)
    }
    # a1: m1 accepted, m2 flagged twice; a2: c1 accepted, the chain pair flagged (m3's flag is old).
    assert rows == {"a1": (3, 2, pytest.approx(2 / 3)), "a2": (2, 1, 0.5)}
    first = d.flag_rates_by_author(project=w.project, period=PERIOD)[0]
    assert first.key == str(w.a1.pk)  # the highest rate first


def test_flag_rate_per_category(w):
    rows = {r.label: (r.decided, r.flagged) for r in d.flag_rates_by_category(project=w.project, period=PERIOD)}
    # c1 has skills II, II, PA: one decided round for II (not two) and one for PA.
    assert rows == {
        "MCQ · E2O": (1, 0),
        "MCQ · S2A": (2, 2),
        "QA chain · II": (1, 0),
        "QA chain · PA": (1, 0),
        "Relations of a chain pair · person": (1, 1),
    }


def test_flag_rate_per_category_in_one_query_equals_one_query_per_kind(w):
    # Varied: items without a category (a chain with no pairs, a pair with no relations), a chain
    # whose pairs share a skill, a pair with two relation types, rounds flagged and accepted.
    bare_chain = QAChainFactory(project=w.project, clip__video__project=w.project, author=w.a1)
    bare_pair = ChainPairFactory(chain_before=bare_chain, author=w.a1)
    mixed = ChainPairFactory(
        chain_before=QAChainFactory(project=w.project, clip__video__project=w.project, author=w.a2), author=w.a2
    )
    for i, relation_type in enumerate(["person", "event"]):
        before, later = (QAPairFactory(chain=chain, index=i) for chain in (mixed.chain_before, mixed.chain_after))
        RelationFactory(chain_pair=mixed, from_pair=before, to_pair=later, relation_type=relation_type)
    for day, item, to in (
        (14, bare_chain, S.FLAGGED),
        (15, bare_pair, S.ACCEPTED),
        (16, mixed, S.FLAGGED),
        (17, mixed, S.ACCEPTED),
        (18, w.c1, S.FLAGGED),
    ):
        event(w.project, item, S.EXAMINING, to, w.e2, at(day))

    decided = d.decided_rounds(project=w.project, period=PERIOD)
    per_kind = {}
    for kind, path in d._CATEGORY_PATHS.items():
        for r in (
            decided.filter(item_kind=kind)
            .values(category=F(path))
            .annotate(n=Count("pk", distinct=True), f=Count("pk", distinct=True, filter=Q(to_status=S.FLAGGED)))
        ):
            per_kind[f"{kind}:{r['category'] or ''}"] = (r["n"], r["f"])
    rows = d.flag_rates_by_category(project=w.project, period=PERIOD)
    assert {r.key: (r.decided, r.flagged) for r in rows} == per_kind
    assert len(rows) == len(per_kind)
    labels = {r.label: (r.decided, r.flagged) for r in rows}
    assert labels["QA chain · (none)"] == (1, 1) and labels["Relations of a chain pair · (none)"] == (1, 0)
    assert labels["QA chain · II"] == labels["QA chain · PA"] == (2, 1)  # c1 flagged once: II once
    assert labels["Relations of a chain pair · event"] == (2, 1)
    assert labels["Relations of a chain pair · person"] == (3, 2)


def test_judge_score_histogram_and_pass_rate_at_the_current_threshold(w):
    judge = d.judge_scores(project=w.project, period=PERIOD)
    assert judge.threshold == 80
    kinds = {k.kind: k for k in judge.kinds}
    assert set(kinds) == {"qa_chain", "mcq"}  # no chain-pair scores: no empty histogram
    chains = kinds["qa_chain"]
    assert chains.bins == [0, 0, 0, 0, 0, 0, 0, 1, 1, 2]  # 79 | 85 | 95 and 100 (100 in the last bin)
    assert (chains.total, chains.passing, chains.pass_rate) == (4, 3, 0.75)
    assert kinds["mcq"].bins[5] == 1 and kinds["mcq"].passing == 0


def test_queue_depth_and_leases(w):
    rows = {r.queue.name: r for r in d.queue_depths(project=w.project, now=NOW)}
    mcq = rows["MCQs: examine"]
    # m3 is examining with one live lease of two slots; three leases lapsed (two swept, one not).
    assert (mcq.depth, mcq.active, mcq.expired) == (1, 1, 3)
    assert (rows["Chains: examine"].depth, rows["Chains: examine"].active) == (0, 0)


def test_expired_leases_per_queue_and_day(w):
    expired = d.expired_leases(project=w.project, period=PERIOD, now=NOW)
    assert expired.total == 2
    [(queue_id, name, counts)] = expired.series
    assert queue_id == w.q_mcq.pk and name == "MCQs: examine"
    by_day = {day.day: n for day, n in zip(expired.days, counts, strict=True) if n}
    assert by_day == {20: 1, 30: 1}


def test_agreement_per_queue_with_overlap(w):
    [row] = d.agreement(project=w.project, period=PERIOD)  # the overlap-1 queue has no units
    assert row.queue_id == w.q_mcq.pk and row.overlap == 2
    assert (row.units, row.all_passed, row.split, row.all_flagged, row.examiners) == (3, 1, 1, 1, 2)
    assert row.observed == pytest.approx(2 / 3)
    # (e1, e2) per unit: (pass, pass), (flag, pass), (flag, flag).
    assert row.alpha == pytest.approx(krippendorff_alpha([(1, 1), (0, 1), (0, 0)])) == pytest.approx(4 / 9)
    # Same two examiners throughout: kappa = (2/3 − 4/9) / (1 − 4/9) = 0.4.
    assert row.kappa == pytest.approx(0.4)


def test_agreement_without_kappa_when_examiners_change_and_undefined_alpha(w):
    e3 = w.e3
    # A fourth unit judged by e1 and e3: three examiners in all, kappa no longer applies.
    m4 = MCQFactory(project=w.project, author=w.a2, status=S.ACCEPTED)
    verdict(w.project, m4, w.e1, True, at(14), at(15), queue=w.q_mcq)
    verdict(w.project, m4, e3, True, at(14), at(15), queue=w.q_mcq)
    [row] = d.agreement(project=w.project, period=PERIOD)
    assert row.units == 4 and row.kappa is None and row.alpha is not None and row.examiners == 3
    # A range holding only unanimous passes: no variation, alpha undefined (shown as "—").
    [row] = d.agreement(project=w.project, period=d.Period(dt.date(2026, 3, 15), dt.date(2026, 3, 15)))
    assert (row.units, row.alpha) == (1, None)


def test_a_queue_with_overlap_but_no_verdicts_is_listed_empty():
    project = ProjectFactory()
    ReviewQueueFactory(project=project, name="Pairs", overlap=3)
    [row] = d.agreement(project=project, period=PERIOD)
    assert (row.units, row.alpha, row.kappa, row.observed) == (0, None, None, None)


def test_tables_hold_the_same_numbers(w):
    table = d.panel_table("flags-author", d.flag_rates_by_author(project=w.project, period=PERIOD))
    assert table.columns == ["annotator", "decided", "flagged", "flag_rate"]
    assert table.rows[0][1:] == [3, 2, 0.667]
    judge = d.panel_table("judge", d.judge_scores(project=w.project, period=PERIOD))
    assert ["QA chain", 90, 100, 2, 4, 3, 80] in judge.rows
    expired = d.panel_table("expired", d.expired_leases(project=w.project, period=PERIOD, now=NOW))
    assert expired.rows == [["MCQs: examine", "2026-03-20", 1], ["MCQs: examine", "2026-03-30", 1]]
    agreement = d.panel_table("agreement", d.agreement(project=w.project, period=PERIOD))
    assert agreement.rows == [["MCQs: examine", 2, 3, 1, 1, 1, 2, 0.667, 0.444, 0.4]]


def _queries(fn) -> int:
    with CaptureQueriesContext(connection) as captured:
        fn()
    return len(captured.captured_queries)


def test_each_panel_runs_a_fixed_number_of_queries(w):
    def everything(project):
        queues = d.project_queues(project=project)
        for panel in d.PANELS:
            d.panel_data(panel, project=project, period=PERIOD, queues=queues, now=NOW)

    small = _queries(lambda: everything(w.project))
    # Many more rows of every sort: the count stays.
    for day in range(14, 28):
        m = MCQFactory(project=w.project, author=w.a1, category=f"C{day}", status=S.EXAMINING, submitted_at=at(day))
        event(w.project, m, S.EXAMINING, S.FLAGGED, w.e1, at(day, 12))
        verdict(w.project, m, w.e1, day % 2 == 0, at(day), at(day, 11), queue=w.q_mcq, seconds=day)
        verdict(w.project, m, w.e2, True, at(day), at(day, 11), queue=w.q_mcq, seconds=day)
        score(m, day * 3, at(day))
        AssignmentFactory(item=m, assignee=w.e3, queue=w.q_mcq, status="expired", leased_at=at(day))
    assert _queries(lambda: everything(w.project)) == small
    assert Assignment.objects.filter(project=w.project).count() > 20
