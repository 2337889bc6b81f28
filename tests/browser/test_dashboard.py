"""Headless Chromium on the dashboards: u refreshes a preset's snapshot, 1–9 jump to a panel, d downloads its CSV."""

import os
from pathlib import Path

import pytest

from tests import factories
from tests.browser.helpers import login
from tests.reviewer.test_dashboards import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_keys_jump_to_panels_and_download_their_csv(page, live_server):
    world = build_world()
    admin = factories.people_for(world.project)["admin"]
    login(page, live_server, admin)
    page.goto(f"{live_server.url}/p/{world.project.slug}/")
    page.keyboard.press("b")  # the project home's link to the dashboards
    page.wait_for_url(f"**/p/{world.project.slug}/dashboard/")
    # The last 30 days: a snapshot, computed for this first view, its time in plain sight; u recomputes it.
    assert "computed for this first view" in page.inner_text("#as-of")
    with page.expect_navigation():
        page.keyboard.press("u")
    assert page.url.endswith("/dashboard/?range=30d")
    assert "recomputed just now" in page.inner_text(".messages")
    as_of = page.inner_text("#as-of")
    assert "Numbers as of" in as_of and "first view" not in as_of and "s ago" in as_of

    page.goto(f"{live_server.url}/p/{world.project.slug}/dashboard/?from=2026-03-02&to=2026-03-31")
    assert "Custom ranges are computed on request" in page.inner_text("#as-of")
    if os.environ.get("DASHBOARD_SCREENSHOT"):
        page.screenshot(path=os.environ["DASHBOARD_SCREENSHOT"], full_page=True)

    page.keyboard.press("9")
    assert page.evaluate("document.activeElement.id") == "panel-agreement"
    with page.expect_download() as download:
        page.keyboard.press("d")
    assert download.value.suggested_filename == f"{world.project.slug}-agreement-2026-03-02-2026-03-31.csv"
    assert "0.444" in Path(download.value.path()).read_text()

    page.keyboard.press("4")
    assert page.evaluate("document.activeElement.id") == "panel-flags-author"
    with page.expect_download() as download:
        page.keyboard.press("d")
    assert download.value.suggested_filename.startswith(f"{world.project.slug}-flags-author-")

    # "?" lists the panel keys among the page's shortcuts.
    page.keyboard.press("?")
    help_text = page.inner_text("#shortcut-help")
    assert "Jump to Agreement" in help_text and "Refresh" not in help_text  # a custom range has nothing to refresh
