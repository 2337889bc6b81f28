"""Headless Chromium on the release pages: cut a release by keyboard, watch it build, open its charts."""

import os

import pytest

from releases.models import DatasetRelease
from releases.tasks import build
from tests import factories
from tests.browser.helpers import login
from tests.releases.conftest import make_accepted

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def _shot(page, name):
    folder = os.environ.get("RELEASE_SCREENSHOTS")
    if folder:
        page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=True)


def test_cut_a_release_by_keyboard_and_watch_it_build(page, live_server, monkeypatch):
    # No worker in this test: the build runs here, in the test's thread, when the test says so.
    monkeypatch.setattr("jobs.services._send", lambda job_id, kind: None)
    project = factories.ProjectFactory(kind="longvideobench")
    admin = factories.people_for(project)["admin"]
    make_accepted(project)
    login(page, live_server, admin)
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.keyboard.press("e")
    page.wait_for_url(f"**/p/{project.slug}/releases/")
    page.keyboard.press("n")
    page.wait_for_url(f"**/p/{project.slug}/releases/new/")

    page.keyboard.press("v")
    page.keyboard.type("v1.0")
    page.fill("#id_categories", "E2O")
    page.locator("#id_categories").dispatch_event("change")
    page.wait_for_function("() => document.querySelector('#preview').textContent.includes('1 MCQ from 1 video')")
    page.check("input[name=formats][value=generic]")
    # The factories' videos are not decodable, so LongVideoBench's checks against the video would fail.
    page.uncheck("input[name=formats][value=longvideobench]")
    _shot(page, "new")
    page.press("#id_version", "Control+Enter")
    page.wait_for_url(f"**/p/{project.slug}/releases/*/")
    assert "is queued" in page.inner_text(".messages")

    release = DatasetRelease.objects.get()
    assert release.formats == ["generic"] and release.filters["categories"] == ["E2O"]
    build(release.job_id)
    # The job partial polls itself; when the job has ended the page reloads with the downloads.
    page.wait_for_selector("text=Download zip", timeout=20_000)
    _shot(page, "detail")

    page.keyboard.press("s")
    page.wait_for_url("**/statistics/")
    assert page.locator("svg.chart").count() >= 3
    _shot(page, "statistics")
    page.keyboard.press("l")
    page.wait_for_url(f"**/p/{project.slug}/releases/")
    _shot(page, "list")
    page.keyboard.press("j")
    page.keyboard.press("o")
    page.wait_for_url(f"**/releases/{release.pk}/")
