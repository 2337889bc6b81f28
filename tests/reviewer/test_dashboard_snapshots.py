"""Dashboard snapshots: the same numbers as the live panels, stored once, shown with their age, kept fresh.

The world of test_dashboards (March 2026) seen at NOW, 2026-03-31 12:00 UTC: its "last 30 days"
preset is exactly the range PERIOD whose every figure test_dashboards worked out by hand.
"""

import csv
import datetime as dt
import io
import json
from unittest import mock

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.models import ItemStatus
from reviewer import dashboards as d
from reviewer import tasks
from reviewer.dashboard_snapshots import (
    activity,
    dashboard_project_refresh,
    dashboard_snapshot_for_page,
    dashboard_snapshot_refresh,
    dashboard_snapshots_due,
    preset_key,
)
from reviewer.models import Assignment, DashboardSnapshot
from tests.factories import AssignmentFactory, MCQFactory, ProjectFactory, ReviewQueueFactory, people_for
from tests.reviewer.test_dashboards import NOW, PERIOD, at, build_world, event, frozen, score, verdict

pytestmark = pytest.mark.django_db

S = ItemStatus
SECOND = dt.timedelta(seconds=1)


@pytest.fixture
def w():
    world = build_world()
    world.people = people_for(world.project)
    return world


def _plain(table: d.Table) -> dict:
    """A table as the snapshot's JSON holds it (tuples become lists, nothing else changes)."""
    return json.loads(json.dumps({"columns": table.columns, "rows": table.rows}))


def _live_tables(project, period, now) -> dict:
    queues = d.project_queues(project=project)
    return {
        panel: _plain(d.panel_table(panel, d.panel_data(panel, project=project, period=period, queues=queues, now=now)))
        for panel in d.PANELS
    }


def _busier(w, days=range(14, 20)):
    """More review work of every sort in the range."""
    for day in days:
        m = MCQFactory(project=w.project, author=w.a2, category=f"C{day}", status=S.EXAMINING, submitted_at=at(day))
        event(w.project, m, S.ANNOTATING, S.SUBMITTED, w.a2, at(day, 9))
        event(w.project, m, S.EXAMINING, S.FLAGGED, w.e1, at(day, 12))
        verdict(w.project, m, w.e1, day % 2 == 0, at(day), at(day, 11), queue=w.q_mcq, seconds=day)
        verdict(w.project, m, w.e3, True, at(day), at(day, 11), queue=w.q_mcq, seconds=day)
        score(m, day * 3, at(day))
        AssignmentFactory(item=m, assignee=w.e2, queue=w.q_mcq, status="expired", leased_at=at(day))


# --- the numbers ---------------------------------------------------------------------------------------------


def test_preset_ranges_are_the_last_n_days_today_included():
    today = NOW.date()
    assert preset_key(PERIOD, today=today) == "30d"
    assert preset_key(d.Period(dt.date(2026, 3, 25), today), today=today) == "7d"
    assert preset_key(d.Period(dt.date(2026, 3, 3), today), today=today) is None  # 29 days: custom
    assert preset_key(PERIOD, today=today + dt.timedelta(days=1)) is None  # yesterday's 30 days


def test_a_snapshot_holds_exactly_the_live_numbers_of_every_panel(w):
    snapshot = dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    stored = DashboardSnapshot.objects.get(project=w.project, range_key="30d")
    assert (stored.period_start, stored.period_end) == (PERIOD.start, PERIOD.end)
    assert stored.computed_at == NOW and stored.seconds_taken > 0 and stored.html == snapshot.html
    assert stored.data == _live_tables(w.project, PERIOD, NOW)
    # The hand-worked figures are there: a1's flag rate, the agreement of the MCQ queue.
    assert stored.data["flags-author"]["rows"][0][1:] == [3, 2, 0.667]
    assert stored.data["agreement"]["rows"] == [["MCQs: examine", 2, 3, 1, 1, 1, 2, 0.667, 0.444, 0.4]]
    # And the HTML draws them, with links to the rows behind them for the same range.
    assert "0.444" in stored.html and 'data-csv="/p/' in stored.html
    assert "from=2026-03-02&amp;to=2026-03-31" in stored.html
    assert stored.html.count('<section class="card panel"') == len(d.PANELS)


@pytest.mark.parametrize("panel", list(d.PANELS))
def test_a_snapshot_equals_the_csv_downloaded_at_the_same_moment(client, w, panel):
    snapshot = dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    client.force_login(w.people["admin"])
    url = reverse("reviewer:dashboard_csv", args=[w.project.slug, panel])
    with frozen(NOW):
        response = client.get(url, {"from": "2026-03-02", "to": "2026-03-31"})
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    stored = snapshot.data[panel]
    assert rows[0] == stored["columns"]
    assert rows[1:] == [["" if v is None else str(v) for v in row] for row in stored["rows"]]
    assert len(rows) > 1


