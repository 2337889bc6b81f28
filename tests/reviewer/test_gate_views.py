"""Score and history screens: who sees what, filters, the item partial, revert by form, constant query counts."""

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.chains import chain_save
from annotator.lifecycle import item_transition
from annotator.models import ItemStatus, QAPair, ReviewEvent
from jobs.models import BackgroundJob, JobStatus
from llm.models import LLMCall
from projects.taxonomies import CHAIN_JUDGE_DIMENSIONS
from reviewer.gate_views import item_scores_context
from reviewer.quality_gate import JUDGE_TASK
from tests import factories

pytestmark = pytest.mark.django_db

MEMBERS = ["annotator", "examiner", "reviser", "admin"]


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())


def make_chain(project, n_pairs=2, **kwargs):
    video = factories.VideoFactory(project=project)
    chain = factories.QAChainFactory(clip=factories.ClipFactory(video=video), **kwargs)
    for i in range(n_pairs):
        factories.QAPairFactory(chain=chain, index=i)
    return chain


def score(item, overall, **kwargs):
    dims = dict.fromkeys(CHAIN_JUDGE_DIMENSIONS, overall) | kwargs.pop("dims", {})
    return factories.QualityScoreFactory(item=item, overall=overall, dimensions=dims, **kwargs)


def list_url(project, **params):
    url = reverse("reviewer:score_list", args=[project.slug])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def history_url(item, kind="qa_chain"):
    return reverse("reviewer:item_history", args=[item.project.slug, kind, item.pk])


def listed_overalls(response) -> list[int]:
    return sorted(view.score.overall for view, _label, _status in response.context["rows"])


# --- permissions ---------------------------------------------------------------------------------------


def test_anonymous_visitors_are_sent_to_log_in(client, project):
    chain = make_chain(project)
    for url in (list_url(project), history_url(chain)):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("who", MEMBERS)
def test_members_see_scores_and_history(client, people, project, who):
    chain = make_chain(project)
    judged = score(chain, 72, comments="Turn 2 contradicts turn 1.")
    client.force_login(people[who])
    assert client.get(list_url(project)).status_code == 200
    page = client.get(history_url(chain))
    assert page.status_code == 200 and "Turn 2 contradicts turn 1." in page.content.decode()
    assert client.get(reverse("reviewer:score_call", args=[project.slug, judged.pk])).status_code == 200


def test_another_projects_member_gets_404_everywhere(client, people, project):
    chain = make_chain(project)
    judged = score(chain, 95)
    client.force_login(people["outsider"])
    urls = [
        list_url(project),
        history_url(chain),
        reverse("reviewer:score_call", args=[project.slug, judged.pk]),
        reverse("reviewer:item_scores", args=[project.slug, "qa_chain", chain.pk]),
    ]
    for url in urls:
        assert client.get(url).status_code == 404, url
    for url in (
        reverse("reviewer:item_revert", args=[project.slug, "qa_chain", chain.pk]),
        reverse("reviewer:gate_waiting", args=[project.slug]),
        reverse("reviewer:item_judge", args=[project.slug, "qa_chain", chain.pk]),
    ):
        assert client.post(url, {"to_version": 1}).status_code == 404, url


def test_items_and_scores_of_another_project_are_not_reachable_through_mine(client, people, project):
    other_chain = make_chain(factories.ProjectFactory())
    other_score = score(other_chain, 50)
    client.force_login(people["admin"])
    assert client.get(history_url(other_chain).replace(other_chain.project.slug, project.slug)).status_code == 404
    assert client.get(reverse("reviewer:score_call", args=[project.slug, other_score.pk])).status_code == 404
    assert client.get(reverse("reviewer:item_history", args=[project.slug, "nonsense", 1])).status_code == 404
    assert other_score.pk not in [v.score.pk for v, *_ in client.get(list_url(project)).context["rows"]]


