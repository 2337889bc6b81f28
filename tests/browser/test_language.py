"""Headless Chromium: a person switches the interface to Chinese, and finds it so after logging in again."""

import pytest

from tests import factories
from tests.browser.helpers import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_switch_to_chinese_and_keep_it_after_logging_in_again(live_server, page):
    project = factories.ProjectFactory(name="Cooking streams", slug="cooking")
    annotator = factories.people_for(project)["annotator"]
    home = f"{live_server.url}/p/cooking/"

    login(page, live_server, annotator)
    page.goto(home)
    assert page.get_by_role("heading", name="What to do next").is_visible()

    page.get_by_label("Language").select_option("zh-hans")
    page.get_by_role("button", name="Switch language").click()
    page.wait_for_url(home)
    assert page.get_by_role("heading", name="下一步做什么").is_visible()
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert page.get_by_role("link", name="密码").is_visible()
    # The page modules speak Chinese too: the catalogue came in the person's language.
    assert page.evaluate("gettext('Saving…')") == "正在保存…"
    assert page.evaluate("interpolate(ngettext('%s link', '%s links', 3), [3])") == "3 个关联"

    page.get_by_role("button", name="退出登录").click()
    page.wait_for_url(lambda url: "/accounts/login" in url)
    # Another browser (no cookie left), sending English: the saved choice comes back at login.
    login(page, live_server, annotator)
    page.goto(home)
    assert page.get_by_role("heading", name="下一步做什么").is_visible()
    assert page.get_by_label("语言").input_value() == "zh-hans"

    # And back to English, for this person everywhere.
    page.get_by_label("语言").select_option("en")
    page.get_by_role("button", name="切换语言").click()
    page.wait_for_url(home)
    assert page.get_by_role("heading", name="What to do next").is_visible()
