"""The whole review loop in Chromium, three people and the real worker with the LLM judge on the fake server.

annotator submits → the judge scores below the threshold → back to the annotator, who reads why →
resubmit → the judge passes it → the examiner flags it with a reason → the reviser reads the reason,
fixes it and resubmits → the judge passes it again → the examiner passes it → accepted; the history
page shows every step.
"""

import time

import pytest
from playwright.sync_api import expect

from annotator.lifecycle import item_history
from annotator.models import ItemStatus, QAChain, QAPair
from jobs.models import BackgroundJob
from projects.taxonomies import CHAIN_JUDGE_DIMENSIONS
from reviewer.models import QualityScore
from tests import factories
from tests.browser.helpers import login, playable_video
from tests.fakes.openai_server import Reply
from videos.models import Clip
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

S = ItemStatus
JUDGE = "vidqa:judge:"  # the user tag of every judge request
LOW = "Turn 2 repeats the chef's name; use 'she'."
TURNS = [
    ("What is on the screen when Mara starts?", "A test card with colour stripes."),
    ("Why is Mara still showing the card?", "The camera is warming up."),
    ("What does she say she will cook?", "Romanesco pasta."),
]


def judged(overall: int, comments: str) -> Reply:
    scores = dict.fromkeys(CHAIN_JUDGE_DIMENSIONS, overall)
    return Reply.json({"scores": scores, "overall": overall, "comments": comments})