def test_refreshing_twice_gives_the_same_single_row(w):
    first = dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    second = dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    [row] = DashboardSnapshot.objects.filter(project=w.project)
    assert (row.data, row.html, row.activity) == (first.data, first.html, first.activity)
    assert (second.data, second.html) == (first.data, first.html)
    # Later, with more work done, the same row takes the new numbers.
    _busier(w)
    dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW + 60 * SECOND)
    [row] = DashboardSnapshot.objects.filter(project=w.project)
    assert row.computed_at == NOW + 60 * SECOND and row.data != first.data and row.activity != first.activity
    assert row.data == _live_tables(w.project, PERIOD, NOW + 60 * SECOND)


def test_each_preset_has_its_own_row(w):
    for key in ("7d", "30d", "90d"):
        dashboard_snapshot_refresh(project=w.project, range_key=key, now=NOW)
    rows = {s.range_key: s for s in DashboardSnapshot.objects.filter(project=w.project)}
    assert {k: (s.period_start, s.period_end) for k, s in rows.items()} == {
        "7d": (dt.date(2026, 3, 25), NOW.date()),
        "30d": (PERIOD.start, NOW.date()),
        "90d": (dt.date(2026, 1, 1), NOW.date()),
    }
    with pytest.raises(ValueError, match="Unknown range"):
        dashboard_snapshot_refresh(project=w.project, range_key="12d", now=NOW)


# --- the page --------------------------------------------------------------------------------------------------


def _page(client, w, when, **params):
    with frozen(when), CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("reviewer:dashboard", args=[w.project.slug]), params)
    assert response.status_code == 200
    return response, len(captured.captured_queries)


def test_a_preset_is_drawn_from_its_snapshot_in_a_few_queries_however_much_data(client, w):
    client.force_login(w.people["admin"])
    dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    _page(client, w, NOW)  # records the view; the session is warm
    response, small = _page(client, w, NOW + 90 * SECOND)
    html = response.content.decode()
    assert "Numbers as of" in html and "12:00:00" in html and "(90 s ago)" in html
    assert 'data-key="u"' in html and reverse("reviewer:dashboard_refresh", args=[w.project.slug]) in html
    assert "0.444" in html and html.count('<section class="card panel"') == len(d.PANELS)

    _busier(w)
    response, big = _page(client, w, NOW + 100 * SECOND)
    assert big == small <= 6  # session, user, project, membership, snapshot (+ the view mark, every 5 min)
    # Still the snapshot's numbers, with their age: nothing was computed for this request.
    assert "(100 s ago)" in response.content.decode()
    assert "MCQ · C15" not in response.content.decode()  # a category of the new work


def test_the_age_reads_in_minutes_and_hours_and_the_view_is_recorded_every_few_minutes(client, w):
    client.force_login(w.people["admin"])
    dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    response, _ = _page(client, w, NOW + dt.timedelta(minutes=7, seconds=5))
    assert "(7 min ago)" in response.content.decode()
    assert DashboardSnapshot.objects.get().viewed_at == NOW + dt.timedelta(minutes=7, seconds=5)
    _page(client, w, NOW + dt.timedelta(minutes=9))  # within five minutes of the last mark: not written
    assert DashboardSnapshot.objects.get().viewed_at == NOW + dt.timedelta(minutes=7, seconds=5)
    response, _ = _page(client, w, NOW + dt.timedelta(hours=3))
    assert "(3 h ago)" in response.content.decode()
    assert DashboardSnapshot.objects.get().viewed_at == NOW + dt.timedelta(hours=3)


def test_a_first_view_computes_the_snapshot_and_says_so(client, w):
    client.force_login(w.people["admin"])
    response, _ = _page(client, w, NOW)
    html = response.content.decode()
    assert "computed for this first view" in html and "0.444" in html
    snapshot = DashboardSnapshot.objects.get(project=w.project)
    assert (snapshot.range_key, snapshot.computed_at, snapshot.viewed_at) == ("30d", NOW, NOW)
    response, _ = _page(client, w, NOW + 5 * SECOND)
    assert "first view" not in response.content.decode() and "(5 s ago)" in response.content.decode()


def test_the_next_day_the_range_moves_on_and_is_computed_again(client, w):
    client.force_login(w.people["admin"])
    dashboard_snapshot_refresh(project=w.project, range_key="7d", now=NOW)
    tomorrow = NOW + dt.timedelta(days=1)
    response, _ = _page(client, w, tomorrow, range="7d")
    assert "the range moved on to a new day" in response.content.decode()
    snapshot = DashboardSnapshot.objects.get(project=w.project, range_key="7d")
    assert (snapshot.period_start, snapshot.period_end, snapshot.computed_at) == (
        dt.date(2026, 3, 26),
        dt.date(2026, 4, 1),
        tomorrow,
    )


