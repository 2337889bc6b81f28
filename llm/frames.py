"""Sample still frames from a time range of a video, as JPEG bytes for a vision model.

One ffmpeg run per range: seek to the centre of the first of `count` equal slices, then let the
`fps` filter emit one frame per slice. Taking slice centres rather than edges keeps frames away
from the range's ends, where padded clips show the neighbouring scene.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from django.conf import settings

FFMPEG_TIMEOUT_S = 300
JPEG_QUALITY = 4  # ffmpeg's -q:v scale, 2 (best) … 31 (worst)


class FrameSamplingError(RuntimeError):
    """ffmpeg could not produce the frames; the message says why."""


def sample_frames(video_path: str | Path, start_s: float, end_s: float, *, count: int, max_side_px: int) -> list[bytes]:
    """`count` JPEG frames evenly spaced over [start_s, end_s], longest side at most `max_side_px`.

    Frames are never upscaled, pixels are made square (anamorphic video is shown as it plays) and
    rotation metadata is applied. A range running past the end of the video gives fewer frames.
    """
    path = Path(video_path)
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if max_side_px < 16:
        raise ValueError(f"max_side_px must be at least 16, got {max_side_px}")
    if start_s < 0 or end_s <= start_s:
        raise ValueError(f"the range must have 0 <= start < end, got {start_s}..{end_s}")
    if not path.is_file():
        raise FrameSamplingError(f"video file not found: {path}")

    slice_s = (end_s - start_s) / count
    first = start_s + slice_s / 2
    box = f"min({max_side_px}\\,iw)"
    box_h = f"min({max_side_px}\\,ih)"
    filters = ",".join(
        [
            f"fps=fps={count}/{end_s - start_s:.6f}",
            "scale=w='trunc(iw*sar/2)*2':h=ih",
            "setsar=1",
            f"scale=w='{box}':h='{box_h}':force_original_aspect_ratio=decrease",
            "format=yuvj420p",
        ]
    )
    with tempfile.TemporaryDirectory(prefix="frames-") as tmp:
        pattern = str(Path(tmp) / "f%04d.jpg")
        argv = [
            getattr(settings, "FFMPEG_BINARY", "ffmpeg"),
            "-hide_banner",
            "-nostdin",
            "-loglevel",
            "error",
            "-ss",
            f"{first:.6f}",
            "-i",
            str(path),
            "-an",
            "-sn",
            "-dn",
            "-vf",
            filters,
            "-frames:v",
            str(count),
            "-q:v",
            str(JPEG_QUALITY),
            "-f",
            "image2",
            pattern,
        ]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=FFMPEG_TIMEOUT_S, check=False)  # noqa: S603
        except subprocess.TimeoutExpired as exc:
            raise FrameSamplingError(
                f"ffmpeg took longer than {FFMPEG_TIMEOUT_S} s to sample frames from {path.name}"
            ) from exc
        except FileNotFoundError as exc:
            raise FrameSamplingError(f"ffmpeg is not installed or not at {argv[0]!r}") from exc
        frames = [p.read_bytes() for p in sorted(Path(tmp).glob("f*.jpg"))]
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise FrameSamplingError(f"ffmpeg could not sample frames from {path.name}: {tail}")
    if not frames:
        raise FrameSamplingError(
            f"no frames in {start_s:g}..{end_s:g} s of {path.name}: the range may lie past the end of the video"
        )
    return frames
