"""Headless Chromium keeps a lease alive from the chain editor (static/js/lease.js) and says when it lapsed."""

import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotator.models import ItemStatus, QAPair
from reviewer.models import Assignment, AssignmentStatus
from tests import factories
from tests.browser.helpers import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Generous: the page beats every 10 s (the shortest lease, 30 s, divided by three).
WAIT_S = 40


@pytest.fixture
def setup():
    project = factories.ProjectFactory(name="Kitchen", slug="kitchen")
    people = factories.people_for(project)
    chain = factories.QAChainFactory(
        clip__video__project=project, clip__index=0, status=ItemStatus.ANNOTATING, author=people["annotator"]
    )
    QAPair.objects.create(chain=chain, index=0, question="What is on screen?", answer="A test card.", skill="ECA")
    # The shortest lease a queue may have, so the page renews it every 10 s.
    queue = factories.ReviewQueueFactory(
        project=project, stage="annotating", item_kind="qa_chain", lease_seconds=30, members=[people["annotator"]]
    )
    now = timezone.now()
    lease = factories.AssignmentFactory(
        item=chain,
        queue=queue,
        stage="annotating",
        assignee=people["annotator"],
        leased_at=now,
        lease_expires_at=now + timedelta(seconds=30),
    )
    return project, people, chain, lease



def wait_for(check, what: str):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"waited {WAIT_S} s for {what}")


def heartbeat_after(lease, moment):
    def check():
        lease.refresh_from_db()
        return lease.heartbeat_at is not None and (moment is None or lease.heartbeat_at > moment) and lease.heartbeat_at

    return check


def test_the_editor_renews_its_lease_and_warns_when_it_lapsed(live_server, page, setup):
    project, people, chain, lease = setup
    login(page, live_server, people["annotator"])
    beats = []
    page.on("request", lambda r: beats.append(r.url) if r.url.endswith("/heartbeat/") else None)
    page.goto(f"{live_server.url}/p/{project.slug}/chains/{chain.pk}/")
    element = page.locator("[data-lease]")
    expect(element).to_have_attribute("data-state", "held")
    expect(element).to_have_text(re.compile(r"^Held for you until \d\d:\d\d\.$"))  # the page's local time
    assert page.evaluate("() => VidQA.lease.intervalSeconds(document.querySelector('[data-lease]'))") == 10

    # The periodic beat: the server's heartbeat_at moves on, and so does the expiry.
    first = wait_for(heartbeat_after(lease, None), "the first heartbeat")
    assert lease.lease_expires_at >= first + timedelta(seconds=29)
    # Coming back to the tab beats at once, before the next period.
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    wait_for(heartbeat_after(lease, first), "a heartbeat on visibility regain")
    expect(element).to_have_attribute("data-state", "held")

    # The lease lapsed and a sweep marked it expired: the page says so and keeps the text.
    page.locator(".turn-q").first.fill("What is on screen right now?")
    Assignment.objects.filter(pk=lease.pk).update(status=AssignmentStatus.EXPIRED)
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    expect(element).to_have_attribute("data-state", "lapsed")
    expect(element).to_contain_text("Your lease lapsed; your edits are still saved, but someone else may take this")
    expect(element.locator("a")).to_have_attribute("href", f"/p/{project.slug}/queues/")
    expect(page.locator(".turn-q").first).to_have_value("What is on screen right now?")
    expect(page.locator(".turn-q").first).to_be_enabled()
    # No more beats once it has lapsed: the page stops asking.
    sent = len(beats)
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    page.wait_for_timeout(500)
    assert len(beats) == sent
    # The edit above is saved in the background: let that request end before the test's database is
    # emptied, or the save's row lock and the flush's TRUNCATE deadlock.
    page.wait_for_function(
        "() => !VidQA.chainEditor.doc.dirty && document.getElementById('save-status').dataset.state === 'saved'"
    )
    page.goto("about:blank")
