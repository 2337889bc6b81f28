"""The evaluation API: start runs, read their figures and predictions, compare two, resume."""

import pytest
from django.urls import reverse

from evaluations.models import EvaluationRun
from evaluations.tasks import evaluation_run
from tests.evaluations.world import build_release, responder

pytestmark = pytest.mark.django_db


def test_start_read_predictions_compare_and_resume(client, token_for, tmp_path, settings, fake_openai):
    release = build_release(tmp_path, settings)
    fake_openai.set_default(responder)
    slug = release.project.slug
    h = token_for(release.admin)
    url = reverse("api:evaluation-list", args=[slug])
    ids = []
    for model in ("model-a", "model-b"):
        response = client.post(
            url,
            {"release_id": release.pk, "model": model, "frames": 2, "api_key": ""},
            content_type="application/json",
            headers=h,
        )
        assert response.status_code == 202, response.json()
        body = response.json()
        assert body["status"] == "queued" and body["protocol"] == "frames_subtitles" and "api_key" not in body
        evaluation_run(EvaluationRun.objects.get(pk=body["id"]).job_id)
        ids.append(body["id"])

    detail = client.get(reverse("api:evaluation-detail", args=[slug, ids[0]]), headers=h).json()
    assert (
        detail["status"] == "finished" and detail["summary"]["accuracy"] == 0.5 and detail["summary"]["clusters"] == 2
    )
    predictions = client.get(reverse("api:evaluation-predictions", args=[slug, ids[0]]), headers=h).json()
    rows = predictions["results"] if isinstance(predictions, dict) else predictions
    assert len(rows) == 6 and all(r["mcq"] and r["call"] for r in rows)

    compare = client.get(reverse("api:evaluation-compare", args=[slug]), {"a": ids[0], "b": ids[1]}, headers=h).json()
    assert compare["common"] == 6 and compare["mcnemar"] == {"a_only": 1, "b_only": 1, "p_value": 1.0}

    calls = len(fake_openai.requests("chat"))
    resumed = client.post(reverse("api:evaluation-resume", args=[slug, ids[0]]), headers=h)
    assert resumed.status_code == 202 and resumed.json()["status"] == "queued"
    evaluation_run(EvaluationRun.objects.get(pk=ids[0]).job_id)
    assert len(fake_openai.requests("chat")) == calls  # a finished run asks nothing again

    refused = client.post(url, {"release_id": release.pk, "model": ""}, content_type="application/json", headers=h)
    assert refused.status_code == 400