@pytest.mark.parametrize("who", ["annotator", "examiner", "reviser"])
def test_only_admins_revert_and_rerun_the_judge(client, people, project, who):
    chain = make_chain(project, status=ItemStatus.SUBMITTED)
    client.force_login(people[who])
    revert = client.post(reverse("reviewer:item_revert", args=[project.slug, "qa_chain", chain.pk]), {"to_version": 1})
    assert revert.status_code == 403
    assert client.post(reverse("reviewer:gate_waiting", args=[project.slug])).status_code == 403
    assert client.post(reverse("reviewer:item_judge", args=[project.slug, "qa_chain", chain.pk])).status_code == 403
    assert not ReviewEvent.objects.exists()
    assert not BackgroundJob.objects.exists()
    # Nor do they see the revert buttons.
    assert "Revert to this version" not in client.get(history_url(chain)).content.decode()


# --- the score list ----------------------------------------------------------------------------------------


@pytest.fixture
def scored(project):
    """Five chains and an MCQ with scores; one chain judged twice (72, then 93)."""
    chains = [make_chain(project) for _ in range(5)]
    rejudged = chains[0]
    score(rejudged, 72, item_version=1)
    score(rejudged, 93, item_version=2)
    score(chains[1], 40, dims={"accuracy": 20})
    score(chains[2], 88)
    score(chains[3], 95)
    score(chains[4], 100)
    mcq = factories.MCQFactory(project=project)
    factories.QualityScoreFactory(item=mcq, overall=60, dimensions={"correctness": 60, "clarity": 70})
    return chains, mcq


def test_the_list_shows_each_items_latest_score_with_its_dimensions(client, people, project, scored):
    client.force_login(people["examiner"])
    response = client.get(list_url(project))
    assert listed_overalls(response) == [40, 60, 88, 93, 95, 100]
    assert [d for d, _ in response.context["dimensions"]] == [*CHAIN_JUDGE_DIMENSIONS, "correctness", "clarity"]
    assert response.context["summary"]["count"] == 6 and response.context["summary"]["passed"] == 3
    html = response.content.decode()
    assert "Contextual comprehension" in html and "Correctness" in html


@pytest.mark.parametrize(
    "params, overalls",
    [
        ({"passed": "no"}, [40, 60, 88]),
        ({"passed": "yes"}, [93, 95, 100]),
        ({"min": 60, "max": 95}, [60, 88, 93, 95]),
        ({"kind": "mcq"}, [60]),
        ({"kind": "qa_chain", "order": "lowest"}, [40, 88, 93, 95, 100]),
        ({"dimension": "accuracy", "dim_max": 50}, [40]),
        ({"all": "on"}, [40, 60, 72, 88, 93, 95, 100]),
        ({"all": "on", "max": 80}, [40, 60, 72]),
    ],
)
def test_filters(client, people, project, scored, params, overalls):
    client.force_login(people["annotator"])
    assert listed_overalls(client.get(list_url(project, **params))) == overalls


def test_the_lowest_first_order(client, people, project, scored):
    client.force_login(people["annotator"])
    rows = client.get(list_url(project, order="lowest")).context["rows"]
    assert [v.score.overall for v, *_ in rows] == [40, 60, 88, 93, 95, 100]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"min": "abc"}, "Enter a whole number."),
        ({"min": 90, "max": 10}, "The range is empty: 90 is above 10."),
        ({"max": 300}, "less than or equal to 100"),
        ({"dim_max": 30}, "Choose the dimension"),
        ({"kind": "video"}, "Select a valid choice"),
    ],
)
def test_bad_filters_say_why_and_filter_nothing(client, people, project, scored, params, message):
    client.force_login(people["annotator"])
    response = client.get(list_url(project, **params))
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html and "were not applied" in html
    assert len(response.context["rows"]) == 6


