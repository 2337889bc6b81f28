"""A team's first day, in Chromium, on the stack `make run` starts (SQLite, its own worker), with the fake
OpenAI-compatible server as the model endpoint:

an admin creates a LongVideoBench project from its preset, sets the model endpoint and tests it,
invites an annotator by link; the annotator signs up through the link, switches the interface to
Chinese and finds their work.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from scripts.loopback_services import free_port
from tests.demo.test_run_script import RunScript, _descendants
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.browser]

ADMIN = ("admin", "demo-admin")  # the demo's admin, printed by `make run`


@pytest.fixture
def stack(tmp_path):
    run = RunScript(port=free_port(), var_dir=tmp_path / "var")
    try:
        run.wait_for("Press Ctrl-C")
        yield run
    finally:
        run.remember_processes()
        run.kill_everything()


@pytest.fixture
def model_server():
    server = FakeOpenAIServer().start()
    yield server
    server.stop()


def test_a_team_starts_a_project_from_the_browser_alone(stack, model_server, browser):
    base = stack.base_url
    admin_context = browser.new_context(viewport={"width": 1280, "height": 900})
    admin_context.set_default_timeout(20_000)
    page = admin_context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", ADMIN[0])
    page.fill("input[name=password]", ADMIN[1])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)

    # A new LongVideoBench project from its preset.
    page.goto(f"{base}/")
    page.keyboard.press("n")
    page.wait_for_url(f"{base}/new/")
    page.fill("input[name=name]", "Long video QA")
    page.get_by_label("LongVideoBench: referring MCQs").check()
    page.get_by_role("button", name="Create the project").click()
    page.wait_for_url(f"{base}/p/long-video-qa/settings/")
    assert page.locator("input[name=min_height_px]").input_value() == "720"

    # Its model endpoint: the fake server, saved, then tested with one small call.
    page.keyboard.press("m")
    page.wait_for_url(f"{base}/p/long-video-qa/settings/model-endpoint/")
    page.fill("input[name=base_url]", model_server.base_url)
    page.fill("input[name=new_key]", "sk-team-key")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(f"{base}/p/long-video-qa/settings/model-endpoint/")
    assert "sk-team-key" not in page.content()  # the key is never sent back
    page.get_by_role("button", name="Test connection").click()
    expect(page.locator("#connection-report")).to_contain_text("Connected")
    calls = model_server.requests(endpoint="chat")
    headers = {k.lower(): v for k, v in calls[-1].headers.items()} if calls else {}
    assert headers.get("authorization") == "Bearer sk-team-key"  # the key stays on the server, and is used

    # An annotator invited by link.
    page.goto(f"{base}/p/long-video-qa/")
    page.keyboard.press("m")
    page.wait_for_url(f"{base}/p/long-video-qa/people/")
    page.locator("#invite-form button[type=submit]").click()
    link = page.locator("input.invitation-link").first
    expect(link).to_be_visible()
    url = link.input_value()
    assert url.startswith(f"{base}/join/")
    admin_context.close()

    # The annotator, in a browser of their own: signs up, switches to Chinese, finds their work.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(20_000)
    newcomer = context.new_page()
    try:
        newcomer.goto(url)
        newcomer.fill("input[name=username]", "mei")
        newcomer.fill("input[name=name]", "Mei Lin")
        newcomer.fill("input[name=email]", "mei@example.org")
        newcomer.fill("input[name=password1]", "Xq-7-lantern")
        newcomer.fill("input[name=password2]", "Xq-7-lantern")
        newcomer.keyboard.press("Enter")
        newcomer.wait_for_url(f"{base}/p/long-video-qa/")
        expect(newcomer.get_by_text("Your roles: annotator")).to_be_visible()

        newcomer.get_by_label("Language").select_option("zh-hans")
        newcomer.get_by_role("button", name="Switch language").click()
        newcomer.wait_for_url(f"{base}/p/long-video-qa/")
        expect(newcomer.get_by_role("heading", name="下一步做什么")).to_be_visible()
        assert newcomer.locator("html").get_attribute("lang") == "zh-hans"

        newcomer.keyboard.press("w")  # their work list
        newcomer.wait_for_url(f"{base}/p/long-video-qa/work/")
        assert newcomer.locator("html").get_attribute("lang") == "zh-hans"
        assert newcomer.evaluate("document.documentElement.scrollWidth") <= 1280
    finally:
        context.close()
    assert _descendants(stack.proc.pid), "the make run stack stopped during the test"
