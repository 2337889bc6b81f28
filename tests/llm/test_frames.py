"""Frames for vision prompts: right count, right size, from the right time range."""

import cv2
import numpy as np
import pytest

from llm.frames import FrameSamplingError, sample_frames
from videos.synthetic import SceneSpec, make_scene_video


@pytest.fixture(scope="module")
def two_scene_video(tmp_path_factory):
    """3 s of a red background, then 3 s of a blue one (640×360)."""
    path = tmp_path_factory.mktemp("frames") / "two_scenes.mp4"
    make_scene_video(path, [SceneSpec(3.0, "red_box"), SceneSpec(3.0, "blue_box")], audio=False, fps=25)
    return path


@pytest.fixture(scope="module")
def portrait_video(tmp_path_factory):
    path = tmp_path_factory.mktemp("frames") / "portrait.mp4"
    make_scene_video(path, [SceneSpec(2.0, "testsrc2")], width=360, height=640, audio=False)
    return path


def decode(jpeg: bytes) -> np.ndarray:
    assert jpeg[:2] == b"\xff\xd8", "not a JPEG"
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return image


def mean_bgr(image: np.ndarray) -> tuple[float, float, float]:
    b, g, r = image.reshape(-1, 3).mean(axis=0)
    return b, g, r


def test_count_and_size(two_scene_video):
    frames = sample_frames(two_scene_video, 0.0, 6.0, count=5, max_side_px=160)

    assert len(frames) == 5
    assert {decode(f).shape for f in frames} == {(90, 160, 3)}


def test_frames_come_from_the_requested_range(two_scene_video):
    red = [mean_bgr(decode(f)) for f in sample_frames(two_scene_video, 0.0, 3.0, count=3, max_side_px=64)]
    blue = [mean_bgr(decode(f)) for f in sample_frames(two_scene_video, 3.0, 6.0, count=4, max_side_px=64)]

    assert len(red) == 3 and len(blue) == 4
    assert all(r > b + 50 for b, _g, r in red)
    assert all(b > r + 50 for b, _g, r in blue)


def test_frames_are_evenly_spaced_slice_centres(two_scene_video):
    # Over 0–6 s in 4 slices the centres are 0.75, 2.25, 3.75, 5.25 s: two red, then two blue.
    colours = [mean_bgr(decode(f)) for f in sample_frames(two_scene_video, 0.0, 6.0, count=4, max_side_px=64)]

    assert ["red" if r > b else "blue" for b, _g, r in colours] == ["red", "red", "blue", "blue"]


def test_many_frames_from_a_short_range(two_scene_video):
    frames = sample_frames(two_scene_video, 1.0, 1.2, count=8, max_side_px=100)

    assert len(frames) == 8


def test_portrait_keeps_its_shape_and_small_videos_are_not_upscaled(portrait_video, two_scene_video):
    (portrait,) = sample_frames(portrait_video, 0.0, 2.0, count=1, max_side_px=100)
    height, width, _ = decode(portrait).shape
    assert height == 100 and 55 <= width <= 57

    (full,) = sample_frames(two_scene_video, 0.0, 1.0, count=1, max_side_px=4000)
    assert decode(full).shape[:2] == (360, 640)


def test_range_past_the_end_is_a_clear_error(two_scene_video):
    with pytest.raises(FrameSamplingError, match="past the end"):
        sample_frames(two_scene_video, 10.0, 12.0, count=3, max_side_px=64)


def test_not_a_video_is_a_clear_error(tmp_path):
    bogus = tmp_path / "notes.mp4"
    bogus.write_text("this is not a video")

    with pytest.raises(FrameSamplingError, match="could not sample frames from notes.mp4"):
        sample_frames(bogus, 0.0, 1.0, count=2, max_side_px=64)
    with pytest.raises(FrameSamplingError, match="not found"):
        sample_frames(tmp_path / "missing.mp4", 0.0, 1.0, count=2, max_side_px=64)


@pytest.mark.parametrize(
    "start, end, count, side",
    [(2.0, 1.0, 3, 64), (-1.0, 1.0, 3, 64), (0.0, 1.0, 0, 64), (0.0, 1.0, 3, 4)],
)
def test_bad_arguments_are_refused(two_scene_video, start, end, count, side):
    with pytest.raises(ValueError):  # noqa: PT011 - each case has its own message
        sample_frames(two_scene_video, start, end, count=count, max_side_px=side)
