"""What a model is shown of a time range of a video: its frames, its subtitles and where it lies.

Drafting and the quality gate both build their prompts from a `ClipContext`, so the judge sees a
clip exactly as the model that drafted it did. This module takes plain values (a local file path,
times, timed lines): videos/ already imports llm/, so reading a Video's files and cues is the
caller's part.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from .frames import sample_frames
from .prompts import text_excerpt


def seconds_text(t: float) -> str:
    """A time as prompts write it: one decimal at most, no trailing zeros ("12", "3.5")."""
    return f"{t:.1f}".rstrip("0").rstrip(".")


def timed_lines_text(rows: Iterable[tuple[float, str]]) -> str:
    """Timed lines (subtitle cues, comments) as "[t s] text", whole lines up to the prompt limit."""
    return text_excerpt(f"[{seconds_text(t)} s] {text}" for t, text in rows)


@dataclass(frozen=True, kw_only=True)
class ClipContext:
    start_s: float
    end_s: float
    frames: tuple[bytes, ...]
    subtitles: str  # the cues of the range, as timed lines

    @property
    def start_text(self) -> str:
        return seconds_text(self.start_s)

    @property
    def end_text(self) -> str:
        return seconds_text(self.end_s)


def clip_context_build(
    *,
    path: str | os.PathLike,
    start_s: float,
    end_s: float,
    cues: Iterable[tuple[float, str]],
    frame_count: int,
    max_side_px: int,
    duration_s: float | None = None,
    fps: float | None = None,
) -> ClipContext:
    """Sample `frame_count` frames of [start_s, end_s] from the file at `path` and pair them with `cues`.

    `duration_s` and `fps` are the video's, when known; the context keeps the range as asked.
    Raises FrameSamplingError when ffmpeg cannot produce the frames.
    """
    sample_end = end_s
    if duration_s:
        # A range that ends exactly at the end of the video loses its last frame in ffmpeg's fps
        # filter; ending one frame earlier keeps the count the project asks for.
        last = duration_s - 1.0 / (fps or 25.0)
        if last > start_s:
            sample_end = min(end_s, last)
    frames = sample_frames(path, start_s, sample_end, count=frame_count, max_side_px=max_side_px)
    return ClipContext(start_s=start_s, end_s=end_s, frames=tuple(frames), subtitles=timed_lines_text(cues))
