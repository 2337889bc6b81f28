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
