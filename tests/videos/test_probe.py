"""videos.probe on generated videos (facts right) and on a corpus of bad inputs (each refused with its reason)."""

import hashlib

import pytest

from tests.videos.media_corpus import SMALL, build_corpus, ffmpeg, rotated_copy
from videos.models import Video
from videos.probe import (
    ProbeError,
    ProbeProblem,
    ProbeResult,
    apply_probe,
    mp4_faststart,
    probe_file,
    read_mp4_boxes,
    sha256_file,
)
from videos.synthetic import SceneSpec, make_scene_video

SCENES = [SceneSpec(1.0), SceneSpec(1.4), SceneSpec(1.6)]  # 25 + 35 + 40 = 100 frames at 25 fps


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    folder = tmp_path_factory.mktemp("probe-media")
    paths = {
        "mp4": folder / "scenes.mp4",
        "webm": folder / "scenes.webm",
        "mkv_silent": folder / "silent.mkv",
        "vfr": folder / "vfr.mp4",
        "moov_at_end": folder / "moov_at_end.mp4",
        "ts": folder / "broadcast.ts",
        "long_audio": folder / "long_audio.mkv",
    }
    make_scene_video(paths["mp4"], SCENES, **SMALL)
    make_scene_video(paths["webm"], SCENES, **SMALL)
    make_scene_video(paths["mkv_silent"], SCENES, audio=False, **SMALL)
    make_scene_video(paths["vfr"], SCENES, variable_frame_rate=True, **SMALL)
    make_scene_video(paths["moov_at_end"], SCENES, faststart=False, **SMALL)
    paths["rotated"] = rotated_copy(paths["mp4"], folder / "rotated.mp4", 90)
    # One keyframe for the whole stream (ultrafast's 10 s GOP): MPEG-TS cannot seek near its end.
    make_scene_video(paths["ts"], SCENES, **SMALL)
    # 4 s of pictures, 7 s of sound.
    ffmpeg(
        "-i",
        str(paths["mkv_silent"]),
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=300:duration=7",
        "-map",
        "0:v",
        "-map",
        "1:a",
        "-c:v",
        "copy",
        "-c:a",
        "libopus",
        str(paths["long_audio"]),
    )
    return paths


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_corpus(tmp_path_factory.mktemp("bad-inputs"))


def test_probe_of_generated_mp4_has_exact_facts(media):
    result = probe_file(media["mp4"])

    assert isinstance(result, ProbeResult)
    assert result.duration_s == pytest.approx(4.0, abs=0.05)
    assert result.fps == 25.0
    assert result.fps_is_variable is False
    assert result.frame_count == 100
    assert (result.width, result.height) == (160, 90)
    assert result.rotation == 0
    assert result.container == "mp4"
    assert (result.video_codec, result.audio_codec, result.has_audio) == ("h264", "aac", True)
    assert result.start_time_s == pytest.approx(0.0, abs=0.05)
    assert result.pixel_format == "yuv420p"
    assert result.faststart is True
    assert result.frame_count_is_estimate is False
    assert {s["codec_type"] for s in result.raw["streams"]} == {"video", "audio"}
    assert "packets" not in result.raw and "frames" not in result.raw


def test_probe_of_webm_reports_vp9_opus_and_estimates_frames(media):
    result = probe_file(media["webm"])

    assert result.container == "webm"
    assert (result.video_codec, result.audio_codec) == ("vp9", "opus")
    assert result.faststart is None
    assert result.frame_count == 100
    assert result.frame_count_is_estimate is True


def test_probe_of_silent_matroska_has_no_audio(media):
    result = probe_file(media["mkv_silent"])

    assert result.container == "matroska"
    assert result.has_audio is False
    assert result.audio_codec == ""
    assert result.duration_s == pytest.approx(4.0, abs=0.05)


def test_transport_stream_that_cannot_seek_near_its_end_is_not_called_truncated(media):
    result = probe_file(media["ts"])

    assert result.container == "mpegts"
    assert result.start_time_s > 0  # MPEG-TS timestamps do not start at zero
    assert result.frame_count == 100


