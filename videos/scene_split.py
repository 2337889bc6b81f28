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


def detect_scenes(
    path: str | Path,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_scene_len_s: float = DETECTOR_MIN_SCENE_LEN_S,
    progress: ProgressCallback | None = None,
) -> list[tuple[float, float]]:
    """Contiguous scenes of the video as (start, end) seconds, covering it from start to end.

    A video without cuts is one scene. `progress` receives the fraction of frames read (0.0–1.0);
    if it raises, detection stops and the exception propagates.
    """
    from scenedetect import ContentDetector, SceneManager, open_video
    from scenedetect.detector import SceneDetector

    class _ProgressReporter(SceneDetector):
        """Finds no cuts; reports how far through the video the scene manager is."""

        def __init__(self, total_s: float, callback: ProgressCallback) -> None:
            super().__init__()
            self._total_s = total_s
            self._callback = callback
            self._last_reported = -1.0

        def process_frame(self, timecode, frame_img):
            fraction = min(1.0, timecode.seconds / self._total_s) if self._total_s > 0 else 0.0
            if fraction - self._last_reported >= PROGRESS_STEP:
                self._last_reported = fraction
                self._callback(fraction)
            return []

    path = Path(path)
    if not path.is_file():
        raise SceneDetectionError(f"The video file {path.name} does not exist.")
    try:
        video = open_video(str(path), backend="opencv")
    except Exception as exc:  # PySceneDetect raises OSError or its own VideoOpenFailure
        raise SceneDetectionError(f"The video {path.name} could not be opened for scene detection: {exc}") from exc

    manager = SceneManager()
    fps = float(video.frame_rate) or 25.0
    if progress is not None:
        total_s = video.duration.seconds if video.duration is not None else 0.0
        manager.add_detector(_ProgressReporter(total_s, progress))
    manager.add_detector(ContentDetector(threshold=threshold, min_scene_len=max(1, round(min_scene_len_s * fps))))
    frames = manager.detect_scenes(video=video)
    if frames == 0:
        raise SceneDetectionError(f"No frames could be decoded from {path.name}.")
    if progress is not None:
        progress(1.0)
    scenes = manager.get_scene_list(start_in_scene=True)
    return [(_ms(start.seconds), _ms(end.seconds)) for start, end in scenes]


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
