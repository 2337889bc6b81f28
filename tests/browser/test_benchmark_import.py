"""Headless Chromium: an admin imports a LongVideoBench zip from the import page, by keyboard, watches the job
and reads its report; a bad file shows each problem with its file, record and field."""

import os

import pytest

from annotator.models import MCQ
from jobs.models import BackgroundJob
from releases.imports.services import IMPORT_TASK
from releases.tasks import import_benchmark
from tests import factories
from tests.browser.helpers import login
from tests.releases.test_imports_jobs import _zip
from tests.releases.test_imports_longvideobench import RECORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _shot(page, name):
    folder = os.environ.get("IMPORT_SCREENSHOTS")
    if folder:
        page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=True)


def _upload(page, tmp_path, name, records):
    path = tmp_path / name
    path.write_bytes(_zip(records).read())
    page.set_input_files("#id_archive", str(path))
    page.locator("h1").click()  # out of the file field, so the page's shortcuts answer
    with page.expect_navigation():
        page.keyboard.press("i")
    page.wait_for_url("**/releases/import/*/")
    return BackgroundJob.objects.filter(kind=IMPORT_TASK).latest("pk")


def test_admin_imports_a_longvideobench_zip_and_reads_the_report(page, live_server, monkeypatch, tmp_path):
    # No worker in this test: the job runs here, when the test says so.
    monkeypatch.setattr("jobs.services._send", lambda job_id, kind: None)
    project = factories.ProjectFactory(kind="longvideobench")
    admin = factories.people_for(project)["admin"]
    factories.VideoFactory(project=project, name="cook", fps=25.0)
    login(page, live_server, admin)
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.click("nav.site-nav >> text=Import benchmark")
    page.wait_for_url(f"**/p/{project.slug}/releases/import/")
    assert page.locator("#id_format").input_value() == "longvideobench"  # the project's own format first

    job = _upload(page, tmp_path, "bad.zip", [RECORD, {**RECORD, "id": "cook_1", "correct_choice": 6}])
    assert page.url.endswith(f"/releases/import/{job.pk}/")
    import_benchmark(job.pk)
    page.wait_for_selector("table.problems", timeout=20_000)  # the box polls itself until the job ends
    row = page.inner_text("table.problems tbody tr")
    assert "longvideobench/lvb_test.json" in row and "cook_1" in row and "correct_choice" in row
    assert not MCQ.objects.filter(project=project).exists()
    _shot(page, "import-problems")

    job = _upload(page, tmp_path, "good.zip", [RECORD])
    assert page.url.endswith(f"/releases/import/{job.pk}/")
    import_benchmark(job.pk)
    page.wait_for_selector("text=Imported 1 MCQs", timeout=20_000)
    assert MCQ.objects.filter(project=project).count() == 1
    _shot(page, "import-done")
    page.keyboard.press("q")
    page.wait_for_url(f"**/p/{project.slug}/queues/")