def wait_status(chain: QAChain, status: str, timeout: float = 120) -> None:
    """The worker moves the item; the browser does not see that until it asks, so ask the database."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chain.refresh_from_db()
        if chain.status == status:
            return
        time.sleep(0.2)
    jobs = [
        (j.kind, j.status, j.message, j.error[:300])
        for j in BackgroundJob.objects.filter(target_id=chain.pk).order_by("pk")
    ]
    events = [(e.from_status, e.to_status) for e in item_history(item=chain)]
    raise AssertionError(
        f"the chain is {chain.status} (v{chain.version}), not {status}, after {timeout} s; jobs: {jobs}; "
        f"events: {events}"
    )



def wait_editor(page) -> None:
    page.wait_for_function(
        "() => window.VidQA && VidQA.player && VidQA.chainEditor && VidQA.player.video.readyState >= 1"
    )
    expect(page.locator("#turns > li.turn").first).to_be_visible()


def wait_settled(page) -> None:
    """Every local change is saved: nothing pending, nothing on its way (a submit sends that version)."""
    page.wait_for_function(
        "() => !VidQA.chainEditor.doc.dirty && document.getElementById('save-status').dataset.state === 'saved'",
        timeout=15_000,
    )


def submit_chain(page) -> None:
    """Ctrl+Enter; the turns carry no skill, so the editor asks once: Enter confirms. It stays on the chain."""
    page.keyboard.press("Control+Enter")
    expect(page.locator("dialog#submit-confirm")).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("#chain-message")).to_contain_text("Press n for the next item")


def edit_question(page, turn: int, text: str) -> None:
    """Keyboard only: focus the turn (j), edit its question (Enter), leave the field (Escape)."""
    page.locator("#turns > li.turn").nth(0).focus()
    for _ in range(turn):
        page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+a")
    page.keyboard.type(text)
    page.keyboard.press("Escape")
    expect(page.locator("#turns > li.turn").nth(turn).locator(".turn-q")).to_have_value(text)
    wait_settled(page)


@pytest.fixture
def world(settings, celery_worker_process, tmp_path):
    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]  # the worker samples the clip's frames
    source = tmp_path / "generated" / "kitchen.mp4"
    source.parent.mkdir()
    make_scene_video(source, [SceneSpec(3.0), SceneSpec(3.0)], width=320, height=180, fps=25)
    project = factories.ProjectFactory(name="Loop", slug="loop", judge_enabled=True, judge_threshold=90)
    people = factories.people_for(project)
    video = playable_video(project, source, tmp_path, durations=(3.0, 3.0), fps=25)
    clip = Clip.objects.create(video=video, index=0, start_s=0.0, end_s=3.5, scene_start_s=0.0, scene_end_s=3.0)
    chain = QAChain.objects.create(project=project, clip=clip, status=S.DRAFT)
    QAPair.objects.bulk_create(QAPair(chain=chain, index=i, question=q, answer=a) for i, (q, a) in enumerate(TURNS))
    return project, people, chain


def test_the_full_review_loop_by_three_people(live_server, page, world, fake_openai_shared):
    project, people, chain = world
    fake_openai_shared.script(
        JUDGE, [judged(72, LOW), judged(94, "Coherent now."), judged(96, "Fixed and coherent.")]
    )
    editor = f"{live_server.url}/p/{project.slug}/chains/{chain.pk}/"

    # 1. The annotator edits and submits (Ctrl+Enter); the judge gives 72 < 90: back to them.
    login(page, live_server, people["annotator"])
    page.goto(editor)
    wait_editor(page)
    edit_question(page, 0, "What is on the screen when the chef starts?")
    submit_chain(page)
    wait_status(chain, S.REVISING)
    assert chain.author == people["annotator"]

    # 2. The editor says why, with the judge's comments; the annotator fixes turn 2 and resubmits.
    page.goto(editor)
    wait_editor(page)
    expect(page.locator("#feedback")).to_contain_text(LOW)
    expect(page.locator("#feedback")).to_contain_text("72")
    edit_question(page, 1, "Why is she still showing the card?")
    submit_chain(page)
    wait_status(chain, S.SCORED)

    # 3. The examiner takes the next item (x, n) and flags it: 4 unticks "needs the video", c comments.
    login(page, live_server, people["examiner"])
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.keyboard.press("x")
    page.wait_for_url(f"**/p/{project.slug}/examine/")
    page.keyboard.press("n")
    page.wait_for_url(f"**/p/{project.slug}/examine/qa_chain/{chain.pk}/")
    page.keyboard.press("4")
    expect(page.locator("input[data-check='4']")).not_to_be_checked()
    page.keyboard.press("c")
    page.keyboard.type("Turn 3 can be answered from the menu card alone.")
    page.keyboard.press("Escape")
    page.keyboard.press("f")
    page.wait_for_url(f"**/p/{project.slug}/examine/")
    wait_status(chain, S.FLAGGED)

    # 4. The reviser reads the reason on the list, opens it (Enter), fixes turn 3 and resubmits.
    login(page, live_server, people["reviser"])
    page.goto(f"{live_server.url}/p/{project.slug}/revise/")
    row = page.locator(".revise-row").first
    expect(row).to_contain_text("Turn 3 can be answered from the menu card alone.")
    expect(row).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(editor)
    wait_editor(page)
    wait_status(chain, S.REVISING)
    expect(page.locator("#feedback")).to_contain_text("Turn 3 can be answered from the menu card alone.")
    edit_question(page, 2, "What does she hold up when she names the dish?")
    submit_chain(page)
    wait_status(chain, S.SCORED)

    # 5. The examiner passes it: accepted.
    login(page, live_server, people["examiner"])
    page.goto(f"{live_server.url}/p/{project.slug}/examine/")
    page.keyboard.press("n")
    page.wait_for_url(f"**/p/{project.slug}/examine/qa_chain/{chain.pk}/")
    page.keyboard.press("p")
    page.wait_for_url(f"**/p/{project.slug}/examine/")
    wait_status(chain, S.ACCEPTED)

    # Every step is logged, by the right person, and the history page shows them all.
    a, e, r = people["annotator"], people["examiner"], people["reviser"]
    steps = [(ev.from_status, ev.to_status, ev.actor) for ev in item_history(item=chain)]
    assert steps == [
        (S.DRAFT, S.ANNOTATING, a),
        (S.ANNOTATING, S.SUBMITTED, a),
        (S.SUBMITTED, S.REVISING, None),  # the judge: 72
        (S.REVISING, S.SUBMITTED, a),
        (S.SUBMITTED, S.SCORED, None),  # the judge: 94
        (S.SCORED, S.EXAMINING, e),
        (S.EXAMINING, S.FLAGGED, e),
        (S.FLAGGED, S.REVISING, r),
        (S.REVISING, S.SUBMITTED, r),
        (S.SUBMITTED, S.SCORED, None),  # the judge: 96
        (S.SCORED, S.EXAMINING, e),
        (S.EXAMINING, S.ACCEPTED, e),
    ]
    assert list(QualityScore.objects.filter(qa_chain=chain).order_by("pk").values_list("overall", "passed")) == [
        (72, False),
        (94, True),
        (96, True),
    ]
    assert [t.question for t in chain.pairs.order_by("index")] == [
        "What is on the screen when the chef starts?",
        "Why is she still showing the card?",
        "What does she hold up when she names the dish?",
    ]

    login(page, live_server, people["admin"])
    page.goto(f"{live_server.url}/p/{project.slug}/history/qa_chain/{chain.pk}/")
    events = page.locator("#events tbody tr")
    expect(events).to_have_count(len(steps))
    expect(events.nth(2)).to_contain_text("Revising")
    expect(events.nth(6)).to_contain_text("Flagged")
    expect(events.nth(11)).to_contain_text("Accepted")
    expect(page.locator("body")).to_contain_text(LOW)
