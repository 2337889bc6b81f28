"""Headless Chromium plays a generated video with known cuts: keys, transcript, comments, clips, marks."""

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.browser.helpers import login, playable_video
from videos.models import Clip, Comment, CueSource, SubtitleCue
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FPS = 25
SCENES = (3.0, 4.0, 2.0, 3.0)  # cuts at 3, 7 and 9 s; 12 s in all
PAD = 0.5
CUES = [
    (0.5, 2.5, "A red box slides to the right."),
    (3.2, 5.0, "Colour bars fill the screen."),
    (6.0, 8.0, "A blue box climbs up."),
    (9.5, 11.5, "The pattern turns green."),
]
# The panel shows [t - 5, t + 5): after a seek to 6.0 that is [1.0, 11.0).
COMMENTS = [
    (0.5, "too early"),
    (1.5, "first in window"),
    (6.5, "second in window"),
    (10.9, "last in window"),
    (11.2, "too late"),
]


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("player") / "scenes.mp4"
    cuts = make_scene_video(path, [SceneSpec(d) for d in SCENES], width=320, height=180, fps=FPS, audio=True)
    assert cuts == [3.0, 7.0, 9.0]
    return path


@pytest.fixture
def setup(scene_file, tmp_path):
    project = factories.ProjectFactory(name="Streams", slug="streams")
    people = factories.people_for(project)
    video = playable_video(
        project,
        scene_file,
        tmp_path,
        durations=SCENES,
        fps=FPS,
        audio=True,
        scenes=[[0.0, 3.0], [3.0, 7.0], [7.0, 9.0], [9.0, 12.0]],
    )
    bounds = [(0.0, 3.0), (3.0, 7.0), (7.0, 9.0), (9.0, 12.0)]
    Clip.objects.bulk_create(
        [
            Clip(
                video=video,
                index=i,
                start_s=max(0.0, s - PAD),
                end_s=min(12.0, e + PAD),
                scene_start_s=s,
                scene_end_s=e,
            )
            for i, (s, e) in enumerate(bounds)
        ]
    )  # [0, 3.5], [2.5, 7.5], [6.5, 9.5], [8.5, 12]
    SubtitleCue.objects.bulk_create(
        [SubtitleCue(video=video, start_s=s, end_s=e, text=t, source=CueSource.SRT) for s, e, t in CUES]
    )
    Comment.objects.bulk_create([Comment(video=video, time_s=t, text=text, user="viewer") for t, text in COMMENTS])
    return project, people["annotator"], video


def open_player(page, live_server, video):
    page.goto(f"{live_server.url}/p/{video.project.slug}/videos/{video.pk}/")
    # loadedmetadata has fired once readyState >= HAVE_METADATA.
    page.wait_for_function("() => window.VidQA && VidQA.player && VidQA.player.video.readyState >= 1")


def now(page) -> float:
    return page.evaluate("() => VidQA.player.currentTime")


def test_keys_transcript_comments_and_marks(live_server, page, setup):
    _, user, video = setup
    login(page, live_server, user)
    open_player(page, live_server, video)
    assert page.evaluate("() => VidQA.player.video.error") is None
    assert page.evaluate("() => VidQA.player.video.duration") == pytest.approx(12.0, abs=0.1)
    assert page.evaluate("() => VidQA.player.clips.length") == 4
    expect(page.locator(".timeline-clip")).to_have_count(4)
    expect(page.locator(".timeline-scene")).to_have_count(3)

    # Space plays (the media really advances), Space again pauses.
    page.keyboard.press("Space")
    page.wait_for_function("() => !VidQA.player.paused && VidQA.player.currentTime > 0.3")
    page.keyboard.press("Space")
    page.wait_for_function("() => VidQA.player.paused")
    assert 0.3 < now(page) < 5

    # Once the <video> itself has focus, Chrome's own controls also listen for keys: each key must
    # still act exactly once (a double toggle would leave it paused, a double seek at +10 s).
    page.focus("#player-video")
    started = now(page)
    page.keyboard.press("Space")
    page.wait_for_function(f"() => !VidQA.player.paused && VidQA.player.currentTime > {started} + 0.3")
    page.keyboard.press("Space")
    page.wait_for_function("() => VidQA.player.paused")

    page.keyboard.press("ArrowLeft")  # clamped at the start
    assert now(page) == 0
    page.keyboard.press("ArrowRight")
    assert now(page) == pytest.approx(5.0, abs=0.001)
    page.keyboard.press(".")
    assert now(page) == pytest.approx(5.04, abs=0.001)
    expect(page.locator("#player-frame")).to_have_text("126")
    page.keyboard.press("]")  # inside clip 1 [2.5, 7.5]: next is clip 2 at 6.5
    assert now(page) == pytest.approx(6.5, abs=0.001)
    expect(page.locator(".timeline-clip.current")).to_have_attribute("data-index", "2")
    page.keyboard.press("]")
    assert now(page) == pytest.approx(8.5, abs=0.001)
    page.keyboard.press("[")
    assert now(page) == pytest.approx(6.5, abs=0.001)
    page.keyboard.press(",")  # the frame on screen at 6.5 is 162 (6.48); one back is 161
    assert now(page) == pytest.approx(6.44, abs=0.001)

    # A click on a transcript line seeks to its start and highlights it.
    line = page.locator('#transcript-lines li[data-start="6.0"]')
    line.click()
    assert now(page) == pytest.approx(6.0, abs=0.05)
    expect(line).to_have_class("active")
    expect(page.locator("#transcript-lines li.active")).to_have_count(1)
    expect(page.locator("#player-time")).to_have_text("00:06.000")

    # The comments of that moment, [1, 11), and no others.
    panel = page.locator("#comments-panel")
    expect(panel).to_have_attribute("data-start", "1")
    expect(panel.locator(".comment-text")).to_have_text(["first in window", "second in window", "last in window"])
    expect(panel).not_to_contain_text("too early")
    expect(panel).not_to_contain_text("too late")

    # m marks the moment with its frame index and tells listeners.
    page.evaluate(
        "() => { window.marked = []; document.addEventListener('vidqa:mark', (e) => window.marked.push(e.detail)); }"
    )
    page.keyboard.press("m")
    expect(page.locator("#marks-list li")).to_have_count(1)
    expect(page.locator("#marks-list li")).to_have_attribute("data-frame", "150")
    expect(page.locator("#marks-list")).to_contain_text("00:06.000 · frame 150")
    assert page.evaluate("() => window.marked") == [{"time": 6, "frame": 150, "videoId": video.pk}]

    # The transcript button still has focus: Space plays rather than clicking it again.
    page.keyboard.press("Space")
    page.wait_for_function("() => !VidQA.player.paused && VidQA.player.currentTime > 6.2")
    page.keyboard.press("Space")
    page.wait_for_function("() => VidQA.player.paused")