def test_htmx_filtering_swaps_only_the_rows(client, people, project, scored):
    client.force_login(people["annotator"])
    response = client.get(list_url(project, passed="no"), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="score-rows")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="score-rows">') and "<html" not in html
    assert [n for n in (40, 60, 72, 88, 93, 95, 100) if f"<strong>{n}</strong>" in html] == [40, 60, 88]


def test_the_list_pages(client, people, project, scored, monkeypatch):
    monkeypatch.setattr("reviewer.gate_views.SCORES_PER_PAGE", 4)
    client.force_login(people["annotator"])
    first = client.get(list_url(project, order="lowest"))
    second = client.get(list_url(project, order="lowest", page=2))
    assert [v.score.overall for v, *_ in first.context["rows"]] == [40, 60, 88, 93]
    assert [v.score.overall for v, *_ in second.context["rows"]] == [95, 100]
    assert "?order=lowest&page=2" in first.content.decode()


def queries_for(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_the_list_query_count_does_not_grow_with_rows(client, people, project):
    client.force_login(people["admin"])
    for _ in range(3):
        score(make_chain(project), 80)
    factories.QualityScoreFactory(item=factories.MCQFactory(project=project), overall=50)
    few = queries_for(client, list_url(project))
    for _ in range(12):
        score(make_chain(project), 85)
        factories.QualityScoreFactory(item=factories.MCQFactory(project=project), overall=70)
    assert queries_for(client, list_url(project)) == few


# --- the item's scores -----------------------------------------------------------------------------------------


def test_the_item_partial_shows_scores_comments_and_the_call(project, people):
    chain = make_chain(project)
    call = LLMCall.objects.create(project=project, step="judge", model="gpt-4o", outcome="ok")
    judged = score(chain, 72, comments="Turn 2 repeats the name.", llm_call=call, dims={"fluency": 55})
    html = render_to_string("reviewer/scores.html#item_scores", item_scores_context(chain, user=people["annotator"]))
    assert "Turn 2 repeats the name." in html and "below the threshold of 90" in html
    assert reverse("reviewer:score_call", args=[project.slug, judged.pk]) in html
    assert "Fluency" in html and 'value="55"' in html


def test_the_item_partial_says_when_the_judge_failed_and_offers_admins_a_retry(client, project, people):
    chain = make_chain(project, status=ItemStatus.SUBMITTED)
    factories.BackgroundJobFactory(
        project=project,
        kind=JUDGE_TASK,
        target_type="annotator.qachain",
        target_id=chain.pk,
        status=JobStatus.FAILED,
        error="The judge model gave no usable verdict: HTTP 500.",
    )
    for who, retry in (("admin", True), ("annotator", False)):
        html = render_to_string("reviewer/scores.html#item_scores", item_scores_context(chain, user=people[who]))
        assert "HTTP 500" in html
        assert ("Judge again" in html) is retry

    client.force_login(people["admin"])
    url = reverse("reviewer:item_judge", args=[project.slug, "qa_chain", chain.pk])
    response = client.post(url, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "is scoring version" in response.content.decode()
    assert BackgroundJob.objects.filter(kind=JUDGE_TASK, status=JobStatus.QUEUED, target_id=chain.pk).count() == 1


def test_the_item_scores_url_serves_htmx_and_sends_browsers_to_the_history(client, people, project):
    chain = make_chain(project)
    score(chain, 91)
    client.force_login(people["examiner"])
    url = reverse("reviewer:item_scores", args=[project.slug, "qa_chain", chain.pk])
    assert client.get(url)["Location"].endswith(history_url(chain) + "#scores")
    partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith("<section") and "91" in partial


def test_judge_waiting_items_from_the_list(client, people, project):
    chain = make_chain(project, status=ItemStatus.SUBMITTED)
    client.force_login(people["admin"])
    page = client.get(list_url(project)).content.decode()
    assert "Judge waiting items" in page
    response = client.post(reverse("reviewer:gate_waiting", args=[project.slug]), follow=True)
    assert "1 sent to the judge." in response.content.decode()
    assert BackgroundJob.objects.get(kind=JUDGE_TASK).target_id == chain.pk


# --- the history page ---------------------------------------------------------------------------------------------


def edit(chain, user, n):
    chain.refresh_from_db()
    pairs = [
        {"id": p.pk, "question": p.question, "answer": f"Answer {n}.", "skill": p.skill}
        for p in chain.pairs.order_by("index")
    ]
    chain_save(chain=chain, expected_version=chain.version, pairs=pairs, user=user)


def test_the_history_page_shows_events_versions_diffs_and_revert(client, people, project):
    chain = make_chain(project, status=ItemStatus.ANNOTATING)
    edit(chain, people["annotator"], 1)
    edit(chain, people["annotator"], 2)
    chain.refresh_from_db()
    item_transition(item=chain, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    item_transition(item=chain, to_status=ItemStatus.REVISING, reasons=["judge_below_threshold"], comment="Fix turn 2.")
    client.force_login(people["admin"])
    response = client.get(history_url(chain))
    html = response.content.decode()
    assert [e.version.version for e in response.context["entries"]] == [3, 2, 1]
    assert "judge_below_threshold" in html and "Fix turn 2." in html
    assert "Answer<del> 1</del><ins> 2</ins>." in html
    assert html.count("Revert to this version") == 2

    reverted = client.post(
        reverse("reviewer:item_revert", args=[project.slug, "qa_chain", chain.pk]),
        {"to_version": 2, "expected_version": 3},
        follow=True,
    )
    assert "Version 4 restores the content of version 2" in reverted.content.decode()
    assert set(QAPair.objects.filter(chain=chain).values_list("answer", flat=True)) == {"Answer 1."}
    chain.refresh_from_db()
    assert chain.version == 4 and chain.status == ItemStatus.REVISING

    stale = client.post(
        reverse("reviewer:item_revert", args=[project.slug, "qa_chain", chain.pk]),
        {"to_version": 1, "expected_version": 3},
        follow=True,
    )
    assert "Nothing was reverted" in stale.content.decode()
    chain.refresh_from_db()
    assert chain.version == 4


def test_comparing_two_versions_and_bad_input(client, people, project):
    chain = make_chain(project, status=ItemStatus.ANNOTATING)
    edit(chain, people["annotator"], 1)
    client.force_login(people["examiner"])
    compared = client.get(history_url(chain) + "?from=1&to=2")
    assert compared.context["compare"].summary == "2 turns changed"
    unknown = client.get(history_url(chain) + "?from=1&to=9").content.decode()
    assert "Version 9 of this item left no record" in unknown
    assert "Choose two versions" in client.get(history_url(chain) + "?from=x&to=2").content.decode()


def test_the_history_query_count_does_not_grow_with_versions(client, people, project):
    chain = make_chain(project, status=ItemStatus.ANNOTATING, n_pairs=3)
    edit(chain, people["annotator"], 0)
    score(chain, 90)
    client.force_login(people["admin"])
    few = queries_for(client, history_url(chain))
    for n in range(1, 9):
        edit(chain, people["annotator"], n)
    score(chain, 60)
    assert queries_for(client, history_url(chain)) == few


def test_the_mcq_and_chain_pair_history_pages_render(client, people, project):
    mcq = factories.MCQFactory(project=project)
    pair = factories.RelationFactory(
        chain_pair=factories.ChainPairFactory(
            chain_before=factories.QAChainFactory(
                clip=factories.ClipFactory(video=factories.VideoFactory(project=project))
            )
        )
    ).chain_pair
    client.force_login(people["reviser"])
    assert client.get(history_url(mcq, "mcq")).status_code == 200
    page = client.get(history_url(pair, "chain_pair"))
    assert page.status_code == 200 and "chains 0→1" in page.content.decode()
