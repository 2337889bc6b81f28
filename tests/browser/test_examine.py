"""Headless Chromium examines an MCQ and a QA chain, and a reviser takes the flag on: keyboard only."""


import pytest
from playwright.sync_api import expect

from annotator.lifecycle import item_history
from annotator.models import MCQ, ItemStatus, MCQVideo, QAChain, QAPair, ReferredMoment
from reviewer.models import ExamVerdict
from tests import factories
from tests.browser.helpers import login, playable_video
from videos.models import Clip
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FPS = 25
SCENES = (3.0, 4.0, 3.0)


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("examine") / "scenes.mp4"
    make_scene_video(path, [SceneSpec(d) for d in SCENES], width=320, height=180, fps=FPS)
    return path


@pytest.fixture
def setup(scene_file, tmp_path):
    from django.utils import timezone

    project = factories.ProjectFactory(name="Exam", slug="exam")
    people = factories.people_for(project)
    video = playable_video(project, scene_file, tmp_path, durations=SCENES, fps=FPS)
    now = timezone.now()
    mcq = MCQ.objects.create(
        project=project,
        status=ItemStatus.SCORED,
        author=people["annotator"],
        question="When the card turns blue, what shape appears?",
        referring_query="When the card turns blue",
        referring_start=0,
        referring_end=24,
        options=["A circle", "A square", "A star", "Nothing"],
        correct_index=1,
        category="E2O",
        submitted_at=now - timezone.timedelta(minutes=20),
    )
    MCQVideo.objects.create(mcq=mcq, video=video, order=0)
    ReferredMoment.objects.create(mcq=mcq, video=video, time_s=4.2, frame_index=105, order=0)
    clip = Clip.objects.create(video=video, index=0, start_s=0.0, end_s=3.5)
    chain = QAChain.objects.create(
        project=project,
        clip=clip,
        status=ItemStatus.SCORED,
        author=people["annotator"],
        submitted_at=now - timezone.timedelta(minutes=10),
    )
    QAPair.objects.create(chain=chain, index=0, question="What is on screen?", answer="A test card.")
    return project, people, mcq, chain



def test_examine_flag_and_pass_then_revise_by_keyboard(live_server, page, setup):
    project, people, mcq, chain = setup
    login(page, live_server, people["examiner"])
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.keyboard.press("x")
    page.wait_for_url(f"**/p/{project.slug}/examine/")
    page.keyboard.press("n")  # no queue: the oldest waiting item, the MCQ
    page.wait_for_url(f"**/p/{project.slug}/examine/mcq/{mcq.pk}/")
    page.wait_for_function("() => window.VidQA && VidQA.player && VidQA.player.video.readyState >= 1")
    expect(page.locator("mark.referring")).to_have_text("When the card turns blue")

    # The moment's button seeks the player.
    page.click("[data-seek]")
    page.wait_for_function("() => Math.abs(VidQA.player.currentTime - 4.2) < 0.05")

    # A flag needs an unticked check: f alone is stopped in the page, nothing posted.
    page.keyboard.press("f")
    expect(page.locator("#verdict-status")).to_contain_text("A flag needs a reason")
    assert not ExamVerdict.objects.exists()
    # 4 unticks "options plausible"; p is then refused in the page; c writes the comment; f flags.
    page.keyboard.press("4")
    expect(page.locator("input[data-check='4']")).not_to_be_checked()
    expect(page.locator("#verdict-status")).to_contain_text("1 check fails")
    page.keyboard.press("p")
    expect(page.locator("#verdict-status")).to_contain_text("A pass leaves no check unticked")
    page.keyboard.press("c")
    page.keyboard.type("Nothing is never right here.")
    page.keyboard.press("Escape")
    page.keyboard.press("f")
    # No item is claimed behind the examiner's back: their page says what happened, n opens the next.
    page.wait_for_url(f"**/p/{project.slug}/examine/")
    expect(page.locator(".messages")).to_contain_text("Flagged: the item goes to a reviser with 1 reason.")
    page.keyboard.press("n")
    # The next item: the chain, its clip looping.
    page.wait_for_url(f"**/p/{project.slug}/examine/qa_chain/{chain.pk}/")
    mcq.refresh_from_db()
    event = item_history(item=mcq)[-1]
    assert mcq.status == ItemStatus.FLAGGED and event.reasons == ["options_plausible"]
    assert event.comment == "Nothing is never right here."

    page.wait_for_function("() => window.VidQA && VidQA.player && VidQA.player.video.readyState >= 1")
    page.evaluate("() => { VidQA.player.seek(3.3); VidQA.player.play(); }")
    page.wait_for_function("() => !VidQA.player.paused && VidQA.player.currentTime < 1.5", timeout=5_000)
    page.evaluate("() => VidQA.player.pause()")
    # Opening the next item after a verdict is a choice: ticked, the next one is claimed (none is left).
    expect(page.locator("input[name=then_next]")).not_to_be_checked()
    page.locator("input[name=then_next]").check()
    page.evaluate("() => document.activeElement.blur()")  # keys work outside form fields
    page.keyboard.press("p")
    page.wait_for_url(f"**/p/{project.slug}/examine/")
    expect(page.locator(".messages")).to_contain_text("Nothing else is waiting for you to examine.")
    chain.refresh_from_db()
    assert chain.status == ItemStatus.ACCEPTED

    # The reviser: the list shows why; Enter takes the flagged MCQ into revision and opens its editor.
    page.context.clear_cookies()
    login(page, live_server, people["reviser"])
    page.goto(f"{live_server.url}/p/{project.slug}/revise/")
    expect(page.locator(".revise-row").first).to_contain_text("Nothing is never right here.")
    expect(page.locator(".revise-row").first).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/p/{project.slug}/mcqs/{mcq.pk}/")
    mcq.refresh_from_db()
    assert mcq.status == ItemStatus.REVISING
