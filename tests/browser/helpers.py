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


def playable_video(project, source, tmp_path, *, durations, fps: int, audio: bool = False, **fields):
    """A ready video of `project` whose file is a copy of the generated 320×180 H.264 `source`.

    `durations` are its scenes' lengths (as generated); a copy, so a test's storage never moves the
    module's shared file. Probe facts the player reads are filled in; `fields` adds or overrides.
    """
    import shutil

    local = tmp_path / source.name
    shutil.copy(source, local)
    facts = {
        "duration_s": sum(durations),
        "fps": fps,
        "frame_count": int(sum(durations) * fps),
        "width": 320,
        "height": 180,
        "video_codec": "h264",
    }
    if audio:
        facts.update(container="mov,mp4,m4a,3gp,3g2,mj2", audio_codec="aac", has_audio=True)
    return factories.video_from_file(project, local, **(facts | fields))