def test_preset_links_and_dates_equal_to_a_preset_use_the_snapshot(client, w):
    client.force_login(w.people["admin"])
    dashboard_snapshot_refresh(project=w.project, range_key="7d", now=NOW)
    by_key, _ = _page(client, w, NOW + 3 * SECOND, range="7d")
    by_dates, _ = _page(client, w, NOW + 3 * SECOND, **{"from": "2026-03-25", "to": "2026-03-31"})
    for response in (by_key, by_dates):
        assert response.context["range_key"] == "7d" and "(3 s ago)" in response.content.decode()
        assert 'href="?range=7d" aria-current="true"' in response.content.decode()
    response, _ = _page(client, w, NOW, range="12d")
    assert response.context["range_key"] == "30d"
    assert "“12d” is not a preset range" in response.content.decode()


def test_a_custom_range_is_computed_live_and_says_so(client, w):
    client.force_login(w.people["admin"])
    dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    response, _ = _page(client, w, NOW, **{"from": "2026-03-03", "to": "2026-03-31"})
    html = response.content.decode()
    assert response.context["range_key"] is None
    assert "Custom ranges are computed on request" in html and "Numbers as of" not in html
    assert 'data-key="u"' not in html and html.count('<section class="card panel"') == len(d.PANELS)
    assert DashboardSnapshot.objects.count() == 1  # nothing stored for a custom range


# --- Refresh ----------------------------------------------------------------------------------------------


def _refresh(client, w, range_key="30d", when=NOW):
    with frozen(when):
        return client.post(reverse("reviewer:dashboard_refresh", args=[w.project.slug]), {"range": range_key})


def test_refresh_recomputes_now_and_goes_back_to_the_page(client, w):
    client.force_login(w.people["admin"])
    dashboard_snapshot_refresh(project=w.project, range_key="30d", now=NOW)
    _busier(w)
    later = NOW + dt.timedelta(minutes=10)
    response = _refresh(client, w, when=later)
    assert response.status_code == 302
    assert response["Location"] == reverse("reviewer:dashboard", args=[w.project.slug]) + "?range=30d"
    assert "recomputed just now" in str(next(iter(get_messages(response.wsgi_request))))
    snapshot = DashboardSnapshot.objects.get(project=w.project)
    assert snapshot.computed_at == later and snapshot.data == _live_tables(w.project, PERIOD, later)
    page, _ = _page(client, w, later + 2 * SECOND)
    assert "(2 s ago)" in page.content.decode() and "recomputed just now" in page.content.decode()


@pytest.mark.parametrize(
    ("who", "status"), [("annotator", 403), ("examiner", 403), ("reviser", 403), ("outsider", 404)]
)
def test_only_admins_may_refresh(client, w, who, status):
    client.force_login(w.people[who])
    assert _refresh(client, w).status_code == status
    assert not DashboardSnapshot.objects.exists()


def test_refresh_refuses_a_get_an_anonymous_visitor_and_an_unknown_range(client, w):
    url = reverse("reviewer:dashboard_refresh", args=[w.project.slug])
    response = client.post(url, {"range": "30d"})
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    client.force_login(w.people["admin"])
    assert client.get(url).status_code == 405
    response = _refresh(client, w, range_key="12d")
    assert response.status_code == 400 and "not a preset range" in response.content.decode()
    assert not DashboardSnapshot.objects.exists()


# --- keeping viewed snapshots up to date ------------------------------------------------------------------------


def test_activity_changes_with_every_kind_of_review_work(w):
    def changed(change, when=NOW) -> bool:
        before = activity(project=w.project, now=NOW)
        change()
        return activity(project=w.project, now=when) != before

    assert activity(project=w.project, now=NOW) == activity(project=w.project, now=NOW)
    assert changed(lambda: event(w.project, w.m3, S.ANNOTATING, S.SUBMITTED, w.a2, NOW))
    assert changed(lambda: verdict(w.project, w.m1, w.e3, True, at(20), NOW, queue=w.q_mcq))
    assert changed(lambda: score(w.m1, 70, NOW))
    assert changed(lambda: MCQFactory(project=w.project, author=w.a1))
    assert changed(lambda: ReviewQueueFactory(project=w.project, name="Pairs"))
    live = Assignment.objects.get(project=w.project, status="active", lease_expires_at__gt=NOW)
    assert changed(lambda: Assignment.objects.filter(pk=live.pk).update(status="released"))
    # A lease lapsing with time alone changes what the panels count (depth, expired leases).
    lease = AssignmentFactory(
        item=w.m3, assignee=w.e2, queue=w.q_mcq, leased_at=NOW, lease_expires_at=NOW + dt.timedelta(minutes=30)
    )
    before = activity(project=w.project, now=NOW)
    assert activity(project=w.project, now=NOW + dt.timedelta(minutes=29)) == before
    assert activity(project=w.project, now=NOW + dt.timedelta(minutes=31)) != before
    # Another project's work is not this project's activity.
    before = activity(project=w.project, now=NOW)
    MCQFactory()
    assert activity(project=w.project, now=NOW) == before
    assert lease.pk


