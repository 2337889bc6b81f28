"""Headless Chromium at 1280×800 over every page, as every role that may see it: nothing scrolls sideways.

The pages come from the permission matrix as in test_csp.py, so a page added later is measured as soon
as it has its row there. A wide table scrolls inside its card (`.table-scroll`, or a card that scrolls
itself), never the whole page.
"""

import pytest
from django.urls import reverse

from tests.browser.helpers import login
from tests.browser.test_csp import _is_html, _member_pages
from tests.permission_matrix.world import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH = 1280
# The widest element that sticks out of the page, to say where a page went too wide.
CULPRIT = """(width) => {
  let worst = null;
  for (const el of document.body.querySelectorAll("*")) {
    const right = el.getBoundingClientRect().right;
    if (right > width && (!worst || right > worst.right)) {
      worst = {right, tag: el.tagName.toLowerCase(), id: el.id, cls: el.className && String(el.className)};
    }
  }
  return worst ? `${worst.tag}#${worst.id}.${worst.cls} ends at ${Math.round(worst.right)}px` : "";
}"""


def _too_wide(page, url: str) -> str | None:
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status == 200, f"{url}: {response and response.status}"
    width = page.evaluate("document.documentElement.scrollWidth")
    if width <= WIDTH:
        return None
    return f"{url}: {width}px wide; {page.evaluate(CULPRIT, WIDTH)}"


def test_no_page_scrolls_sideways_at_1280_px(page, live_server):
    page.set_viewport_size({"width": WIDTH, "height": 800})
    world = build_world()
    too_wide: list[str] = []
    measured = 0
    html: dict[str, bool] = {}
    for role, urls in _member_pages(world).items():
        login(page, live_server, world.users[role])
        for path in [*urls, reverse("password_change")]:
            url = live_server.url + path
            if path not in html:
                html[path] = _is_html(page, url)
            if html[path]:
                measured += 1
                if found := _too_wide(page, url):
                    too_wide.append(f"{role} {found}")
    assert measured > 60, f"only {measured} pages measured: is the matrix read right?"
    assert not too_wide, "Pages wider than 1280 px:\n" + "\n".join(too_wide)
