"""Headless Chromium over every page, as every role that may see it: no Content-Security-Policy violation.

The pages come from the permission matrix (tests/test_permission_matrix.py), so a page added later
is visited here as soon as it has its row there: each GET route that is not the API and that some
member of project P may open (200) is loaded as each such member, over the matrix's world. Pages
outside the matrix (login, password, API docs, Django admin) are listed below.

A violation is caught three ways: the page's `securitypolicyviolation` events (an init script
listens before any page script runs), Chromium's "Refused to …" console messages, and any report
posted to the policy's report-uri. On each page "?" opens the shortcut list (the page's scripts ran
and the deferred modules attached their handlers) and Escape closes it.
"""

import pytest
from django.conf import settings
from django.urls import reverse

from tests import factories
from tests.browser.helpers import login
from tests.permission_matrix.routes import walk
from tests.permission_matrix.world import build_world
from tests.test_permission_matrix import MATRIX, MEMBERS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(
    `${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber} ${e.sample}`
  );
});
"""
# An inline handler breaks the policy only when its event fires, so the page's markup is read too:
# no on*= attribute, no javascript: URL, no <script> with code in it (json_script's data is fine).
INLINE_CODE = """() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      const tag = `<${el.tagName.toLowerCase()} ${attr.name}="${attr.value.slice(0, 60)}">`;
      if (attr.name.startsWith("on")) found.push("inline handler " + tag);
      if (/^\\s*javascript:/i.test(attr.value)) found.push("javascript: URL " + tag);
    }
  }
  for (const script of document.querySelectorAll("script:not([src])")) {
    if (script.type !== "application/json") found.push("inline <script> " + script.textContent.slice(0, 60));
  }
  return found;
}"""

# ReDoc's sidebar shows its maker's logo from a CDN, which no setting turns off; the policy blocks it
# (the page loads nothing from outside), ReDoc then leaves the image out, and that one refusal is expected.
EXPECTED_REFUSALS = ("https://cdn.redoc.ly/redoc/logo-mini.svg",)


def _unexpected(found: list[str]) -> list[str]:
    return [v for v in found if not any(url in v for url in EXPECTED_REFUSALS)]


def _member_pages(world) -> dict[str, list[str]]:
    """role → the URLs of the pages (GET, not the API, answered 200) that role may open, from MATRIX."""
    routes = {route.name: route for route in walk()}
    pages: dict[str, list[str]] = {role: [] for role in MEMBERS}
    for case in MATRIX:
        if case.method != "GET" or case.api or case.path or case.ok != 200:
            continue
        url = case.url(world.p, routes[case.route].kwargs)
        for role in MEMBERS:
            if case.expected(role) == 200:
                pages[role].append(url)
    return pages


class Watch:
    """What broke the policy on the current page: events, console messages, reports."""

    def __init__(self, page):
        self.page = page
        self.messages: list[str] = []
        self.reports: list[str] = []
        page.context.add_init_script(LISTEN)
        page.on("console", self._console)
        page.on("request", self._request)

    def _console(self, message):
        if "Content Security Policy" in message.text or message.text.startswith("Refused to"):
            self.messages.append(message.text)

    def _request(self, request):
        if request.url.endswith(settings.CSP_REPORT_PATH):
            self.reports.append(request.post_data or "")

    def visit(self, url: str, *, keys: bool = True) -> list[str]:
        """Loads `url` (an HTML page) and returns what broke the policy there."""
        self.messages.clear()
        self.reports.clear()
        response = self.page.goto(url, wait_until="load")
        assert response is not None and response.status == 200, f"{url}: {response and response.status}"
        assert response.headers.get("content-security-policy"), f"{url} came without a Content-Security-Policy"
        if keys and self.page.locator("#shortcut-help").count():
            self.page.locator("body").click(position={"x": 1, "y": 1})  # out of any autofocused field
            self.page.keyboard.press("?")
            self.page.wait_for_selector("#shortcut-help[open]", timeout=3_000)
            self.page.keyboard.press("Escape")
        # Reports are posted after the page's tasks; let them arrive.
        self.page.wait_for_timeout(50)
        found = self.page.evaluate("window.__cspViolations || []") + self.messages + self.reports
        found += self.page.evaluate(INLINE_CODE)
        return [f"{url}: {v}" for v in _unexpected(found)]


def _is_html(page, url: str) -> bool:
    # Downloads (CSV, zip, tar), media bytes and JSON are no pages; the same session's cookies ask first.
    response = page.request.get(url, max_redirects=0)
    return response.status == 200 and response.headers.get("content-type", "").startswith("text/html")


def test_every_page_runs_under_the_policy_for_every_role(page, live_server):
    world = build_world()
    watch = Watch(page)
    violations: list[str] = []
    visited = 0

    # Signed out: the login page and the API docs (public by design).
    for path in ("/accounts/login/", reverse("api:docs"), reverse("api:redoc")):
        violations += watch.visit(live_server.url + path, keys=path == "/accounts/login/")
        visited += 1
    # The docs draw themselves from script: they ran if the operations show.
    page.goto(live_server.url + reverse("api:docs"))
    page.wait_for_selector(".opblock", timeout=15_000)
    page.goto(live_server.url + reverse("api:redoc"))
    page.wait_for_selector("[data-section-id]", timeout=15_000)
    violations += _unexpected(watch.messages + watch.reports + page.evaluate("window.__cspViolations"))

    html: dict[str, bool] = {}
    for role, urls in _member_pages(world).items():
        login(page, live_server, world.users[role])
        for path in [*urls, reverse("password_change"), reverse("password_change_done")]:
            url = live_server.url + path
            if path not in html:
                html[path] = _is_html(page, url)
            if html[path]:
                violations += watch.visit(url)
                visited += 1

    # Django's admin, as a superuser.
    root = factories.UserFactory(username="root", is_staff=True, is_superuser=True)
    login(page, live_server, root)
    for path in (
        reverse("admin:index"),
        reverse("admin:projects_project_changelist"),
        reverse("admin:projects_project_change", args=[world.p.project.pk]),
    ):
        violations += watch.visit(live_server.url + path, keys=False)
        visited += 1

    assert visited > 60, f"only {visited} pages visited: is the matrix read right?"
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)