def test_frame_count_estimate_uses_the_video_stream_not_the_longer_audio(media):
    result = probe_file(media["long_audio"])

    assert result.duration_s == pytest.approx(7.0, abs=0.05)
    assert result.frame_count == 100
    assert result.frame_count_is_estimate is True


def test_variable_frame_rate_is_recognised(media):
    result = probe_file(media["vfr"])

    assert result.fps_is_variable is True
    # Every third frame is gone, so the average rate is two thirds of the nominal 25.
    assert result.fps == pytest.approx(25 * 2 / 3, rel=0.05)


def test_rotation_comes_from_the_display_matrix(media):
    result = probe_file(media["rotated"])

    assert result.rotation == 90
    # The coded picture keeps its shape; rotation is applied when displaying.
    assert (result.width, result.height) == (160, 90)


def test_moov_at_the_end_is_not_faststart(media):
    boxes = read_mp4_boxes(media["moov_at_end"])
    kinds = [box.kind for box in boxes]

    assert kinds.index("mdat") < kinds.index("moov")
    assert mp4_faststart(boxes) is False
    assert probe_file(media["moov_at_end"]).faststart is False


def test_read_mp4_boxes_ignores_other_containers(media):
    assert read_mp4_boxes(media["webm"]) is None


def test_sha256_file_streams_in_chunks(tmp_path):
    path = tmp_path / "blob.bin"
    data = bytes(range(256)) * 5000  # 1.28 MB: several chunks of 64 KiB, one odd tail
    path.write_bytes(data)

    assert sha256_file(path, chunk=64 * 1024) == hashlib.sha256(data).hexdigest()
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_apply_probe_copies_every_probe_field_without_saving(media):
    result = probe_file(media["mp4"])
    video = Video(name="x")

    returned = apply_probe(video, result)

    assert returned is video
    assert video.pk is None
    for name in (
        "duration_s",
        "fps",
        "fps_is_variable",
        "frame_count",
        "width",
        "height",
        "rotation",
        "container",
        "video_codec",
        "audio_codec",
        "has_audio",
        "start_time_s",
    ):
        assert getattr(video, name) == getattr(result, name), name
    assert video.probe == result.raw


CORPUS_CASES = [
    "zero_bytes.mp4",
    "missing.mp4",
    "folder.mp4",
    "notes.mp4",
    "paper.mp4",
    "error_page.mp4",
    "archive.mp4",
    "random_bytes.mp4",
    "picture.mp4",
    "photo.mov",
    "one_frame.mp4",
    "truncated_half.mp4",
    "truncated_moov_at_end.mp4",
    "truncated_half.mkv",
    "truncated_half.webm",
    "only_ftyp.mp4",
    "speech.m4a",
    "song_with_cover.mp3",
    "sound_named_video.mp4",
    "header_noise.mp4",
    "damaged_index.mp4",
    "empty_recording.mp4",
    "unknown_codec.mkv",
    "garbage_frames.mp4",
    "no_video_frames.mkv",
    "hundred_hours.mkv",
    "too_wide.mp4",
    "thousand_fps.mp4",
]


def test_corpus_has_every_listed_case(corpus):
    assert sorted(corpus) == sorted(CORPUS_CASES)


@pytest.mark.parametrize("name", CORPUS_CASES)
def test_bad_input_is_refused_with_its_reason(corpus, name):
    case = corpus[name]

    with pytest.raises(ProbeError) as caught:
        probe_file(case.path)

    assert caught.value.problem == case.problem
    assert case.reason_contains in caught.value.reason
    assert str(caught.value) == caught.value.reason


def test_probe_error_defaults_to_a_generic_problem():
    error = ProbeError("ffprobe crashed")

    assert error.reason == "ffprobe crashed"
    assert error.problem == ProbeProblem.PROBE_FAILED
