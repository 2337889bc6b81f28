"""The whole ingest in a browser: upload a generated video and its SRT file, watch the real worker
process it, then use the player: seek by keyboard and by transcript, and read the comments."""

import time

import pytest
from playwright.sync_api import expect

from jobs.models import BackgroundJob, JobStatus
from tests import factories
from videos.models import Clip, Video, VideoStatus
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCENES = (3.0, 4.0, 3.0)  # cuts at 3 and 7 s; 10 s in all
SRT = """1
00:00:00,500 --> 00:00:02,500
A red box slides to the right.

2
00:00:03,200 --> 00:00:05,000
Colour bars fill the screen.

3
00:00:07,500 --> 00:00:09,000
The pattern turns green.
"""
COMMENTS_CSV = "time,text,user\n1.0,hello from the start,ann\n3.5,bars!,bo\n8.0,green now,cy\n9.9,bye,dee\n"


def _wait_for_job(kind: str, timeout: float = 90) -> BackgroundJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = BackgroundJob.objects.filter(kind=kind).order_by("-pk").first()
        if job is not None and job.is_finished:
            return job
        time.sleep(0.25)
    raise AssertionError(f"no finished {kind} job after {timeout} s")


def test_upload_process_and_play(live_server, page, settings, celery_worker_process, tmp_path):
    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]  # the worker reads the same files
    project = factories.ProjectFactory(name="Kitchen", slug="kitchen", scene_min_s=2.0, clip_pad_s=0.5)
    admin = factories.people_for(project)["admin"]
    video_path = tmp_path / "kitchen_scenes.mp4"
    assert make_scene_video(video_path, [SceneSpec(d) for d in SCENES], width=320, height=180) == [3.0, 7.0]
    srt_path = tmp_path / "kitchen_scenes.srt"
    srt_path.write_text(SRT, encoding="utf-8")
    comments_path = tmp_path / "chat.csv"
    comments_path.write_text(COMMENTS_CSV, encoding="utf-8")

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", admin.username)
    page.fill("input[name=password]", factories.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/p/kitchen/")

    # Upload from the video list: the file's own progress bar, then the processing job's.
    page.keyboard.press("v")
    page.wait_for_url(f"{live_server.url}/p/kitchen/videos/")
    page.set_input_files("#upload-form input[type=file]", str(video_path))
    page.click("#upload-form button[type=submit]")
    row = page.locator("#upload-list li.upload")
    expect(row).to_have_class("upload ok", timeout=30_000)
    expect(row.locator("progress").first).to_have_attribute("value", "100")
    expect(row.locator(".job")).to_contain_text("Succeeded", timeout=90_000)
    expect(row.locator(".job")).to_contain_text("3 scenes, 3 clips")

    video = Video.objects.get(project=project)
    assert video.status == VideoStatus.READY
    assert [(c.start_s, c.end_s) for c in Clip.objects.filter(video=video).order_by("index")] == [
        (0.0, 3.5),
        (2.5, 7.5),
        (6.5, 10.0),
    ]

    # Open the player from the upload row, then import the subtitles and the comments there.
    row.locator(".upload-state a").click()
    page.wait_for_url(f"{live_server.url}/p/kitchen/videos/{video.pk}/")
    page.set_input_files("input[aria-label='Subtitle file']", str(srt_path))
    page.get_by_role("button", name="Import subtitles").click()
    expect(page.locator(".messages")).to_contain_text("3 cues imported (srt")
    page.set_input_files("input[aria-label='Comments file']", str(comments_path))
    page.get_by_role("button", name="Import comments").click()
    expect(page.locator(".messages")).to_contain_text("Importing comments from chat.csv")
    job = _wait_for_job("videos.import_comments")
    assert job.status == JobStatus.SUCCEEDED, job.error
    page.reload()

    page.wait_for_function("() => window.VidQA && VidQA.player && VidQA.player.video.readyState >= 1")
    expect(page.locator("#transcript-lines li")).to_have_count(3)

    # Keyboard: → jumps 5 s; ] goes to the next clip.
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => Math.abs(VidQA.player.currentTime - 5) < 0.01")
    page.keyboard.press("]")
    page.wait_for_function("() => Math.abs(VidQA.player.currentTime - 6.5) < 0.01")

    # A transcript line seeks to its cue and is highlighted; the comments are those of the moment.
    line = page.locator('#transcript-lines li[data-start="3.2"]')
    line.click()
    assert page.evaluate("() => VidQA.player.currentTime") == pytest.approx(3.2, abs=0.05)
    expect(line).to_have_class("active")
    expect(page.locator("#transcript-lines li.active")).to_have_count(1)
    panel = page.locator("#comments-panel")
    # The panel shows [t - 5, t + 5) = [0, 8.2): the 8.0 s comment is in, the 9.9 s one is not.
    expect(panel.locator(".comment-text")).to_have_text(["hello from the start", "bars!", "green now"])
    expect(panel).not_to_contain_text("bye")
