"""Evaluation in Chromium, on the real worker with the fake model: an admin starts two runs from the
leaderboard, watches the first one's progress, reads the leaderboard and compares the two runs."""

import pytest
from playwright.sync_api import expect

from evaluations.models import EvaluationRun, RunStatus
from tests.browser.helpers import login
from tests.evaluations.world import build_release, responder

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _start(page, base, release, model: str) -> EvaluationRun:
    page.goto(f"{base}/evaluations/")
    page.keyboard.press("n")  # focuses the model field of a new run
    page.keyboard.type(model)
    page.select_option("select[name=release]", str(release.pk))
    page.fill("input[name=frames]", "2")
    page.click("button:has-text('Start the run')")
    page.wait_for_url(lambda url: "/evaluations/" in url and url.rstrip("/").split("/")[-1].isdigit())
    return EvaluationRun.objects.get(model=model)


def test_start_watch_leaderboard_and_compare(
    live_server, page, settings, celery_worker_process, fake_openai_shared, tmp_path
):
    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]  # the worker samples the release's videos
    fake_openai_shared.set_default(responder)
    release = build_release(tmp_path, settings)
    project = release.project
    base = f"{live_server.url}/p/{project.slug}"
    login(page, live_server, release.admin)

    a = _start(page, base, release, "model-a")
    expect(page.locator(".job")).to_contain_text("Succeeded", timeout=60_000)  # the progress box follows the job
    page.reload()
    a.refresh_from_db()
    assert a.status == RunStatus.FINISHED, a.summary
    expect(page.locator("h1")).to_contain_text("Finished")
    expect(page.locator("main")).to_contain_text("clustered over 2 videos")
    page.screenshot(path=str(tmp_path / "1-run.png"), full_page=True)

    b = _start(page, base, release, "model-b")
    expect(page.locator(".job")).to_contain_text("Succeeded", timeout=60_000)

    page.keyboard.press("l")  # back to the leaderboard
    page.wait_for_url(f"{base}/evaluations/")
    rows = page.locator("#board-h + svg, table.rows tbody tr")
    expect(page.locator("table.rows tbody tr")).to_have_count(2)
    expect(page.locator("table.rows tbody tr").first).to_contain_text("model-a")
    page.screenshot(path=str(tmp_path / "2-leaderboard.png"), full_page=True)
    assert rows.count() >= 2

    page.select_option("select[name=a]", str(a.pk))
    page.select_option("select[name=b]", str(b.pk))
    page.click("button:has-text('Compare')")
    expect(page.locator("main")).to_contain_text("McNemar")
    expect(page.locator("main")).to_contain_text("1 questions only A got right, 1 only B")
    page.screenshot(path=str(tmp_path / "3-compare.png"), full_page=True)
