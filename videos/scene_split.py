"""Scene detection with PySceneDetect and the pure rules that turn scenes into clips.

`detect_scenes` reads the video once (OpenCV backend, frames downscaled by PySceneDetect) and
returns contiguous (start, end) scenes in seconds. `plan_clips` is pure arithmetic on those
numbers, so its rules are exact and tested without any video:

1. Scenes shorter than `min_scene_s` are merged, one at a time, always taking the earliest short
   scene first: it joins the scene *before* it; the first scene, having none before it, joins the
   scene *after* it. Merged scenes add up, so a run of short scenes becomes one long enough scene.
   This repeats until no scene is short or only one scene is left (a video shorter than
   `min_scene_s` yields a single clip).
2. Each merged scene is padded by `pad_s` at both ends and clamped to [0, duration], so adjacent
   clips overlap by 2 × pad_s.

All times are rounded to milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_THRESHOLD = 27.0
DEFAULT_MIN_SCENE_S = 2.0
DEFAULT_PAD_S = 0.5
# PySceneDetect will not report two cuts closer than this; clips merge short scenes anyway.
DETECTOR_MIN_SCENE_LEN_S = 0.4
# Progress is reported at most this often, as a fraction of the video.
PROGRESS_STEP = 0.01

ProgressCallback = Callable[[float], None]


class SceneDetectionError(RuntimeError):
    """The video could not be read for scene detection; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ClipPlan:
    """One clip to create: padded range plus the (merged) scene it came from."""

    index: int
    start: float
    end: float
    scene_start: float
    scene_end: float

    @property
    def duration(self) -> float:
        return round(self.end - self.start, 3)


def _ms(value: float) -> float:
    # Adding 0.0 turns a -0.0 from rounding into 0.0, which compares and prints as people expect.
    return round(value, 3) + 0.0


# ffmpeg scales frames to this width before the detector sees them (PySceneDetect's own
# auto-downscale aims at about 256 px too): decoding and scaling run in C on every core, and
# Python only scores small frames, so detection costs little more than a plain decode.
DETECTION_WIDTH = 256


def _stream_facts(path: Path) -> tuple[float, int, int, float]:
    """(fps, width, height, duration_s) of the first video stream, from ffprobe."""
    import json
    import subprocess

    from django.conf import settings

    probe = getattr(settings, "FFPROBE_BINARY", "ffprobe") if settings.configured else "ffprobe"
    done = subprocess.run(
        [
            probe,
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=avg_frame_rate,r_frame_rate,width,height,duration:format=duration",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise SceneDetectionError(
            f"The video {path.name} could not be opened for scene detection: {done.stderr.strip()[-200:]}"
        )
    info = json.loads(done.stdout or "{}")
    streams = info.get("streams") or []
    if not streams:
        raise SceneDetectionError(f"{path.name} has no video stream to detect scenes in.")
    stream = streams[0]

    def rate(text: str | None) -> float:
        try:
            num, _, den = (text or "0/0").partition("/")
            return float(num) / float(den or 1)
        except (ValueError, ZeroDivisionError):
            return 0.0

    fps = rate(stream.get("avg_frame_rate")) or rate(stream.get("r_frame_rate")) or 25.0
    duration = float(stream.get("duration") or info.get("format", {}).get("duration") or 0.0)
    return fps, int(stream["width"]), int(stream["height"]), duration


def detect_scenes(
    path: str | Path,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_scene_len_s: float = DETECTOR_MIN_SCENE_LEN_S,
    progress: ProgressCallback | None = None,
) -> list[tuple[float, float]]:
    """Contiguous scenes of the video as (start, end) seconds, covering it from start to end.

    PySceneDetect's ContentDetector scores every frame; ffmpeg decodes and downscales them.
    Frame n is at n / fps, so give it a constant-frame-rate file (the proxy of a VFR original).
    A video without cuts is one scene. `progress` receives the fraction of frames read (0.0–1.0);
    if it raises, detection stops and the exception propagates.
    """
    import subprocess

    import numpy
    from django.conf import settings
    from scenedetect import ContentDetector, FrameTimecode

    path = Path(path)
    if not path.is_file():
        raise SceneDetectionError(f"The video file {path.name} does not exist.")
    fps, width, height, duration = _stream_facts(path)
    out_w = min(DETECTION_WIDTH, width) // 2 * 2 or 2
    out_h = max(2, round(height * out_w / width / 2) * 2)
    frame_bytes = out_w * out_h * 3
    ffmpeg = getattr(settings, "FFMPEG_BINARY", "ffmpeg") if settings.configured else "ffmpeg"
    cmd = [
        # Skipping H.264/HEVC deblocking saves a quarter of the decode and barely moves frame scores.
        ffmpeg,
        "-nostdin",
        "-v",
        "error",
        "-threads",
        "0",
        "-skip_loop_filter",
        "all",
        "-i",
        str(path),
        "-map",
        "0:v:0",
        "-vf",
        f"scale={out_w}:{out_h}:flags=fast_bilinear",
        "-pix_fmt",
        "bgr24",
        "-f",
        "rawvideo",
        "-",
    ]
    detector = ContentDetector(threshold=threshold, min_scene_len=max(1, round(min_scene_len_s * fps)))
    total_frames = max(1, round(duration * fps))
    cuts: list[float] = []
    frame_num = 0
    last_reported = -1.0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=frame_bytes * 4)
    try:
        while True:
            data = proc.stdout.read(frame_bytes)
            if len(data) < frame_bytes:
                break
            frame = numpy.frombuffer(data, dtype=numpy.uint8).reshape(out_h, out_w, 3)
            cuts += [tc.seconds for tc in detector.process_frame(FrameTimecode(frame_num, fps), frame)]
            frame_num += 1
            if progress is not None:
                fraction = min(1.0, frame_num / total_frames)
                if fraction - last_reported >= PROGRESS_STEP:
                    last_reported = fraction
                    progress(fraction)
        if frame_num:
            cuts += [tc.seconds for tc in detector.post_process(FrameTimecode(frame_num - 1, fps))]
    finally:
        if proc.poll() is None:
            proc.kill()
        stderr = proc.communicate()[1].decode(errors="replace")
    if frame_num == 0:
        raise SceneDetectionError(f"No frames could be decoded from {path.name}: {stderr.strip()[-200:]}")
    if progress is not None:
        progress(1.0)
    end = frame_num / fps
    bounds = [0.0, *sorted(c for c in set(cuts) if 0 < c < end), end]
    return [(_ms(a), _ms(b)) for a, b in zip(bounds, bounds[1:], strict=False)]


