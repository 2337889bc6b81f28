"""What every browser test does the same way."""

from tests import factories


def login(page, live_server, user) -> None:
    """Log `user` in through the real login form (any earlier session in this page's context goes first)."""
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", factories.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
