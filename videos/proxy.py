"""Browser-playable copies and poster images, made with ffmpeg.

Every browser plays H.264 (8-bit 4:2:0) with AAC audio in an MP4 whose index (the moov atom)
comes before the media data, at a constant frame rate. Anything else gets a proxy made here;
the original is kept untouched for releases. Output is written under a temporary name next to
the destination and renamed only when ffmpeg succeeded, so a failure never leaves a half file.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import threading
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

from videos.probe import ProbeResult, probe_file

ProgressCallback = Callable[[float], None]

BROWSER_CONTAINERS = {"mp4"}
BROWSER_PIXEL_FORMATS = {"yuv420p", "yuvj420p"}
# 10-bit and 4:2:2/4:4:4 H.264 profiles do not play in browsers even when the codec name says h264.
BROWSER_UNSAFE_H264_PROFILES = {"High 10", "High 4:2:2", "High 4:4:4 Predictive", "High 10 Intra", "High 4:2:2 Intra"}
# Frame rates a variable-rate source is snapped to (the nearest one to its nominal rate).
STANDARD_FRAME_RATES = (Fraction(24000, 1001), 24, 25, Fraction(30000, 1001), 30, 50, Fraction(60000, 1001), 60)

PROXY_PRESET = "veryfast"
PROXY_CRF = 23
PROXY_MAX_HEIGHT = 1080
PROXY_AUDIO_BITRATE = "128k"
POSTER_MAX_WIDTH = 1280


class ProxyError(RuntimeError):
    """ffmpeg could not make the proxy or poster; the message says why in plain words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _ffmpeg_binary() -> str:
    from django.conf import settings

    return getattr(settings, "FFMPEG_BINARY", "ffmpeg") if settings.configured else "ffmpeg"


def needs_proxy(result: ProbeResult) -> tuple[bool, str]:
    """Whether browsers need a re-encoded copy of this video, and why (empty reason when not)."""
    reasons: list[str] = []
    if result.container not in BROWSER_CONTAINERS:
        reasons.append(f"the {result.container or 'unknown'} container does not play in every browser (needs MP4)")
    if result.video_codec != "h264":
        codec = result.video_codec or "unknown"
        reasons.append(f"the {codec} video codec does not play in every browser (needs H.264)")
    elif result.video_profile in BROWSER_UNSAFE_H264_PROFILES:
        reasons.append(f"the H.264 {result.video_profile} profile does not play in browsers")
    if result.pixel_format and result.pixel_format not in BROWSER_PIXEL_FORMATS:
        reasons.append(f"the {result.pixel_format} pixel format does not play in browsers (needs yuv420p)")
    if result.has_audio and result.audio_codec != "aac":
        reasons.append(f"the {result.audio_codec or 'unknown'} audio codec does not play in every browser (needs AAC)")
    if result.fps_is_variable:
        reasons.append("the frame rate is variable, which breaks frame-accurate seeking")
    if result.container in BROWSER_CONTAINERS and result.faststart is not True:
        reasons.append("the index (moov atom) is at the end of the file, so playback waits for the whole download")
    return (bool(reasons), "; ".join(reasons))


def proxy_frame_rate(result: ProbeResult) -> Fraction:
    """The constant frame rate of the proxy: the source's own, or for a variable source the nearest standard one."""
    if not result.fps_is_variable:
        return Fraction(result.fps).limit_denominator(1001)
    nominal = _nominal_rate(result) or Fraction(result.fps)
    return min(STANDARD_FRAME_RATES, key=lambda rate: abs(Fraction(rate) - nominal))


def make_proxy(
    src: str | Path,
    dst: str | Path,
    *,
    result: ProbeResult,
    progress: ProgressCallback | None = None,
    timeout_s: float | None = None,
) -> ProbeResult:
    """Encode `src` as H.264/AAC MP4 with fast start and a constant frame rate at `dst`.

    `progress` is called with the fraction done (0.0–1.0) as ffmpeg reports its position; if it
    raises, ffmpeg is stopped, nothing is left at `dst` and the exception propagates (that is
    how a caller cancels). Returns the probe of the finished proxy.
    """
    src, dst = Path(src), Path(dst)
    rate = proxy_frame_rate(result)
    video_filter = (
        # -2 keeps the aspect ratio with an even width; the height is made even too because
        # 4:2:0 H.264 cannot have odd dimensions. Rotation metadata is applied by ffmpeg first.
        f"scale=-2:'2*trunc(min(ih\\,{PROXY_MAX_HEIGHT})/2)',format=yuv420p"
    )
    args = [
        "-i",
        str(src),
        "-map",
        "0:v:0",
        *(["-map", "0:a:0"] if result.has_audio else []),
        "-map_chapters",
        "-1",
        "-vf",
        video_filter,
        "-c:v",
        "libx264",
        "-preset",
        PROXY_PRESET,
        "-crf",
        str(PROXY_CRF),
        "-profile:v",
        "high",
        "-pix_fmt",
        "yuv420p",
        "-fps_mode",
        "cfr",
        "-r",
        _rate_arg(rate),
        *(["-c:a", "aac", "-b:a", PROXY_AUDIO_BITRATE, "-ac", "2"] if result.has_audio else []),
        "-movflags",
        "+faststart",
        "-f",
        "mp4",
    ]
    _run_to_temp(args, dst, duration_s=result.duration_s, progress=progress, timeout_s=timeout_s, what="proxy")
    return probe_file(dst)


