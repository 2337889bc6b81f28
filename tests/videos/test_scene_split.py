"""videos.scene_split: cuts found where the generator put them, and the merge/pad rules exactly."""

import pytest

from videos.scene_split import ClipPlan, SceneDetectionError, detect_scenes, merge_short_scenes, plan_clips
from videos.synthetic import SceneSpec, make_scene_video

CUT_TOLERANCE_S = 0.2
# Scene lengths chosen so the rules have work to do: a short scene in the middle (1.0 s), two
# short ones in a row (0.8 s, 0.6 s) and a short last scene (1.2 s).
SCENE_SECONDS = [3.0, 1.0, 4.0, 0.8, 0.6, 3.0, 1.2]


@pytest.fixture(scope="module")
def scene_video(tmp_path_factory):
    path = tmp_path_factory.mktemp("scenes") / "scenes.mp4"
    cuts = make_scene_video(path, [SceneSpec(s) for s in SCENE_SECONDS], width=320, height=180, fps=25)
    return path, cuts


def test_generator_reports_frame_exact_cuts(scene_video):
    _, cuts = scene_video

    assert cuts == [3.0, 4.0, 8.0, 8.8, 9.4, 12.4]


def test_every_cut_is_found_within_tolerance(scene_video):
    path, cuts = scene_video
    reported = []

    scenes = detect_scenes(path, threshold=27.0, progress=reported.append)

    found = [start for start, _ in scenes[1:]]
    assert len(found) == len(cuts)
    for expected, actual in zip(cuts, found, strict=True):
        assert abs(actual - expected) <= CUT_TOLERANCE_S, (expected, actual)
    assert scenes[0][0] == 0.0
    assert scenes[-1][1] == pytest.approx(sum(SCENE_SECONDS), abs=0.05)
    # Contiguous: each scene starts where the previous one ended.
    assert all(a[1] == b[0] for a, b in zip(scenes, scenes[1:], strict=False))
    assert reported == sorted(reported) and reported[-1] == 1.0 and len(reported) > 10


def test_clips_of_the_generated_video_follow_the_rules_exactly(scene_video):
    path, _ = scene_video
    duration = sum(SCENE_SECONDS)

    clips = plan_clips(detect_scenes(path), duration=duration, min_scene_s=2.0, pad_s=0.5)

    # 1.0 s joins the 3.0 s before it; 0.8 s and 0.6 s join the 4.0 s; the last 1.2 s joins the 3.0 s.
    assert clips == [
        ClipPlan(index=0, start=0.0, end=4.5, scene_start=0.0, scene_end=4.0),
        ClipPlan(index=1, start=3.5, end=9.9, scene_start=4.0, scene_end=9.4),
        ClipPlan(index=2, start=8.9, end=13.6, scene_start=9.4, scene_end=13.6),
    ]
    # Adjacent clips overlap by exactly twice the padding.
    assert [round(a.end - b.start, 3) for a, b in zip(clips, clips[1:], strict=False)] == [1.0, 1.0]


def test_a_video_without_cuts_is_one_scene(tmp_path):
    path = tmp_path / "one.mp4"
    make_scene_video(path, [SceneSpec(2.0, "smptebars")], width=160, height=90, audio=False)

    assert detect_scenes(path) == [(0.0, 2.0)]


def test_detection_of_a_missing_or_unreadable_file_says_why(tmp_path):
    with pytest.raises(SceneDetectionError, match="does not exist"):
        detect_scenes(tmp_path / "nope.mp4")
    bad = tmp_path / "bad.mp4"
    bad.write_text("not a video")
    with pytest.raises(SceneDetectionError):
        detect_scenes(bad)


# --- plan_clips: pure rules ------------------------------------------------------------------


def test_one_scene_is_one_clip_clamped_to_the_video():
    assert plan_clips([(0.0, 10.0)], duration=10.0) == [
        ClipPlan(index=0, start=0.0, end=10.0, scene_start=0.0, scene_end=10.0)
    ]


def test_no_scenes_means_the_whole_video():
    assert plan_clips([], duration=7.25) == [ClipPlan(index=0, start=0.0, end=7.25, scene_start=0.0, scene_end=7.25)]


def test_all_short_scenes_add_up_until_long_enough():
    scenes = [(0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, 2.5), (2.5, 3.0)]

    # The first scene absorbs the next until it reaches 2 s; the rest then join it as its followers.
    assert merge_short_scenes(scenes, min_scene_s=2.0) == [(0.0, 3.0)]
    assert merge_short_scenes(scenes[:5] + [(2.5, 5.0)], min_scene_s=2.0) == [(0.0, 2.5), (2.5, 5.0)]


