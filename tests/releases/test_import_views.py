"""The benchmark import page: admins upload a zip (or name a server folder), follow the job, read the report."""

import pytest
from django.urls import reverse

from jobs.models import BackgroundJob
from releases.imports.services import IMPORT_TASK, benchmark_import_job
from tests import factories
from tests.releases.test_imports_jobs import _zip
from tests.releases.test_imports_longvideobench import RECORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(project):
    people = factories.people_for(project)
    project.kind = "longvideobench"
    project.save(update_fields=["kind"])
    factories.VideoFactory(project=project, name="cook", fps=25.0)
    return project, people


def test_admin_imports_a_zip_follows_the_job_and_reads_the_report(client, setup):
    project, people = setup
    client.force_login(people["admin"])
    page = client.get(reverse("releases:import", args=[project.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-key="i"' in html and reverse("releases:import", args=[project.slug]) in html  # shortcut, nav link

    response = client.post(
        reverse("releases:import", args=[project.slug]),
        {"format": "longvideobench", "status": "examining", "archive": _zip([RECORD, {**RECORD, "correct_choice": 9}])},
    )
    job = BackgroundJob.objects.get(project=project, kind=IMPORT_TASK)
    assert response.status_code == 302 and response.url == reverse("releases:import_job", args=[project.slug, job.pk])
    running = client.get(response.url, headers={"HX-Request": "true"}).content.decode()
    assert 'hx-trigger="every 1s"' in running  # polls while the job has not ended

    benchmark_import_job(job_id=job.pk)
    report = client.get(response.url).content.decode()
    assert "Nothing was imported" in report and "correct_choice" in report and "longvideobench/lvb_test.json" in report


def test_the_form_wants_a_zip_or_a_folder(client, setup):
    project, people = setup
    client.force_login(people["admin"])
    response = client.post(
        reverse("releases:import", args=[project.slug]), {"format": "svbench", "status": "examining"}
    )
    assert response.status_code == 200 and "Give either a zip file or a server folder." in response.content.decode()
    response = client.post(
        reverse("releases:import", args=[project.slug]),
        {"format": "svbench", "status": "examining", "folder": "/etc"},
    )
    assert "VIDEO_IMPORT_ROOTS" in response.content.decode()
    assert not BackgroundJob.objects.filter(project=project, kind=IMPORT_TASK).exists()


def test_members_who_are_not_admins_have_no_import_page_or_link(client, setup):
    project, people = setup
    client.force_login(people["annotator"])
    assert client.get(reverse("releases:import", args=[project.slug])).status_code == 403
    home = client.get(reverse("releases:list", args=[project.slug])).content.decode()
    assert reverse("releases:import", args=[project.slug]) not in home
