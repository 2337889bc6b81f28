"""Headless Chromium on the dashboards: number keys jump to a panel, d downloads that panel's CSV."""

import os
from pathlib import Path

import pytest

from tests import factories
from tests.reviewer.test_dashboards import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login(page, live_server, user):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", factories.PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def test_keys_jump_to_panels_and_download_their_csv(page, live_server):
    world = build_world()
    admin = factories.people_for(world.project)["admin"]
    login(page, live_server, admin)
    page.goto(f"{live_server.url}/p/{world.project.slug}/")
    page.keyboard.press("b")  # the project home's link to the dashboards
    page.wait_for_url(f"**/p/{world.project.slug}/dashboard/")
    page.goto(f"{live_server.url}/p/{world.project.slug}/dashboard/?from=2026-03-02&to=2026-03-31")
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
    assert "Jump to Agreement" in page.inner_text("#shortcut-help")
