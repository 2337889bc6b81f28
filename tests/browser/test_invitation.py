"""Headless Chromium: an admin makes an invitation link; a new person signs up through it elsewhere."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from projects.models import Membership
from tests import factories
from tests.browser.helpers import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_admin_invites_and_a_new_person_signs_up_with_the_role(live_server, page, browser):
    project = factories.ProjectFactory(name="Cooking streams", slug="cooking")
    admin = factories.UserFactory(username="chef-admin")
    factories.MembershipFactory(project=project, user=admin, role="admin")

    login(page, live_server, admin)
    page.goto(f"{live_server.url}/p/cooking/")
    page.keyboard.press("m")  # the People page
    page.wait_for_url(f"{live_server.url}/p/cooking/people/")
    form = page.locator("#invite-form")
    form.locator("input[name=roles][value=annotator]").uncheck()
    form.locator("input[name=roles][value=examiner]").check()
    form.locator("button[type=submit]").click()
    link = page.locator("input.invitation-link").first
    expect(link).to_be_visible()
    url = link.input_value()
    page.set_viewport_size({"width": 1280, "height": 900})
    assert no_sideways_scroll(page)
    assert url.startswith(f"{live_server.url}/join/")

    # The newcomer, in a browser of their own.
    other_context = browser.new_context(viewport={"width": 1280, "height": 900})
    other_context.set_default_timeout(15_000)
    newcomer = other_context.new_page()
    try:
        newcomer.goto(url)
        expect(newcomer.get_by_role("heading", name="Join Cooking streams")).to_be_visible()
        assert no_sideways_scroll(newcomer)
        newcomer.fill("input[name=username]", "mei")
        newcomer.fill("input[name=name]", "Mei Lin")
        newcomer.fill("input[name=email]", "mei@example.org")
        newcomer.fill("input[name=password1]", "Xq-7-lantern")
        newcomer.fill("input[name=password2]", "Xq-7-lantern")
        newcomer.keyboard.press("Enter")  # submits the sign-up form from its last field
        newcomer.wait_for_url(f"{live_server.url}/p/cooking/")
        expect(newcomer.locator("h1")).to_contain_text("Cooking streams")
        expect(newcomer.get_by_text("Your roles: examiner")).to_be_visible()

        # The link is used up: following it again says so plainly.
        newcomer.goto(url)
        expect(newcomer.get_by_text("already been used")).to_be_visible()
    finally:
        other_context.close()

    mei = get_user_model().objects.get(username="mei")
    assert list(Membership.objects.filter(project=project, user=mei).values_list("role", flat=True)) == ["examiner"]
    # The admin's page now lists the new member.
    page.reload()
    expect(page.locator(f"#member-{mei.pk}")).to_contain_text("mei")