def merge_short_scenes(
    scenes: Sequence[tuple[float, float]], *, min_scene_s: float = DEFAULT_MIN_SCENE_S
) -> list[tuple[float, float]]:
    """Apply rule 1 of the module docstring: merge every scene shorter than `min_scene_s` into a neighbour."""
    merged = [(_ms(start), _ms(end)) for start, end in scenes]
    while len(merged) > 1:
        short = next((i for i, (start, end) in enumerate(merged) if _ms(end - start) < min_scene_s), None)
        if short is None:
            break
        if short == 0:
            # The first scene has no scene before it: it joins the next one.
            merged[0:2] = [(merged[0][0], merged[1][1])]
        else:
            merged[short - 1 : short + 1] = [(merged[short - 1][0], merged[short][1])]
    return merged


def plan_clips(
    scenes: Sequence[tuple[float, float]],
    *,
    duration: float,
    min_scene_s: float = DEFAULT_MIN_SCENE_S,
    pad_s: float = DEFAULT_PAD_S,
) -> list[ClipPlan]:
    """Clips for a video of `duration` seconds from its detected scenes (rules in the module docstring).

    Scenes are sorted, clamped to [0, duration] and empty ones dropped first; with none left the
    whole video is one scene.
    """
    if duration <= 0:
        raise ValueError(f"duration must be positive, got {duration}")
    if min_scene_s < 0 or pad_s < 0:
        raise ValueError("min_scene_s and pad_s must not be negative")
    duration = _ms(duration)
    cleaned = sorted(
        (_ms(max(0.0, start)), _ms(min(duration, end)))
        for start, end in scenes
        if _ms(min(duration, end)) > _ms(max(0.0, start))
    )
    if not cleaned:
        cleaned = [(0.0, duration)]
    clips = []
    for index, (scene_start, scene_end) in enumerate(merge_short_scenes(cleaned, min_scene_s=min_scene_s)):
        clips.append(
            ClipPlan(
                index=index,
                start=_ms(max(0.0, scene_start - pad_s)),
                end=_ms(min(duration, scene_end + pad_s)),
                scene_start=scene_start,
                scene_end=scene_end,
            )
        )
    return clips
