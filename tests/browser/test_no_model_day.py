"""Chromium on the stack `make run` starts (SQLite, its own worker), with no model endpoint at all.

In the demo project (the judge is on there, as by default, and has nowhere to send a call) the
annotator writes a QA chain by hand on a clip that has none and submits it; the chain reaches the
examiner marked "not scored", who passes it; the admin cuts a release from the browser and the chain
is in the release's files.
"""

from __future__ import annotations

import io
import re
import zipfile
from urllib.parse import urljoin

import pytest
from playwright.sync_api import expect

from demo.storyboard import DEMO_LOGINS, PROJECT_SLUG
from tests.browser.test_chain_by_hand import TURNS
from tests.browser.test_team_day_one import stack  # noqa: F401 - the fixture: the `make run` stack
from tests.demo.test_run_script import _descendants

pytestmark = [pytest.mark.browser]

PASSWORDS = {username: password for username, password, _role in DEMO_LOGINS}


def _signed_in(browser, base: str, username: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORDS[username])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    return context, page


def test_a_chain_written_by_hand_goes_to_release_with_no_model(stack, browser):  # noqa: F811
    base = stack.base_url
    project = f"{base}/p/{PROJECT_SLUG}"
    admin_context, admin = _signed_in(browser, base, "admin")

    # The annotator writes a chain on the first clip without one, from scratch, by keyboard, and submits it.
    annotator_context, annotator = _signed_in(browser, base, "annotator")
    annotator.goto(f"{project}/")
    annotator.keyboard.press("w")
    annotator.wait_for_url(f"{project}/work/")
    expect(annotator.locator("#free-clips-h")).to_contain_text("clips have no QA chain yet")
    annotator.keyboard.press("c")
    annotator.wait_for_url(re.compile(rf"{re.escape(project)}/chains/\d+/$"))
    chain_id = int(annotator.url.rstrip("/").rsplit("/", 1)[1])
    annotator.wait_for_function("() => window.VidQA && VidQA.chainEditor")
    expect(annotator.locator("#turns-empty")).to_be_visible()
    for question, answer, skill in TURNS:
        annotator.keyboard.press("a")
        annotator.keyboard.type(question)
        annotator.keyboard.press("Tab")
        annotator.keyboard.type(answer)
        annotator.keyboard.press("Escape")
        annotator.keyboard.press(skill)
    annotator.wait_for_function(
        "() => !VidQA.chainEditor.doc.dirty && document.getElementById('save-status').dataset.state === 'saved'",
        timeout=10_000,
    )
    expect(annotator.locator("#chain-warnings li")).to_have_count(0)
    annotator.keyboard.press("Control+Enter")
    # No endpoint: the project's policy sends the chain on to the examiners, unscored, instead of waiting.
    expect(annotator.locator("#chain-message")).to_contain_text("Press n for the next item")
    expect(annotator.locator("#chain-status")).to_have_text(re.compile("Examining|Scored|Submitted"))
    annotator.reload()
    expect(annotator.locator("#chain-status")).to_have_text("Examining")
    annotator_context.close()

    # The examiner pulls from the demo's chain queue, oldest first: the demo's own waiting chain comes
    # first (passed on the way), then the hand-written one, marked "not scored" with the reason.
    examiner_context, examiner = _signed_in(browser, base, "examiner")
    examiner.goto(f"{project}/examine/")
    mine = f"{project}/examine/qa_chain/{chain_id}/"
    for _ in range(6):
        examiner.keyboard.press("n")
        examiner.wait_for_url(re.compile(rf"{re.escape(project)}/examine/\w+/\d+/$"))
        if examiner.url == mine:
            break
        expect(examiner.locator(".not-scored-note")).to_have_count(0)  # the demo's chains were scored
        examiner.evaluate("() => document.activeElement && document.activeElement.blur()")
        examiner.keyboard.press("p")
        examiner.wait_for_url(f"{project}/examine/")
        expect(examiner.locator(".messages")).to_contain_text("Passed: the item is accepted.")
    else:
        pytest.fail(f"the hand-written chain never came up in the examiner's queue; last page {examiner.url}")
    note = examiner.locator(".not-scored-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text(re.compile("not scored", re.IGNORECASE))
    expect(note).to_contain_text("endpoint")
    expect(examiner.locator("#turns, .chain-turns, main")).to_contain_text(TURNS[0][0])
    examiner.evaluate("() => document.activeElement && document.activeElement.blur()")
    examiner.keyboard.press("p")
    examiner.wait_for_url(f"{project}/examine/")
    expect(examiner.locator(".messages")).to_contain_text("Passed: the item is accepted.")
    examiner_context.close()

    # The admin cuts a release from the browser; the worker builds it; the chain is in its files.
    admin.goto(f"{project}/")
    admin.keyboard.press("e")
    admin.wait_for_url(f"{project}/releases/")
    admin.keyboard.press("n")
    admin.wait_for_url(f"{project}/releases/new/")
    admin.keyboard.press("v")
    admin.keyboard.type("no-model-1")
    admin.press("#id_version", "Control+Enter")
    admin.wait_for_url(re.compile(rf"{re.escape(project)}/releases/\d+/$"))
    download = admin.get_by_role("link", name=re.compile("Download zip"))
    expect(download).to_be_visible(timeout=120_000)
    response = admin.request.get(urljoin(admin.url, download.get_attribute("href")))
    assert response.ok, response.status
    with zipfile.ZipFile(io.BytesIO(response.body())) as archive:
        texts = {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist()}
    holding = [name for name, text in texts.items() if TURNS[0][0] in text]
    assert holding, f"the hand-written chain is in none of the release's files: {sorted(texts)}"
    # Every turn the annotator typed, question and answer, in the same file.
    assert any(all(q in texts[name] and a in texts[name] for q, a, _ in TURNS) for name in holding), holding
    print("release files holding the chain:", holding)
    admin_context.close()
    assert _descendants(stack.proc.pid), "the make run stack stopped during the test"
