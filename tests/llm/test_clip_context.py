"""The clip context drafting and the judge share: frames, timed subtitle lines, the range as asked."""

import dataclasses

import pytest

from llm.clip_context import ClipContext, clip_context_build, seconds_text, timed_lines_text
from llm.prompts import PROMPT_TEXT_LIMIT
from videos.synthetic import SceneSpec, make_scene_video


@pytest.fixture(scope="module")
def four_second_video(tmp_path_factory):
    path = tmp_path_factory.mktemp("clip_context") / "four.mp4"
    make_scene_video(path, [SceneSpec(2.0), SceneSpec(2.0)], width=160, height=90, audio=False, fps=25)
    return path


def test_seconds_text_drops_trailing_zeros():
    assert [seconds_text(t) for t in (0.0, 12.0, 3.5, 3.25, 7.04)] == ["0", "12", "3.5", "3.2", "7"]


def test_timed_lines_stop_at_a_whole_line():
    rows = [(float(n), "x" * 100) for n in range(PROMPT_TEXT_LIMIT // 50)]
    text = timed_lines_text(rows)

    assert text.startswith("[0 s] xxx")
    assert len(text) <= PROMPT_TEXT_LIMIT
    assert all(line.endswith("x" * 100) for line in text.split("\n"))


def test_a_range_ending_at_the_end_of_the_video_keeps_its_frame_count(four_second_video):
    context = clip_context_build(
        path=four_second_video,
        start_s=2.0,
        end_s=4.0,
        cues=[(2.5, "hello"), (3.0, "there")],
        frame_count=4,
        max_side_px=64,
        duration_s=4.0,
        fps=25.0,
    )

    assert len(context.frames) == 4
    assert (context.start_s, context.end_s) == (2.0, 4.0)  # the range as asked, not as sampled
    assert (context.start_text, context.end_text) == ("2", "4")
    assert context.subtitles == "[2.5 s] hello\n[3 s] there"


def test_the_context_is_frozen_and_keyword_only():
    context = ClipContext(start_s=0.0, end_s=1.0, frames=(), subtitles="")

    with pytest.raises(dataclasses.FrozenInstanceError):
        context.subtitles = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ClipContext(0.0, 1.0, (), "")  # type: ignore[misc]
