"""The leaderboard, a run's page, a prediction and the compare page, through the browser's views."""

import pytest
from django.urls import reverse

from evaluations.models import EvaluationRun, Prediction
from evaluations.tasks import evaluation_run
from tests import factories
from tests.evaluations.world import responder

pytestmark = pytest.mark.django_db


def _run(client, release, model):
    project = release.project
    response = client.post(
        reverse("evaluations:start", args=[project.slug]),
        {"release": release.pk, "model": model, "frames": 2, "use_extractor": "on", "protocol": ""},
    )
    run = EvaluationRun.objects.get(model=model)
    assert response.status_code == 302 and response["Location"] == reverse(
        "evaluations:run", args=[project.slug, run.pk]
    )
    evaluation_run(run.job_id)
    run.refresh_from_db()
    return run


def test_an_admin_starts_runs_reads_the_leaderboard_and_compares(client, release, fake_openai):
    fake_openai.set_default(responder)
    project = release.project
    client.force_login(release.admin)
    board = client.get(reverse("evaluations:leaderboard", args=[project.slug])).content.decode()
    assert "No model evaluated yet. Next: start a run below." in board and 'data-key="n"' in board

    a = _run(client, release, "model-a")
    b = _run(client, release, "model-b")
    page = client.get(reverse("evaluations:run", args=[project.slug, a.pk])).content.decode()
    assert "0.500" in page and "Per category" in page and "clustered over 2 videos" in page
    wrong = Prediction.objects.filter(run=a, score=0).first()
    assert reverse("evaluations:prediction", args=[project.slug, a.pk, wrong.index]) in page

    prediction = client.get(reverse("evaluations:prediction", args=[project.slug, a.pk, wrong.index])).content.decode()
    assert reverse("annotator:mcq_editor", args=[project.slug, wrong.mcq_id]) in prediction
    assert "Model call" in prediction

    board = client.get(reverse("evaluations:leaderboard", args=[project.slug])).content.decode()
    assert board.index("model-a") < board.index("model-b")  # same accuracy: the earlier run first
    assert "<svg" in board

    compare = client.get(reverse("evaluations:compare", args=[project.slug]), {"a": a.pk, "b": b.pk}).content.decode()
    assert "McNemar" in compare and "p = 1" in compare and "Questions needed to detect 2 points" in compare

    csv_text = client.get(reverse("evaluations:csv", args=[project.slug])).content.decode()
    assert csv_text.splitlines()[1].startswith(f"1,{a.pk},model-a")


def test_members_read_but_only_admins_start(client, release):
    project = release.project
    examiner = factories.UserFactory()
    factories.MembershipFactory(project=project, user=examiner, role="examiner")
    client.force_login(examiner)
    board = client.get(reverse("evaluations:leaderboard", args=[project.slug])).content.decode()
    assert "a project admin starts runs here" in board and "New run" not in board
    response = client.post(reverse("evaluations:start", args=[project.slug]), {"release": release.pk, "model": "m"})
    assert response.status_code == 403


def test_without_an_endpoint_the_start_says_what_is_missing(client, release, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    client.force_login(release.admin)
    response = client.post(
        reverse("evaluations:start", args=[release.project.slug]),
        {"release": release.pk, "model": "m", "frames": 8},
        follow=True,
    )
    assert "No model endpoint is set for this project" in response.content.decode()
    assert not EvaluationRun.objects.exists()


def test_the_leaderboard_of_one_release(client, release, fake_openai):
    fake_openai.set_default(responder)
    project = release.project
    client.force_login(release.admin)
    run = _run(client, release, "model-a")
    url = reverse("evaluations:leaderboard", args=[project.slug])
    page = client.get(url, {"release": release.pk}).content.decode()
    assert "Runs on release v1" in page and "model-a" in page
    assert run.summary["accuracy"] == 0.5
