"""Headless Chromium: a person logs in and lands on the project page."""

import pytest

from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_and_open_project(live_server, page):
    project = factories.ProjectFactory(name="Cooking streams", slug="cooking")
    people = factories.people_for(project)
    factories.MembershipFactory(project=factories.ProjectFactory(name="Second"), user=people["admin"], role="admin")

    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", people["admin"].username)
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    assert page.get_by_role("alert").inner_text().startswith("Your username and password didn't match")

    page.fill("input[name=username]", people["admin"].username)
    page.fill("input[name=password]", factories.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    assert page.get_by_role("heading", name="Your projects").is_visible()

    # The keyboard opens the first project (shortcut "1"); "?" lists the shortcuts.
    page.keyboard.press("?")
    assert page.locator("#shortcut-help").is_visible()
    assert "Open Cooking streams" in page.locator("#shortcut-help").inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press("1")
    page.wait_for_url(f"{live_server.url}/p/cooking/")
    assert page.get_by_role("heading", name="What to do next").is_visible()
    assert page.locator("h1").inner_text().startswith("Cooking streams")
