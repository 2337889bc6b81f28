"""Media in a release: probing a copied video's decodable length, and cutting clip files with ffmpeg.

Clip files (`filters["clip_files"]`, off by default) are cut *accurately*: the input is decoded from
the nearest keyframe before the clip and re-encoded (H.264/AAC, fixed settings), so the clip starts
on the first frame at or after `start_s` instead of the keyframe before it, as a stream copy would.
The encoder runs with bit-exact flags and no metadata, so the same clip gives the same bytes.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from django.conf import settings

from videos.storage_files import local_path

FFMPEG_TIMEOUT_S = 1800
FFPROBE_TIMEOUT_S = 120


class ClipCutError(RuntimeError):
    """ffmpeg could not cut the clip; the message carries its reason."""


def _ffmpeg() -> str:
    return getattr(settings, "FFMPEG_BINARY", "ffmpeg")


def _ffprobe() -> str:
    return getattr(settings, "FFPROBE_BINARY", "ffprobe")


def probe_local_duration(path: Path) -> float | None:
    """Seconds the first video stream of a local file lasts (stream duration, else the container's)."""
    argv = [
        _ffprobe(),
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "stream=duration:format=duration",
        "-of",
        "json",
        str(path),
    ]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=FFPROBE_TIMEOUT_S, check=False)  # noqa: S603
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    try:
        info = json.loads(proc.stdout or "{}")
    except ValueError:
        return None
    for value in [s.get("duration") for s in info.get("streams") or []] + [(info.get("format") or {}).get("duration")]:
        try:
            if value not in (None, "N/A"):
                return float(value)
        except (TypeError, ValueError):
            continue
    return None


def probe_video_duration(storage, name: str) -> float | None:
    with local_path(name, storage) as path:
        return probe_local_duration(path)


def cut_clip(source: Path, start_s: float, end_s: float, dest: Path, *, audio: bool = True) -> None:
    """Write [start_s, end_s) of `source` to `dest` (MP4, re-encoded so the cut is frame-accurate)."""
    if end_s <= start_s:
        raise ClipCutError(f"a clip must end after it starts ({start_s}..{end_s})")
    argv = [
        _ffmpeg(),
        "-hide_banner",
        "-nostdin",
        "-loglevel",
        "error",
        "-y",
        # Seeking before -i is accurate when re-encoding: ffmpeg decodes from the keyframe before and
        # drops frames up to start_s.
        "-ss",
        f"{start_s:.6f}",
        "-i",
        str(source),
        "-t",
        f"{end_s - start_s:.6f}",
        "-map",
        "0:v:0",
    ]
    if audio:
        argv += ["-map", "0:a:0?", "-c:a", "aac", "-b:a", "128k", "-flags:a", "+bitexact"]
    else:
        argv += ["-an"]
    argv += [
        "-sn",
        "-dn",
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-crf",
        "18",
        "-pix_fmt",
        "yuv420p",
        "-threads",
        "1",  # one thread: the encoder's output then never depends on scheduling
        "-flags:v",
        "+bitexact",
        "-fflags",
        "+bitexact",
        "-map_metadata",
        "-1",
        "-map_chapters",
        "-1",
        "-movflags",
        "+faststart",
        "-f",
        "mp4",
        str(dest),
    ]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=FFMPEG_TIMEOUT_S, check=False)  # noqa: S603
    except subprocess.TimeoutExpired as exc:
        raise ClipCutError(f"ffmpeg took longer than {FFMPEG_TIMEOUT_S} s to cut {source.name}") from exc
    except FileNotFoundError as exc:
        raise ClipCutError(f"ffmpeg is not installed or not at {argv[0]!r}") from exc
    if proc.returncode != 0 or not dest.exists() or dest.stat().st_size == 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise ClipCutError(f"ffmpeg could not cut {start_s:g}..{end_s:g} s of {source.name}: {tail}")


def cut_clip_into(files, path: str, *, storage, original: str, start_s: float, end_s: float, audio: bool) -> None:
    """Cut a clip of a stored original and store it in the release at `path`."""
    with local_path(original, storage) as source, tempfile.TemporaryDirectory(prefix="clip-") as tmp:
        dest = Path(tmp) / "clip.mp4"
        cut_clip(source, start_s, end_s, dest, audio=audio)
        files.copy_from_local(path, dest)
