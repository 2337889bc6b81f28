"""Headless Chromium, no model endpoint: an annotator writes a QA chain from scratch and submits it."""

import time

import pytest
from playwright.sync_api import expect

from annotator.models import ItemStatus, Origin, QAChain, QAPair
from tests import factories
from tests.browser.helpers import login, playable_video
from videos.models import Clip
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FPS = 25
SCENES = (3.0, 3.0)
TURNS = [
    ("What is on screen at the start?", "A test card with colour stripes.", "1"),
    ("What colour is the left stripe?", "White.", "1"),
    ("Does the picture change?", "Yes, a second card follows.", "2"),
    ("When does it change?", "After three seconds.", "2"),
    ("Why would a stream show test cards?", "To check the colours before going live.", "3"),
]


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain-by-hand") / "scenes.mp4"
    make_scene_video(path, [SceneSpec(d) for d in SCENES], width=320, height=180, fps=FPS)
    return path


@pytest.fixture
def setup(settings, scene_file, tmp_path):
    settings.OPENAI_BASE_URL = ""  # no model endpoint anywhere, as on a fresh install
    project = factories.ProjectFactory(name="Bare kitchen", slug="bare-kitchen", judge_enabled=False)
    people = factories.people_for(project)
    video = playable_video(project, scene_file, tmp_path, durations=SCENES, fps=FPS, scenes=[[0.0, 3.0], [3.0, 6.0]])
    clips = Clip.objects.bulk_create(
        [Clip(video=video, index=0, start_s=0.0, end_s=3.0), Clip(video=video, index=1, start_s=3.0, end_s=6.0)]
    )
    return project, people, video, clips


def test_an_annotator_writes_a_chain_by_hand_and_submits_it(live_server, page, setup):
    project, people, video, clips = setup
    assert not QAChain.objects.exists()
    login(page, live_server, people["annotator"])

    # Project home → work list (w): the bare clips are work; c writes a chain on the first.
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.keyboard.press("w")
    page.wait_for_url(f"**/p/{project.slug}/work/")
    expect(page.locator("#free-clips-h")).to_contain_text("2 clips have no QA chain yet")
    page.keyboard.press("c")
    page.wait_for_url(f"**/p/{project.slug}/chains/*/")
    chain = QAChain.objects.get(clip=clips[0])
    assert (chain.origin, chain.status, chain.author) == (Origin.HUMAN, ItemStatus.ANNOTATING, people["annotator"])
    page.wait_for_function("() => window.VidQA && VidQA.chainEditor")
    expect(page.locator("#turns-empty")).to_be_visible()

    # Keys only: a adds a turn, Tab goes to the answer, Esc back to the turn, a digit picks the skill.
    for question, answer, skill in TURNS:
        page.keyboard.press("a")
        page.keyboard.type(question)
        page.keyboard.press("Tab")
        page.keyboard.type(answer)
        page.keyboard.press("Escape")
        page.keyboard.press(skill)
    page.wait_for_function(
        "() => !VidQA.chainEditor.doc.dirty && document.getElementById('save-status').dataset.state === 'saved'",
        timeout=10_000,
    )
    saved = [(p.question, p.answer) for p in QAPair.objects.filter(chain=chain).order_by("index")]
    assert saved == [(q, a) for q, a, _ in TURNS]
    expect(page.locator("#chain-warnings li")).to_have_count(0)

    page.keyboard.press("Control+Enter")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        chain.refresh_from_db()
        if chain.status != ItemStatus.ANNOTATING:
            break
        time.sleep(0.2)
    # The judge is off here: the chain goes straight on to the examiners, with no model involved.
    assert chain.status in (ItemStatus.SUBMITTED, ItemStatus.EXAMINING)
    assert chain.submitted_at is not None