def test_a_video_shorter_than_the_minimum_is_one_clip():
    assert plan_clips([(0.0, 0.7), (0.7, 1.5)], duration=1.5) == [
        ClipPlan(index=0, start=0.0, end=1.5, scene_start=0.0, scene_end=1.5)
    ]


def test_short_first_scene_joins_the_next():
    clips = plan_clips([(0.0, 1.0), (1.0, 6.0), (6.0, 12.0)], duration=12.0, pad_s=0.5)

    assert [(c.scene_start, c.scene_end) for c in clips] == [(0.0, 6.0), (6.0, 12.0)]
    assert [(c.start, c.end) for c in clips] == [(0.0, 6.5), (5.5, 12.0)]


def test_short_last_scene_joins_the_previous():
    clips = plan_clips([(0.0, 5.0), (5.0, 10.0), (10.0, 11.9)], duration=11.9)

    assert [(c.scene_start, c.scene_end) for c in clips] == [(0.0, 5.0), (5.0, 11.9)]


def test_short_middle_scene_joins_the_previous_not_the_shorter_neighbour():
    clips = plan_clips([(0.0, 10.0), (10.0, 11.0), (11.0, 14.0)], duration=14.0, pad_s=0.0)

    assert [(c.start, c.end) for c in clips] == [(0.0, 11.0), (11.0, 14.0)]


def test_scene_exactly_at_the_minimum_is_kept():
    # 4.04 - 2.04 is not exactly 2.0 in floating point; rounded to milliseconds it is, so it stays.
    clips = plan_clips([(0.0, 1.04 + 1.0), (2.04, 4.04), (4.04, 9.0)], duration=9.0, pad_s=0.0)

    assert [(c.start, c.end) for c in clips] == [(0.0, 2.04), (2.04, 4.04), (4.04, 9.0)]


def test_padding_is_clamped_at_zero_and_duration():
    clips = plan_clips([(0.0, 3.0), (3.0, 6.0), (6.0, 9.2)], duration=9.2, pad_s=0.5)

    assert [(c.start, c.end) for c in clips] == [(0.0, 3.5), (2.5, 6.5), (5.5, 9.2)]
    assert clips[0].start == 0.0 and clips[-1].end == 9.2


def test_padding_near_the_edges_clamps_only_the_overhang():
    clips = plan_clips([(0.2, 4.0), (4.0, 8.8)], duration=9.0, pad_s=0.5)

    assert [(c.start, c.end) for c in clips] == [(0.0, 4.5), (3.5, 9.0)]


def test_numbers_are_rounded_to_milliseconds():
    clips = plan_clips([(0.0, 3.3333333), (3.3333333, 7.77777777)], duration=7.77777777, pad_s=0.25)

    assert [(c.start, c.end, c.scene_start, c.scene_end) for c in clips] == [
        (0.0, 3.583, 0.0, 3.333),
        (3.083, 7.778, 3.333, 7.778),
    ]


def test_scenes_beyond_the_duration_are_clamped_and_unsorted_input_is_sorted():
    clips = plan_clips([(5.0, 12.0), (0.0, 5.0), (12.0, 20.0)], duration=10.0, pad_s=0.0)

    assert [(c.start, c.end) for c in clips] == [(0.0, 5.0), (5.0, 10.0)]


def test_settings_are_respected():
    scenes = [(0.0, 2.5), (2.5, 5.0), (5.0, 9.0)]

    assert len(plan_clips(scenes, duration=9.0, min_scene_s=3.0)) == 2
    assert [(c.start, c.end) for c in plan_clips(scenes, duration=9.0, pad_s=1.0)] == [
        (0.0, 3.5),
        (1.5, 6.0),
        (4.0, 9.0),
    ]


def test_clip_indexes_count_from_zero():
    assert [c.index for c in plan_clips([(0, 3), (3, 6), (6, 9)], duration=9)] == [0, 1, 2]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"duration": 0}, "duration must be positive"),
        ({"duration": 5, "pad_s": -1}, "must not be negative"),
        ({"duration": 5, "min_scene_s": -1}, "must not be negative"),
    ],
)
def test_nonsense_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plan_clips([(0, 5)], **kwargs)