def make_poster(src: str | Path, dst: str | Path, at_s: float, *, timeout_s: float | None = 120) -> None:
    """Write one JPEG frame of `src` taken at `at_s` seconds (the first frame if that is past the end)."""
    dst = Path(dst)
    for position in dict.fromkeys((max(0.0, at_s), 0.0)):
        args = [
            "-ss",
            f"{position:.3f}",
            "-i",
            str(src),
            "-map",
            "0:v:0",
            "-frames:v",
            "1",
            "-vf",
            f"scale='min({POSTER_MAX_WIDTH}\\,iw)':-2",
            "-c:v",
            "mjpeg",
            "-q:v",
            "3",
            "-pix_fmt",
            "yuvj420p",
            "-f",
            "image2",
            "-update",
            "1",
        ]
        try:
            _run_to_temp(args, dst, duration_s=None, progress=None, timeout_s=timeout_s, what="poster")
            return
        except _EmptyOutputError:
            continue  # seeking past the last frame yields nothing; fall back to the first frame
    raise ProxyError(f"ffmpeg produced no picture for the poster of {Path(src).name}.")


class _EmptyOutputError(ProxyError):
    pass


def _run_to_temp(
    args: list[str],
    dst: Path,
    *,
    duration_s: float | None,
    progress: ProgressCallback | None,
    timeout_s: float | None,
    what: str,
) -> None:
    """Run ffmpeg into a temporary file beside `dst` and rename it into place on success."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dst.parent, prefix=f".{dst.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    argv = [
        _ffmpeg_binary(),
        "-hide_banner",
        "-nostdin",
        "-y",
        "-loglevel",
        "error",
        "-progress",
        "pipe:1",
        "-nostats",
        *args,
        str(tmp),
    ]
    try:
        _run_with_progress(argv, duration_s=duration_s, progress=progress, timeout_s=timeout_s, what=what)
        if tmp.stat().st_size == 0:
            raise _EmptyOutputError(f"ffmpeg wrote an empty {what}.")
        os.replace(tmp, dst)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _run_with_progress(
    argv: list[str],
    *,
    duration_s: float | None,
    progress: ProgressCallback | None,
    timeout_s: float | None,
    what: str,
) -> None:
    # stderr goes to a file so a chatty ffmpeg can never block on a full pipe while we read stdout.
    with tempfile.TemporaryFile() as stderr_file:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr_file, text=True)
        timed_out = threading.Event()

        def _kill_on_timeout() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout_s, _kill_on_timeout) if timeout_s else None
        if timer:
            timer.daemon = True
            timer.start()
        try:
            for line in proc.stdout or ():
                key, _, value = line.strip().partition("=")
                if progress is None or not duration_s:
                    continue
                if key == "out_time_us" and value.lstrip("-").isdigit():
                    progress(min(1.0, max(0.0, int(value) / 1e6 / duration_s)))
                elif key == "progress" and value == "end":
                    progress(1.0)
            returncode = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            if timer:
                timer.cancel()
        if timed_out.is_set():
            raise ProxyError(f"ffmpeg did not finish the {what} within {timeout_s:g} s.")
        if returncode != 0:
            stderr_file.seek(0)
            lines = [ln.strip() for ln in stderr_file.read().decode("utf-8", "replace").splitlines() if ln.strip()]
            detail = " / ".join(lines[-3:]) or f"exit code {returncode}"
            raise ProxyError(f"ffmpeg could not make the {what}: {detail}")


def _nominal_rate(result: ProbeResult) -> Fraction | None:
    for stream in result.raw.get("streams", []):
        if stream.get("codec_type") == "video" and not stream.get("disposition", {}).get("attached_pic"):
            try:
                rate = Fraction(stream.get("r_frame_rate") or "0/1")
            except (ValueError, ZeroDivisionError):
                return None
            return rate if 0 < rate <= 120 else None
    return None


def _rate_arg(rate: Fraction) -> str:
    return str(rate.numerator) if rate.denominator == 1 else f"{rate.numerator}/{rate.denominator}"
