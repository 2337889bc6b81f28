"""videos.proxy: which sources need a browser proxy, and that the proxy and poster come out right."""

import dataclasses
import json
import subprocess
from fractions import Fraction

import pytest

from tests.videos.media_corpus import SMALL
from videos.probe import mp4_faststart, probe_file, read_mp4_boxes
from videos.proxy import ProxyError, make_poster, make_proxy, needs_proxy, proxy_frame_rate
from videos.synthetic import SceneSpec, make_scene_video

SCENES = [SceneSpec(1.2), SceneSpec(1.8)]


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    folder = tmp_path_factory.mktemp("proxy-sources")
    paths = {
        "playable": folder / "playable.mp4",
        "vfr": folder / "vfr.mp4",
        "moov_at_end": folder / "moov_at_end.mp4",
        "webm": folder / "vp9.webm",
        "avi": folder / "mpeg4.avi",
        "hevc": folder / "hevc.mp4",
    }
    make_scene_video(paths["playable"], SCENES, **SMALL)
    make_scene_video(paths["vfr"], SCENES, variable_frame_rate=True, **SMALL)
    make_scene_video(paths["moov_at_end"], SCENES, faststart=False, **SMALL)
    make_scene_video(paths["webm"], SCENES, **SMALL)
    make_scene_video(paths["avi"], SCENES, **SMALL)
    make_scene_video(paths["hevc"], SCENES, vcodec="libx265", **SMALL)
    return paths


def test_h264_aac_faststart_mp4_needs_no_proxy(sources):
    assert needs_proxy(probe_file(sources["playable"])) == (False, "")


@pytest.mark.parametrize(
    "source, phrases",
    [
        ("vfr", ["frame rate is variable"]),
        ("moov_at_end", ["moov atom"]),
        ("webm", ["webm container", "vp9 video codec", "opus audio codec"]),
        ("avi", ["avi container", "mpeg4 video codec", "mp3 audio codec"]),
        ("hevc", ["hevc video codec"]),
    ],
)
def test_unplayable_sources_need_a_proxy_with_reasons(sources, source, phrases):
    wanted, reason = needs_proxy(probe_file(sources[source]))

    assert wanted is True
    for phrase in phrases:
        assert phrase in reason


def test_pixel_format_and_profile_that_browsers_reject_need_a_proxy(sources):
    playable = probe_file(sources["playable"])

    ten_bit = dataclasses.replace(playable, pixel_format="yuv420p10le", video_profile="High 10")
    wanted, reason = needs_proxy(ten_bit)

    assert wanted is True
    assert "High 10 profile" in reason and "yuv420p10le pixel format" in reason


def test_a_silent_video_does_not_need_an_audio_codec(sources):
    silent = dataclasses.replace(probe_file(sources["playable"]), has_audio=False, audio_codec="")

    assert needs_proxy(silent) == (False, "")


def test_variable_source_snaps_to_its_nominal_standard_rate(sources):
    result = probe_file(sources["vfr"])

    assert result.fps_is_variable is True
    assert proxy_frame_rate(result) == Fraction(25)


def test_proxy_of_a_variable_frame_rate_source_is_browser_safe(sources, tmp_path):
    source = probe_file(sources["vfr"])
    dst = tmp_path / "out" / "proxy.mp4"
    reported = []

    proxy = make_proxy(sources["vfr"], dst, result=source, progress=reported.append)

    assert dst.is_file()
    assert (proxy.container, proxy.video_codec, proxy.audio_codec) == ("mp4", "h264", "aac")
    assert proxy.pixel_format == "yuv420p"
    assert proxy.fps == 25.0 and proxy.fps_is_variable is False
    assert proxy.duration_s == pytest.approx(source.duration_s, abs=0.1)
    boxes = [box.kind for box in read_mp4_boxes(dst)]
    assert boxes.index("moov") < boxes.index("mdat")
    assert needs_proxy(proxy) == (False, "")
    assert reported, "progress was never reported"
    assert reported == sorted(reported)
    assert reported[-1] == 1.0
    assert all(0.0 <= value <= 1.0 for value in reported)
    assert [p.name for p in dst.parent.iterdir()] == ["proxy.mp4"]


@pytest.mark.parametrize("source", ["moov_at_end", "webm", "hevc"])
def test_proxy_output_plays_in_browsers(sources, tmp_path, source):
    dst = tmp_path / "proxy.mp4"

    proxy = make_proxy(sources[source], dst, result=probe_file(sources[source]))

    assert needs_proxy(proxy) == (False, "")
    assert mp4_faststart(read_mp4_boxes(dst)) is True
    assert (proxy.width, proxy.height) == (160, 90)


def test_failed_proxy_leaves_no_file_and_says_why(sources, tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video" * 100)
    dst = tmp_path / "out" / "proxy.mp4"
    # A probe of a good file paired with a source that is not one: ffmpeg fails mid-way.
    result = probe_file(sources["playable"])

    with pytest.raises(ProxyError) as caught:
        make_proxy(broken, dst, result=result)

    assert "could not make the proxy" in caught.value.reason
    assert list(dst.parent.iterdir()) == []


def test_cancelling_through_progress_stops_ffmpeg_and_leaves_nothing(sources, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dst = out / "proxy.mp4"
    dst.write_bytes(b"previous proxy")

    class Cancelled(Exception):
        pass

    def cancel(_fraction):
        raise Cancelled

    with pytest.raises(Cancelled):
        make_proxy(sources["webm"], dst, result=probe_file(sources["webm"]), progress=cancel)

    # The earlier proxy is untouched and no temporary file is left beside it.
    assert dst.read_bytes() == b"previous proxy"
    assert [p.name for p in out.iterdir()] == ["proxy.mp4"]


def test_poster_is_a_jpeg_of_the_video(sources, tmp_path):
    dst = tmp_path / "out" / "poster.jpg"

    make_poster(sources["playable"], dst, at_s=1.5)

    data = dst.read_bytes()
    assert data[:3] == b"\xff\xd8\xff"
    poster = image_stream(dst)
    assert (poster["codec_name"], poster["width"], poster["height"]) == ("mjpeg", 160, 90)
    assert [p.name for p in dst.parent.iterdir()] == ["poster.jpg"]


def test_poster_past_the_end_falls_back_to_the_first_frame(sources, tmp_path):
    dst = tmp_path / "poster.jpg"

    make_poster(sources["playable"], dst, at_s=3600)

    assert dst.read_bytes()[:3] == b"\xff\xd8\xff"


def test_poster_of_a_non_video_fails_cleanly(tmp_path):
    src = tmp_path / "notes.mp4"
    src.write_text("hello\n")
    dst = tmp_path / "out" / "poster.jpg"

    with pytest.raises(ProxyError):
        make_poster(src, dst, at_s=0)

    assert not dst.exists()
    assert list(dst.parent.iterdir()) == []


def image_stream(path):
    """ffprobe's stream facts for a still image (probe_file refuses images by design)."""
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(path)], capture_output=True, check=True
    ).stdout
    return json.loads(out)["streams"][0]