def _world_viewed(w, viewed_at, range_key="30d"):
    dashboard_snapshot_refresh(project=w.project, range_key=range_key, now=NOW)
    DashboardSnapshot.objects.filter(project=w.project, range_key=range_key).update(viewed_at=viewed_at)


def test_the_minute_job_refreshes_only_viewed_projects_with_new_activity(w):
    later = NOW + dt.timedelta(minutes=5)
    # Viewed 10 minutes ago, then work was done: due.
    _world_viewed(w, NOW - dt.timedelta(minutes=10))
    # Viewed, but nothing happened since: not due.
    quiet = build_world()
    _world_viewed(quiet, NOW - dt.timedelta(minutes=10))
    # Work was done, but nobody has looked for two hours: not due.
    unseen = build_world()
    _world_viewed(unseen, NOW - dt.timedelta(hours=2))
    # Never viewed through the page (a refresh alone): not due.
    never = build_world()
    dashboard_snapshot_refresh(project=never.project, range_key="30d", now=NOW)
    for world in (w, unseen, never):
        event(world.project, world.m3, S.ANNOTATING, S.SUBMITTED, world.a2, NOW + SECOND)

    assert dashboard_snapshots_due(now=later) == {w.project.pk: ["30d"]}
    with mock.patch.object(tasks.dashboard_refresh, "apply_async") as send, frozen(later):
        assert tasks.dashboard_refresh_due() == [w.project.pk]
    send.assert_called_once_with(args=[w.project.pk], expires=55)

    # The task for that project refreshes it; run again, it finds nothing to do.
    with frozen(later):
        assert tasks.dashboard_refresh(w.project.pk) == ["30d"]
        assert tasks.dashboard_refresh(w.project.pk) == []
        assert tasks.dashboard_refresh(quiet.project.pk) == []
        assert tasks.dashboard_refresh(unseen.project.pk) == []
        assert tasks.dashboard_refresh(10**9) == []  # a project deleted meanwhile
    computed = dict(DashboardSnapshot.objects.values_list("project", "computed_at"))
    assert computed == {w.project.pk: later, quiet.project.pk: NOW, unseen.project.pk: NOW, never.project.pk: NOW}
    assert dashboard_snapshots_due(now=later + SECOND) == {}


def test_the_minute_job_moves_a_viewed_range_to_a_new_day():
    project = ProjectFactory()  # no work at all: only the day changes
    late = dt.datetime(2026, 3, 31, 23, 50, tzinfo=dt.UTC)
    for key in ("7d", "30d"):
        dashboard_snapshot_refresh(project=project, range_key=key, now=late)
    DashboardSnapshot.objects.update(viewed_at=late)
    just_after_midnight = dt.datetime(2026, 4, 1, 0, 0, 30, tzinfo=dt.UTC)
    assert dashboard_snapshots_due(now=late + 60 * SECOND) == {}
    assert dashboard_snapshots_due(now=just_after_midnight) == {project.pk: ["30d", "7d"]}
    assert dashboard_project_refresh(project=project, now=just_after_midnight) == ["30d", "7d"]
    periods = dict(DashboardSnapshot.objects.values_list("range_key", "period_end"))
    assert periods == {"7d": dt.date(2026, 4, 1), "30d": dt.date(2026, 4, 1)}


def test_the_page_records_views_for_the_minute_job(w):
    assert dashboard_snapshots_due(now=NOW) == {}
    with frozen(NOW):
        dashboard_snapshot_for_page(project=w.project, range_key="30d")
    event(w.project, w.m3, S.ANNOTATING, S.SUBMITTED, w.a2, NOW + SECOND)
    assert dashboard_snapshots_due(now=NOW + 60 * SECOND) == {w.project.pk: ["30d"]}
    assert dashboard_snapshots_due(now=NOW + dt.timedelta(hours=1, seconds=1)) == {}


def test_a_project_without_queues_says_how_to_get_depths():
    project = ProjectFactory()
    snapshot = dashboard_snapshot_refresh(project=project, range_key="7d", now=NOW)
    assert "no review queue yet" in snapshot.html
    assert snapshot.data["queues"]["rows"] == [] and snapshot.data["progress"]["rows"][0][-1] == 0
