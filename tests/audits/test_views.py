"""The audit page and its CSV, for project admins."""

import csv
import io

import pytest
from django.urls import reverse

from annotator.models import MCQVideo
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def flawed(project, people):
    video = factories.VideoFactory(project=project, duration_s=90.0)
    good = factories.MCQFactory(project=project, options=["red", "green", "brown", "white"], status="examining")
    bad = factories.MCQFactory(
        project=project,
        question="When the host opens the jar, which of these is inside?",
        referring_end=27,
        options=["salt", "Salt", "sugar", "flour"],
        status="examining",
    )
    for mcq in (good, bad):
        MCQVideo.objects.create(mcq=mcq, video=video, order=0)
    return good, bad


def test_admins_see_flagged_items_linked_to_their_editors_and_download_them(client, project, people, flawed):
    good, bad = flawed
    client.force_login(people["admin"])
    home = client.get(reverse("studio:project_home", args=[project.slug])).content.decode()
    page_url = reverse("audits:page", args=[project.slug])
    assert page_url in home  # in the project navigation

    page = client.get(page_url).content.decode()
    assert reverse("annotator:mcq_editor", args=[project.slug, bad.pk]) in page
    assert "Options 1 and 2 are the same once case and punctuation are ignored." in page
    assert 'data-key="d"' in page

    response = client.get(reverse("audits:csv", args=[project.slug]))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert any(r["mcq_id"] == str(bad.pk) and r["code"] == "duplicate_options" for r in rows)
    assert response["Content-Disposition"].endswith('-static-audit.csv"')


def test_only_admins_reach_it_and_see_the_link(client, project, people, flawed):
    client.force_login(people["examiner"])
    assert client.get(reverse("audits:page", args=[project.slug])).status_code == 403
    home = client.get(reverse("studio:project_home", args=[project.slug])).content.decode()
    assert reverse("audits:page", args=[project.slug]) not in home


def test_the_command_prints_the_findings_and_fails_on_a_blocker(project, flawed, capsys):
    import json

    from django.core.management import call_command

    good, bad = flawed
    call_command("audit", "show", project.slug)
    out = capsys.readouterr().out
    assert f"MCQ {bad.pk}\twarning\tduplicate_options" in out
    assert "2 MCQs checked, 2 flagged, 0 blocked" in out  # both lack a stamped moment

    bad.correct_index = 4
    bad.save()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "show", project.slug, "--json")
    assert exited.value.code == 1
    report = json.loads(capsys.readouterr().out)
    assert report["blocked"] == [bad.pk]
    assert {f["code"] for f in report["items"][str(bad.pk)]} >= {"duplicate_options", "correct_out_of_range"}


def _answer(mcq, correct, variant="order 1"):
    from audits.models import ProbeAnswer

    return ProbeAnswer.objects.create(
        project_id=mcq.project_id,
        mcq=mcq,
        probe="text",
        variant=variant,
        model="probe-model",
        input_hash="x",
        item_version=mcq.version,
        shown_order=[0, 1, 2, 3],
        option_count=4,
        ok=True,
        chosen_index=mcq.correct_index if correct else 3,
        correct=correct,
    )


def test_probe_figures_sort_and_send_to_review(client, project, people, flawed):
    from annotator.models import ReviewEvent

    good, bad = flawed
    _answer(good, True)
    _answer(good, True, "order 2")
    _answer(bad, False)
    client.force_login(people["admin"])
    url = reverse("audits:page", args=[project.slug])
    page = client.get(url + "?sort=score").content.decode()
    assert "Shortcut probes" in page and "Text only" in page
    assert "100 %" in page and "(2/2: text)" in page  # the good item, answered blind both times
    assert page.index(f"MCQ {good.pk}<") < page.index(f"MCQ {bad.pk}<")  # highest score first
    assert 'data-key="r"' in page and 'data-key="s"' in page

    csv_rows = list(
        csv.DictReader(io.StringIO(client.get(reverse("audits:probes_csv", args=[project.slug])).content.decode()))
    )
    assert {(r["mcq_id"], r["shortcut_score"], r["probes_correct"]) for r in csv_rows} == {
        (str(good.pk), "1.0000", "text"),
        (str(bad.pk), "0.0000", ""),
    }

    response = client.post(reverse("audits:send", args=[project.slug]), {"mcq": [good.pk, bad.pk]}, follow=True)
    assert "2 items sent to review" in response.content.decode()
    good.refresh_from_db()
    assert good.status == "flagged"
    assert ReviewEvent.objects.filter(mcq=good).latest("id").reasons == ["no_moment", "shortcut:text"]
    assert "duplicate_options" in ReviewEvent.objects.filter(mcq=bad).latest("id").reasons


def test_the_run_button_says_what_is_missing_without_an_endpoint(client, project, people, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    client.force_login(people["admin"])
    page = client.get(reverse("audits:page", args=[project.slug])).content.decode()
    assert "No model endpoint is set for this project" in page
    response = client.post(reverse("audits:run", args=[project.slug]), follow=True)
    assert "No model endpoint is set" in response.content.decode()


def test_the_examiner_sees_the_probe_results_beside_the_item(client, project, people, flawed):
    good, _bad = flawed
    _answer(good, True)
    client.force_login(people["examiner"])
    page = client.get(reverse("reviewer:examine_item", args=[project.slug, "mcq", good.pk])).content.decode()
    assert "Shortcut probes" in page
    assert "1 of 1 answers right without the video (100 %)" in page
    assert "A: right" in page
