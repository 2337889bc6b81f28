"""Headless Chromium: a site administrator creates a LongVideoBench project and edits a taxonomy row."""

import pytest
from playwright.sync_api import expect

from projects.models import Membership, Project, ProjectKind, Role
from tests import factories

from .helpers import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_admin_creates_a_longvideobench_project_and_edits_a_taxonomy(live_server, page):
    admin = factories.UserFactory(username="siteadmin", is_staff=True)
    login(page, live_server, admin)
    assert page.get_by_text("No project yet").is_visible()

    page.keyboard.press("n")  # the list's "New project" shortcut
    page.wait_for_url(f"{live_server.url}/new/")
    page.fill("input[name=name]", "Long video QA")
    page.get_by_label("LongVideoBench: referring MCQs").check()
    page.get_by_role("button", name="Create the project").click()
    page.wait_for_url(f"{live_server.url}/p/long-video-qa/settings/")
    assert "Long video QA is ready" in page.get_by_role("status").inner_text()

    project = Project.objects.get(slug="long-video-qa")
    assert project.kind == ProjectKind.LONGVIDEOBENCH and project.min_height_px == 720
    assert Membership.objects.filter(project=project, user=admin, role=Role.ADMIN).exists()
    assert page.locator("input[name=min_height_px]").input_value() == "720"

    box = page.locator("details[data-formset=tax-question_categories]")
    box.locator("summary").click()
    box.locator("input[name=tax-question_categories-0-label]").fill("scene-referred event (edited)")
    box.get_by_role("button", name="Add a row").click()
    # Nothing scrolls sideways at 1280 px, taxonomy rows open.
    page.set_viewport_size({"width": 1280, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    rows = box.locator("tbody tr")
    new_row = rows.nth(rows.count() - 1)
    new_row.locator("input[name$=-code]").fill("XYZ")
    new_row.locator("input[name$=-label]").fill("a category of our own")
    page.get_by_role("button", name="Save settings").click()
    page.wait_for_url(f"{live_server.url}/p/long-video-qa/settings/")
    assert "Settings saved" in page.get_by_role("status").inner_text()

    project.refresh_from_db()
    categories = project.taxonomies["question_categories"]
    assert categories[0] == {"code": "S2E", "level": "L1-Perception", "name": "scene-referred event (edited)"}
    assert categories[-1] == {"code": "XYZ", "name": "a category of our own"}

    # A duplicate code is refused row by row, and nothing changes.
    box = page.locator("details[data-formset=tax-question_categories]")
    box.locator("summary").click()
    box.locator("input[name=tax-question_categories-1-code]").fill("S2E")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("The code S2E is used twice.")).to_be_visible()
    project.refresh_from_db()
    assert project.taxonomies["question_categories"][1]["code"] == "S2O"
