"""The dashboards page, its CSVs and its rows pages: who may see them, what they show, how many queries."""

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.models import ItemStatus
from reviewer import dashboards as d
from tests.factories import AssignmentFactory, MCQFactory, people_for
from tests.reviewer.test_dashboards import PERIOD, at, build_world, event, score, verdict

pytestmark = pytest.mark.django_db

RANGE = {"from": "2026-03-02", "to": "2026-03-31"}


@pytest.fixture
def w():
    world = build_world()
    world.people = people_for(world.project)
    return world


def _client(client, user):
    client.force_login(user)
    return client


def _urls(project):
    slug = project.slug
    return [
        reverse("reviewer:dashboard", args=[slug]),
        reverse("reviewer:dashboard_csv", args=[slug, "progress"]),
        reverse("reviewer:dashboard_rows", args=[slug, "progress"]) + "?kind=mcq",
    ]


@pytest.mark.parametrize(
    ("who", "status"), [("admin", 200), ("annotator", 403), ("examiner", 403), ("reviser", 403), ("outsider", 404)]
)
def test_only_admins_see_the_dashboards(client, w, who, status):
    _client(client, w.people[who])
    for url in _urls(w.project):
        assert client.get(url).status_code == status, url


def test_anonymous_visitors_are_sent_to_log_in(client, w):
    for url in _urls(w.project):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_an_unknown_project_or_panel_is_404(client, w):
    _client(client, w.people["admin"])
    assert client.get(reverse("reviewer:dashboard", args=["no-such"])).status_code == 404
    assert client.get(reverse("reviewer:dashboard_csv", args=[w.project.slug, "nope"])).status_code == 404
    assert client.get(reverse("reviewer:dashboard_rows", args=[w.project.slug, "nope"])).status_code == 404


def test_the_page_draws_every_panel_with_its_numbers_and_links(client, w):
    _client(client, w.people["admin"])
    response = client.get(reverse("reviewer:dashboard", args=[w.project.slug]), RANGE)
    assert response.status_code == 200
    html = response.content.decode()
    for number, key in enumerate(d.PANELS, start=1):
        assert f'id="panel-{key}"' in html
        assert f'data-csv="/p/{w.project.slug}/dashboard/{key}.csv?from=2026-03-02&amp;to=2026-03-31"' in html
        assert f"<kbd>{number}</kbd>" in html
    assert html.count("<svg") >= 9 and "js/dashboard.js" in html
    # Traceable: a1's flags lead to their rounds, a queue's depth to the queue page.
    assert (
        f'/dashboard/flags-author/rows/?from=2026-03-02&amp;to=2026-03-31&amp;outcome=flagged&amp;author={w.a1.pk}"'
        in html
    )
    assert reverse("reviewer:queue_detail", args=[w.project.slug, w.q_mcq.pk]) in html
    # Agreement figures as worked out in test_dashboards: α 0.444, κ 0.400.
    assert "0.444" in html and "0.400" in html
    # Nothing half-rendered: no template error strings, every chart has a title.
    assert "Nothing in this range" not in html.split('id="panel-agreement"')[1]
    # Axes say what they count.
    for unit in ("items", "%", "minutes", "score"):
        assert 'class="axis-unit"' in html and f">{unit}</text>" in html, unit


def test_the_default_range_is_the_last_30_days_and_a_bad_range_says_why(client, w):
    _client(client, w.people["admin"])
    url = reverse("reviewer:dashboard", args=[w.project.slug])
    default = d.Period.last()
    response = client.get(url)
    # The last 30 days is a preset: drawn from its snapshot (computed for this first view).
    assert response.context["period"] == default and response.context["range_key"] == "30d"
    assert "computed for this first view" in response.content.decode()
    response = client.get(url, {"from": "2026-03-10", "to": "2026-03-01"})
    assert response.status_code == 200 and response.context["period"] == default
    assert "starts (2026-03-10) after it ends (2026-03-01)" in response.content.decode()


def _csv(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.content.decode())))


@pytest.mark.parametrize("panel", list(d.PANELS))
def test_each_csv_holds_the_panels_numbers(client, w, panel):
    _client(client, w.people["admin"])
    response = client.get(reverse("reviewer:dashboard_csv", args=[w.project.slug, panel]), RANGE)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == (
        f'attachment; filename="{w.project.slug}-{panel}-2026-03-02-2026-03-31.csv"'
    )
    table = d.panel_table(panel, d.panel_data(panel, project=w.project, period=PERIOD))
    rows = _csv(response)
    assert rows[0] == table.columns
    assert rows[1:] == [["" if v is None else str(v) for v in row] for row in table.rows]
    assert len(rows) > 1  # every panel has numbers in this world


