"""A project runs end to end with no model, in Chromium, on the stack `make run` starts (SQLite, its own
worker, no model endpoint anywhere):

an annotator writes a QA chain by hand on a clip that has none and submits it; the judge is on but
cannot run, so the chain goes on to examining marked "not scored" with the reason; an examiner
passes it; the admin cuts an SVBench release and the chain is in its Dialogue file.
"""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from playwright.sync_api import expect

from scripts.loopback_services import free_port
from tests.demo.test_run_script import RunScript, _descendants

pytestmark = [pytest.mark.browser]

PASSWORDS = {"admin": "demo-admin", "annotator": "demo-annotator", "examiner": "demo-examiner"}
TURNS = [
    ("What vegetable fills the picture?", "A romanesco.", "1"),
    ("What shape is its surface?", "Spirals of small cones.", "1"),
    ("Why does it look like that?", "Its buds grow in a repeating pattern.", "3"),
    ("Is it the same as broccoli?", "No, it is a related variety.", "2"),
    ("What could it be cooked in?", "A pasta dish, as in the stream.", "3"),
]


@pytest.fixture
def stack(tmp_path):
    run = RunScript(port=free_port(), var_dir=tmp_path / "var")
    try:
        run.wait_for("Press Ctrl-C")
        yield run
    finally:
        run.remember_processes()
        run.kill_everything()


def _login(browser, base: str, username: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORDS[username])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    return context, page


def test_a_chain_written_by_hand_is_examined_unscored_and_released_with_no_model(stack, browser):
    base = stack.base_url

    # The annotator: the work list offers clips with no chain; c writes one on the first.
    context, page = _login(browser, base, "annotator")
    page.goto(f"{base}/p/demo/work/")
    page.wait_for_load_state("networkidle")
    expect(page.locator("#free-clips-h")).to_contain_text("clips have no QA chain yet")
    page.keyboard.press("c")
    page.wait_for_url(re.compile(r".*/p/demo/chains/\d+/$"))
    chain_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    page.wait_for_function("() => window.VidQA && VidQA.chainEditor")
    for question, answer, skill in TURNS:
        page.keyboard.press("a")
        page.keyboard.type(question)
        page.keyboard.press("Tab")
        page.keyboard.type(answer)
        page.keyboard.press("Escape")
        page.keyboard.press(skill)
    page.wait_for_function(
        "() => !VidQA.chainEditor.doc.dirty && document.getElementById('save-status').dataset.state === 'saved'"
    )
    page.keyboard.press("Control+Enter")
    if page.locator("dialog#submit-confirm").is_visible():
        page.keyboard.press("Enter")
    # The editor stays on the submitted chain; the judge cannot run, so the chain moves on unscored.
    expect(page.locator("#chain-message")).to_contain_text("Press n for the next item")
    page.reload()
    expect(page.get_by_text("Examining", exact=True).first).to_be_visible()
    context.close()

    # The examiner sees why no judge scored it, and passes it.
    context, page = _login(browser, base, "examiner")
    page.goto(f"{base}/p/demo/examine/qa_chain/{chain_id}/")
    expect(page.get_by_text("Not scored by the judge: no model endpoint")).to_be_visible()
    expect(page.locator("main")).to_contain_text(TURNS[0][0])
    page.wait_for_load_state("networkidle")
    page.keyboard.press("p")
    page.wait_for_url(f"{base}/p/demo/examine/")
    expect(page.locator(".messages")).to_contain_text("accepted")
    context.close()

    # The admin cuts an SVBench release of the accepted work; the worker builds it.
    context, page = _login(browser, base, "admin")
    page.goto(f"{base}/p/demo/releases/new/")
    page.wait_for_load_state("networkidle")
    page.fill("#id_version", "no-model-v1")
    for box in page.locator("input[name=formats]").all():
        box.uncheck()
    page.check("input[name=formats][value=svbench]")
    page.press("#id_version", "Control+Enter")
    page.wait_for_url(re.compile(r".*/p/demo/releases/\d+/$"))
    page.wait_for_selector("text=Download zip", timeout=120_000)
    href = page.get_by_role("link", name="Download zip").get_attribute("href")
    archive = zipfile.ZipFile(io.BytesIO(page.request.get(f"{base}{href}").body()))
    dialogue = next(n for n in archive.namelist() if n.endswith("svbench/Dialogue/romanesco_reference.json"))
    chains = json.loads(archive.read(dialogue))
    released = [element["chain"]["questions"] for element in chains]
    assert [q for q, _a, _s in TURNS] in released
    context.close()
    assert _descendants(stack.proc.pid), "the make run stack stopped during the test"