def test_search_marks_survive_reload_and_the_help_lists_player_keys(live_server, page, setup):
    _, user, video = setup
    login(page, live_server, user)
    open_player(page, live_server, video)

    page.keyboard.press("/")
    expect(page.locator("#transcript-search")).to_be_focused()
    page.keyboard.type("blue box")
    expect(page.locator("#transcript-lines li:visible")).to_have_count(1)
    expect(page.locator("#transcript-lines li:visible")).to_contain_text("A blue box climbs up.")
    # Keys typed into the search box are text, not shortcuts.
    assert now(page) == 0 and page.evaluate("() => VidQA.player.marks().length") == 0
    page.keyboard.press("Enter")  # jump to the first match
    assert now(page) == pytest.approx(6.0, abs=0.001)
    page.keyboard.press("Escape")
    expect(page.locator("#transcript-lines li:visible")).to_have_count(len(CUES))

    page.evaluate("() => VidQA.player.seek(9.5)")
    page.keyboard.press("m")
    expect(page.locator("#marks-list")).to_contain_text("frame 238")  # round(9.5 * 25) = round(237.5) = 238
    page.reload()
    page.wait_for_function("() => window.VidQA && VidQA.player")
    expect(page.locator("#marks-list li")).to_have_count(1)
    page.locator("#marks-list .mark-seek").click()
    page.wait_for_function("() => Math.abs(VidQA.player.currentTime - 9.5) < 0.001")

    page.keyboard.press("?")
    help_text = page.locator("#shortcut-help").inner_text()
    for label in (
        "Play / pause",
        "Forward 5 seconds",
        "One frame forward",
        "Next clip",
        "Mark the current time",
        "Search the transcript",
    ):
        assert label in help_text


def test_comments_are_fetched_lazily_and_throttled_while_playing(live_server, page, setup):
    _, user, video = setup
    login(page, live_server, user)
    requests = []
    page.on("request", lambda r: requests.append(r.url) if "/comments/?" in r.url else None)
    open_player(page, live_server, video)
    expect(page.locator("#comments-panel")).to_have_attribute("data-start", "0")
    requests.clear()

    page.evaluate("() => { window.playStartedAt = performance.now(); VidQA.player.play(); }")
    page.wait_for_function("() => VidQA.player.currentTime > 3")
    played_ms = page.evaluate("() => { VidQA.player.pause(); return performance.now() - window.playStartedAt; }")
    page.wait_for_timeout(600)  # let the trailing request of the throttle go out
    # It follows the playhead (more than one window asked for) but at most ~2 requests a second.
    assert 2 <= len(requests) <= played_ms / 500 + 2, (len(requests), played_ms)
    expect(page.locator("#comments-panel")).to_have_attribute("data-start", "0")  # still [0, t + 5) near 3 s

    requests.clear()
    page.keyboard.press("ArrowRight")  # a seek asks at once
    expect(page.locator("#comments-panel")).not_to_have_attribute("data-start", "0")
    assert len(requests) == 1