def test_the_agreement_csv_has_the_worked_out_figures(client, w):
    _client(client, w.people["admin"])
    rows = _csv(client.get(reverse("reviewer:dashboard_csv", args=[w.project.slug, "agreement"]), RANGE))
    assert rows == [
        ["queue", "overlap", "units", "all_passed", "split", "all_flagged", "examiners", "observed", "alpha", "kappa"],
        ["MCQs: examine", "2", "3", "1", "1", "1", "2", "0.667", "0.444", "0.4"],
    ]


def _rows(client, w, panel, **params):
    return client.get(reverse("reviewer:dashboard_rows", args=[w.project.slug, panel]), {**RANGE, **params})


def test_rows_pages_list_the_items_behind_a_number(client, w):
    _client(client, w.people["admin"])
    page = _rows(client, w, "flags-author", author=w.a1.pk, outcome="flagged").context["page"]
    assert page.total == 2 and all(row[0].text.startswith(f"MCQ #{w.m2.pk}") for row in page.rows)
    assert page.rows[0][0].href == reverse("reviewer:item_history", args=[w.project.slug, "mcq", w.m2.pk])
    assert _rows(client, w, "flags-category", category="qa_chain:II").context["page"].total == 1
    assert _rows(client, w, "judge", kind="qa_chain", bin=9).context["page"].total == 2
    assert _rows(client, w, "progress", kind="mcq", status="accepted").context["page"].total == 1
    assert _rows(client, w, "throughput", person=w.e1.pk, action="flags").context["page"].total == 2
    assert _rows(client, w, "throughput", person=w.e1.pk, day="2026-03-07").context["page"].total == 2
    assert _rows(client, w, "time", source="lease", kind="mcq", stage="examining").context["page"].total == 3
    assert _rows(client, w, "time", source="verdict", kind="mcq").context["page"].total == 6
    # Lapsed by now: the leases of the 20th and 30th, and (this page runs at the real time) the one
    # that was live on the 31st.
    assert _rows(client, w, "expired", queue=w.q_mcq.pk).context["page"].total == 3
    # Agreement: the six verdicts of the three units; the split unit alone is m2's first round.
    assert _rows(client, w, "agreement", queue=w.q_mcq.pk).context["page"].total == 6
    split = _rows(client, w, "agreement", queue=w.q_mcq.pk, split="1").context["page"]
    assert split.total == 2 and {row[3].text for row in split.rows} == {"pass", "flag"}


def test_rows_pages_refuse_parameters_that_name_no_number(client, w):
    _client(client, w.people["admin"])
    response = _rows(client, w, "judge", kind="mcq", bin="12")
    assert response.status_code == 400 and "“bin” must be 0 to 9" in response.content.decode()
    response = _rows(client, w, "progress", kind="videos")
    assert response.status_code == 400 and "“kind” must be one of" in response.content.decode()
    assert _rows(client, w, "queues").status_code == 400


def _page_queries(client, w) -> int:
    url = reverse("reviewer:dashboard", args=[w.project.slug])
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, RANGE).status_code == 200
    return len(captured.captured_queries)


def test_the_page_runs_the_same_queries_however_much_data(client, w, django_assert_max_num_queries):
    # RANGE is a custom range: computed on request, every panel's queries (a preset's snapshot
    # page is pinned in test_dashboard_snapshots).
    _client(client, w.people["admin"])
    client.get(reverse("reviewer:dashboard", args=[w.project.slug]), RANGE)  # warm: session, templates
    small = _page_queries(client, w)
    for day in range(14, 28):
        m = MCQFactory(
            project=w.project, author=w.a2, category=f"C{day}", status=ItemStatus.EXAMINING, submitted_at=at(day)
        )
        event(w.project, m, ItemStatus.ANNOTATING, ItemStatus.SUBMITTED, w.a2, at(day, 9))
        event(w.project, m, ItemStatus.EXAMINING, ItemStatus.FLAGGED, w.e1, at(day, 12))
        verdict(w.project, m, w.e1, day % 2 == 0, at(day), at(day, 11), queue=w.q_mcq, seconds=day)
        verdict(w.project, m, w.e3, True, at(day), at(day, 11), queue=w.q_mcq, seconds=day)
        score(m, day * 3, at(day))
        AssignmentFactory(item=m, assignee=w.e2, queue=w.q_mcq, status="expired", leased_at=at(day))
    assert _page_queries(client, w) == small
    with django_assert_max_num_queries(30):
        client.get(reverse("reviewer:dashboard", args=[w.project.slug]), RANGE)


def test_the_project_home_links_admins_to_the_dashboards(client, w):
    url = reverse("studio:project_home", args=[w.project.slug])
    dashboard = reverse("reviewer:dashboard", args=[w.project.slug])
    assert dashboard in _client(client, w.people["admin"]).get(url).content.decode()
    client.logout()
    assert dashboard not in _client(client, w.people["annotator"]).get(url).content.decode()
