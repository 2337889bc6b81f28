"""The audit API: the figures in one read, a probe run started, items sent back to review."""

import pytest
from django.urls import reverse

from audits.models import ProbeAnswer, ProbeRun
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def items(project):
    video = factories.VideoFactory(project=project)
    good = factories.MCQFactory(project=project, video=video, status="accepted")
    bad = factories.MCQFactory(
        project=project, video=video, status="examining", options=["salt", "Salt", "sugar", "flour"]
    )
    ProbeAnswer.objects.create(
        project=project,
        mcq=good,
        probe="text",
        variant="order 1",
        model="m",
        input_hash="x",
        item_version=1,
        shown_order=[0, 1, 2, 3],
        option_count=4,
        ok=True,
        chosen_index=0,
        correct=True,
    )
    return good, bad


def test_admins_read_the_audit(client, token_for, project, people, items):
    good, bad = items
    h = token_for(people["admin"])
    data = client.get(reverse("api:audit", args=[project.slug]), headers=h).json()
    assert data["mcqs_checked"] == 2
    assert data["finding_counts"]["duplicate_options"] == 1
    assert data["probes"][0]["key"] == "text" and data["probes"][0]["correct"] == 1
    assert data["gate"]["mcqs_checked"] == 1 and data["gate"]["blind"]["accuracy"] == 1.0
    assert data["gate"]["passed"] is False and data["gate"]["messages"]
    by_id = {i["mcq_id"]: i for i in data["items"]}
    assert by_id[good.pk]["shortcut_score"] == 1.0 and by_id[good.pk]["probes_correct"] == ["text"]
    assert by_id[bad.pk]["findings"][0]["code"] == "duplicate_options"


def test_a_run_starts_or_says_what_is_missing(client, token_for, project, people, items, settings, fake_openai):
    h = token_for(people["admin"])
    url = reverse("api:audit-probe-runs", args=[project.slug])
    response = client.post(
        url, {"probes": ["text"], "mcq_ids": [items[0].pk]}, content_type="application/json", headers=h
    )
    assert response.status_code == 202, response.json()
    run = ProbeRun.objects.get()
    assert response.json()["job"]["status"] == "queued" and run.mcq_ids == [items[0].pk]
    assert client.post(url, {"probes": ["telepathy"]}, content_type="application/json", headers=h).status_code == 400

    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    response = client.post(url, {}, content_type="application/json", headers=h)
    assert response.status_code == 409 and response.json()["error"]["code"] == "no_model_endpoint"


def test_send_to_review(client, token_for, project, people, items):
    good, bad = items
    h = token_for(people["admin"])
    url = reverse("api:audit-send", args=[project.slug])
    response = client.post(
        url,
        {
            "items": [
                {"mcq_id": good.pk, "reasons": ["shortcut:text"]},
                {"mcq_id": bad.pk, "reasons": ["duplicate_options"]},
            ]
        },
        content_type="application/json",
        headers=h,
    )
    assert response.status_code == 200
    assert response.json() == {"sent": [good.pk, bad.pk], "refused": {}}
    good.refresh_from_db()
    bad.refresh_from_db()
    assert (good.status, bad.status) == ("revising", "flagged")
