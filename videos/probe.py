"""Read a media file's facts with ffprobe and refuse, with a human reason, what is not a usable video.

`probe_file` runs three short ffprobe passes: the container and stream facts, a demux-only sample
of video packet timestamps (variable frame rate), and a decode of the first frames and of the last
second (undecodable streams and files cut short). A file that fails any check raises `ProbeError`
whose `reason` is written for the person who uploaded it and whose `problem` is a stable code.
Nothing here touches the database: `apply_probe` only copies fields onto an unsaved-or-saved Video.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
import struct
import subprocess
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from videos.models import Video

# Limits beyond which a file is refused as absurd rather than processed for hours.
MAX_DURATION_S = 12 * 3600
MAX_DIMENSION_PX = 8192
MAX_FPS = 480.0
# A single picture in a video container is a still image, not something to ask questions about.
MIN_VIDEO_FRAMES = 2

PROBE_TIMEOUT_S = 120
# Packet timestamps sampled for the variable-frame-rate check (demux only, no decoding).
VFR_SAMPLE_S = 10
# Frame durations further than this from the median (and more than the timestamp rounding) count as irregular.
VFR_DEVIATION = 0.10
VFR_MIN_JITTER_S = 0.0015
VFR_IRREGULAR_SHARE = 0.05
# r_frame_rate and avg_frame_rate further apart than this mean the frame rate varies.
VFR_RATE_TOLERANCE = 0.01
# The decode check reads the last TAIL_CHECK_S seconds; the last frame decoded must lie within
# TAIL_TOLERANCE_S of the stated end, or the file was cut short.
TAIL_CHECK_S = 1.0
TAIL_TOLERANCE_S = 2.0
HEAD_CHECK_PACKETS = 5

HASH_CHUNK_BYTES = 1024 * 1024

# ffprobe formats that hold one picture, not a video.
_STILL_IMAGE_FORMATS = {"image2", "png_pipe", "jpeg_pipe", "bmp_pipe", "webp_pipe", "tiff_pipe", "gif_pipe", "svg_pipe"}
_STILL_IMAGE_CODECS = {"png", "mjpeg", "bmp", "webp", "tiff", "jpeg2000", "jpegls", "svg"}
# Messages in ffprobe's stderr that mean the data stops before the container says it should.
_TRUNCATION_MARKERS = ("ended prematurely", "partial file", "truncat", "end of file", "invalid nal unit size")


class ProbeProblem(StrEnum):
    """Stable codes for why a file was refused (the UI filters on them; the reason text explains)."""

    MISSING = "missing"
    EMPTY = "empty"
    NOT_MEDIA = "not_media"
    STILL_IMAGE = "still_image"
    AUDIO_ONLY = "audio_only"
    NO_STREAMS = "no_streams"
    TRUNCATED = "truncated"
    UNDECODABLE = "undecodable"
    TOO_LONG = "too_long"
    TOO_LARGE = "too_large"
    NO_FRAMES = "no_frames"
    NO_DURATION = "no_duration"
    PROBE_FAILED = "probe_failed"


class ProbeError(Exception):
    """The file cannot be used as a video; `reason` says why in words a person can act on."""

    def __init__(self, reason: str, *, problem: ProbeProblem = ProbeProblem.PROBE_FAILED) -> None:
        super().__init__(reason)
        self.reason = reason
        self.problem = problem


@dataclass(frozen=True)
class ProbeResult:
    """What ffprobe says about a usable video. Field names match videos.models.Video."""

    duration_s: float
    fps: float
    fps_is_variable: bool
    frame_count: int
    width: int
    height: int
    # Display rotation in degrees as ffprobe reports the display matrix (counter-clockwise,
    # normalised to 0, 90, 180 or 270); browsers and ffmpeg apply it themselves when playing.
    rotation: int
    container: str
    video_codec: str
    audio_codec: str
    has_audio: bool
    start_time_s: float
    raw: dict = field(default_factory=dict, compare=False, repr=False)
    # Not stored on Video, but needed to decide whether browsers can play the file.
    pixel_format: str = ""
    video_profile: str = ""
    # For MP4/MOV: whether the index (moov atom) comes before the media data; None for other containers.
    faststart: bool | None = None
    frame_count_is_estimate: bool = False


@dataclass(frozen=True)
class Box:
    """One top-level MP4/MOV box (atom)."""

    kind: str
    offset: int
    size: int


def _ffprobe_binary() -> str:
    from django.conf import settings

    return getattr(settings, "FFPROBE_BINARY", "ffprobe") if settings.configured else "ffprobe"


def sha256_file(path: str | Path, chunk: int = HASH_CHUNK_BYTES) -> str:
    """Hex SHA-256 of a file, read in chunks so a multi-GB upload never sits in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def read_mp4_boxes(path: str | Path, *, limit: int = 64) -> list[Box] | None:
    """Top-level boxes of an MP4/MOV file, or None if the file does not start like one.

    Only box headers are read (seeking over the payloads), so this is instant on any size.
    A box whose stated size runs past the end of the file is still listed: callers use that
    to recognise a file that was cut short.
    """
    path = Path(path)
    file_size = path.stat().st_size
    boxes: list[Box] = []
    with open(path, "rb") as handle:
        offset = 0
        while offset + 8 <= file_size and len(boxes) < limit:
            handle.seek(offset)
            header = handle.read(16)
            size, raw_kind = struct.unpack(">I4s", header[:8])
            try:
                kind = raw_kind.decode("ascii")
            except UnicodeDecodeError:
                break
            if not kind.isprintable():
                break
            if size == 1:
                if len(header) < 16:
                    break
                size = struct.unpack(">Q", header[8:16])[0]
            elif size == 0:
                size = file_size - offset
            if size < 8:
                break
            boxes.append(Box(kind, offset, size))
            offset += size
    if not boxes or boxes[0].kind not in {"ftyp", "moov", "mdat", "wide", "free", "skip"}:
        return None
    return boxes


def mp4_faststart(boxes: list[Box] | None) -> bool | None:
    """True when the moov box precedes the first mdat box, so playback can start while downloading."""
    if not boxes:
        return None
    kinds = [box.kind for box in boxes]
    if "moov" not in kinds or "mdat" not in kinds:
        return None
    return kinds.index("moov") < kinds.index("mdat")


def probe_file(path: str | Path) -> ProbeResult:
    """Probe a file and return its facts, or raise ProbeError with the reason it is not a usable video."""
    path = Path(path)
    if not path.exists():
        raise ProbeError(
            f"The file {path.name} does not exist (it may have been moved or deleted).", problem=ProbeProblem.MISSING
        )
    if not path.is_file():
        raise ProbeError(
            f"{path.name} is a folder or a special file, not a video file.", problem=ProbeProblem.NOT_MEDIA
        )
    size = path.stat().st_size
    if size == 0:
        raise ProbeError(
            "The file is empty (0 bytes): the upload or copy did not transfer any data.", problem=ProbeProblem.EMPTY
        )

    boxes = _safe_mp4_boxes(path)
    info, stderr = _run_ffprobe_json(
        path,
        ["-show_format", "-show_streams", "-show_error"],
    )
    if "format" not in info:
        raise _unreadable_error(path, info, stderr, boxes)

    fmt = info["format"]
    streams = info.get("streams", [])
    format_name = fmt.get("format_name", "")
    video_streams = [
        s for s in streams if s.get("codec_type") == "video" and not s.get("disposition", {}).get("attached_pic")
    ]
    audio_streams = [s for s in streams if s.get("codec_type") == "audio"]

    if format_name in _STILL_IMAGE_FORMATS or (
        len(video_streams) == 1
        and video_streams[0].get("codec_name") in _STILL_IMAGE_CODECS
        and not audio_streams
        and _int_or_none(video_streams[0].get("nb_frames")) in (None, 1)
        and _float_or_none(fmt.get("duration")) in (None, 0.0)
    ):
        kind = (video_streams[0].get("codec_name") if video_streams else format_name.removesuffix("_pipe")) or "image"
        raise ProbeError(f"This is a still image ({kind.upper()}), not a video.", problem=ProbeProblem.STILL_IMAGE)
    if not video_streams:
        if audio_streams:
            codec = audio_streams[0].get("codec_name", "unknown codec")
            raise ProbeError(f"The file has only audio ({codec}) and no video stream.", problem=ProbeProblem.AUDIO_ONLY)
        if any(s.get("codec_type") == "video" for s in streams):
            raise ProbeError("The file holds only a cover picture, no video.", problem=ProbeProblem.STILL_IMAGE)
        if _mp4_is_cut_short(boxes, size):
            raise _truncated_mp4_error()
        raise ProbeError(
            "The file contains no video or audio streams: it is empty, unfinished or its header is damaged.",
            problem=ProbeProblem.NO_STREAMS,
        )

    video = video_streams[0]
    video_codec = video.get("codec_name") or ""
    if not video_codec or video_codec == "none":
        tag = video.get("codec_tag_string") or "unknown"
        raise ProbeError(
            f"The video stream uses a codec this server cannot decode (codec tag {tag!r}).",
            problem=ProbeProblem.UNDECODABLE,
        )

    width = _int_or_none(video.get("width")) or 0
    height = _int_or_none(video.get("height")) or 0
    if width <= 0 or height <= 0:
        raise ProbeError(
            f"The {video_codec} video stream has no picture size; it cannot be decoded.",
            problem=ProbeProblem.UNDECODABLE,
        )
    if width > MAX_DIMENSION_PX or height > MAX_DIMENSION_PX:
        raise ProbeError(
            f"The picture is {width}×{height} pixels; the limit is {MAX_DIMENSION_PX} pixels per side.",
            problem=ProbeProblem.TOO_LARGE,
        )

    start_time_s = _float_or_none(fmt.get("start_time")) or 0.0
    duration_s = _float_or_none(fmt.get("duration")) or _float_or_none(video.get("duration"))
    if duration_s is None or not math.isfinite(duration_s):
        if _mp4_is_cut_short(boxes, size):
            raise _truncated_mp4_error()
        raise ProbeError("ffprobe cannot tell how long this video is.", problem=ProbeProblem.NO_DURATION)
    if duration_s > MAX_DURATION_S:
        raise ProbeError(
            f"The file says it lasts {_hms(duration_s)}; the limit is {_hms(MAX_DURATION_S)}.",
            problem=ProbeProblem.TOO_LONG,
        )
    if duration_s <= 0:
        raise ProbeError("The video stream has no frames (its duration is 0 s).", problem=ProbeProblem.NO_FRAMES)

    avg_rate = _rate(video.get("avg_frame_rate"))
    real_rate = _rate(video.get("r_frame_rate"))
    fps = avg_rate or real_rate
    if not fps:
        raise ProbeError("ffprobe cannot tell the frame rate of the video stream.", problem=ProbeProblem.UNDECODABLE)
    if fps > MAX_FPS:
        raise ProbeError(
            f"The video claims {fps:g} frames per second; the limit is {MAX_FPS:g}.", problem=ProbeProblem.TOO_LARGE
        )

    stated_frames = _int_or_none(video.get("nb_frames"))
    if stated_frames == 0:
        raise ProbeError("The video stream has no frames.", problem=ProbeProblem.NO_FRAMES)
    # Without a stated count, estimate from the video stream's own length: audio may run longer.
    frame_count = stated_frames if stated_frames else max(1, round((_stream_duration(video) or duration_s) * fps))
    if frame_count < MIN_VIDEO_FRAMES:
        raise ProbeError(
            "The video has a single frame: it is a still picture, not a video.", problem=ProbeProblem.STILL_IMAGE
        )

    if _mp4_is_cut_short(boxes, size):
        raise _truncated_mp4_error()

    video_start_s = _float_or_none(video.get("start_time"))
    video_end_s = (start_time_s if video_start_s is None else video_start_s) + (_stream_duration(video) or duration_s)
    packet_times = _video_packet_times(path, video)
    _check_decodes(
        path, video, video_codec=video_codec, video_end_s=video_end_s, fps=fps, has_packets=bool(packet_times)
    )

    sample_irregular = _timestamps_irregular(packet_times)
    rates_differ = bool(avg_rate and real_rate and abs(avg_rate - real_rate) > VFR_RATE_TOLERANCE * real_rate)

    audio = audio_streams[0] if audio_streams else None
    raw = {k: v for k, v in info.items() if k != "error"}
    return ProbeResult(
        duration_s=round(duration_s, 6),
        fps=round(fps, 6),
        fps_is_variable=rates_differ or sample_irregular,
        frame_count=frame_count,
        width=width,
        height=height,
        rotation=_rotation(video),
        container=_container_name(format_name, fmt, path),
        video_codec=video_codec,
        audio_codec=(audio.get("codec_name") or "unknown") if audio else "",
        has_audio=audio is not None,
        start_time_s=round(start_time_s, 6),
        raw=raw,
        pixel_format=video.get("pix_fmt") or "",
        video_profile=video.get("profile") or "",
        faststart=mp4_faststart(boxes),
        frame_count_is_estimate=not stated_frames,
    )


def apply_probe(video: Video, result: ProbeResult) -> Video:
    """Copy a probe's facts onto a Video instance; the caller decides when to save."""
    video.duration_s = result.duration_s
    video.fps = result.fps
    video.fps_is_variable = result.fps_is_variable
    video.frame_count = result.frame_count
    video.width = result.width
    video.height = result.height
    video.rotation = result.rotation
    video.container = result.container[:100]
    video.video_codec = result.video_codec[:50]
    video.audio_codec = result.audio_codec[:50]
    video.has_audio = result.has_audio
    video.start_time_s = result.start_time_s
    video.probe = result.raw
    return video


# --- ffprobe passes -------------------------------------------------------------------------


def _run_ffprobe_json(path: Path, args: list[str]) -> tuple[dict[str, Any], str]:
    argv = [_ffprobe_binary(), "-hide_banner", "-v", "error", "-print_format", "json", *args, str(path)]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProbeError(
            f"ffprobe did not finish within {PROBE_TIMEOUT_S} s; the file is probably damaged.",
            problem=ProbeProblem.PROBE_FAILED,
        ) from exc
    stderr = proc.stderr.decode("utf-8", "replace")
    try:
        info = json.loads(proc.stdout.decode("utf-8", "replace") or "{}")
    except json.JSONDecodeError:
        info = {}
    return info, stderr


def _check_decodes(
    path: Path, video: dict, *, video_codec: str, video_end_s: float, fps: float, has_packets: bool
) -> None:
    """Decode the first frames and the last second: catches garbage streams and files cut short."""
    tail_start = max(0.0, video_end_s - TAIL_CHECK_S)
    info, stderr = _run_ffprobe_json(
        path,
        [
            "-select_streams",
            str(video["index"]),
            "-read_intervals",
            f"%+#{HEAD_CHECK_PACKETS},{tail_start:.3f}%",
            "-show_entries",
            "frame=best_effort_timestamp_time,pts_time",
        ],
    )
    times = [t for t in (_frame_time(frame) for frame in info.get("frames", [])) if t is not None]
    lowered = stderr.lower()
    if not times and not has_packets:
        raise ProbeError("The video stream has no frames: it holds no picture data.", problem=ProbeProblem.NO_FRAMES)
    if not times:
        detail = _last_line(stderr)
        raise ProbeError(
            f"The {video_codec} video stream cannot be decoded: no picture could be read"
            + (f" (ffmpeg: {detail})." if detail else "."),
            problem=ProbeProblem.UNDECODABLE,
        )
    last = max(times)
    tolerance = max(TAIL_TOLERANCE_S, 3.0 / fps)
    truncation_logged = any(marker in lowered for marker in _TRUNCATION_MARKERS)
    if last < video_end_s - tolerance and not truncation_logged:
        # Some files cannot seek near their end (an MPEG-TS with a single keyframe, for one): before
        # calling the file truncated, check that its packets reach the end (demux only, no decoding).
        last_packet = _last_video_packet_time(path, video)
        if last_packet is not None and last_packet >= video_end_s - tolerance:
            return
        last = max(last, last_packet or 0.0)
    if last < video_end_s - tolerance:
        raise ProbeError(
            f"The file is truncated: it says it lasts {_hms(video_end_s)} but the pictures stop at {_hms(last)}. "
            "The upload or copy probably stopped early; upload the complete file again.",
            problem=ProbeProblem.TRUNCATED,
        )
    if truncation_logged and last < video_end_s - TAIL_CHECK_S:
        raise ProbeError(
            f"The file is truncated: the data ends before its stated end ({_last_line(stderr)}).",
            problem=ProbeProblem.TRUNCATED,
        )


def _last_video_packet_time(path: Path, video: dict) -> float | None:
    """Timestamp of the last video packet in the whole file (reads all of it, so only a fallback)."""
    info, _ = _run_ffprobe_json(
        path, ["-select_streams", str(video["index"]), "-show_entries", "packet=pts_time,dts_time"]
    )
    stamps = [
        t
        for packet in info.get("packets", [])
        if (t := _float_or_none(packet.get("pts_time")) or _float_or_none(packet.get("dts_time"))) is not None
    ]
    return max(stamps) if stamps else None


def _video_packet_times(path: Path, video: dict) -> list[float]:
    """Sorted timestamps of the video packets in the first seconds (demux only, so this is cheap)."""
    info, _ = _run_ffprobe_json(
        path,
        [
            "-select_streams",
            str(video["index"]),
            "-read_intervals",
            f"%+{VFR_SAMPLE_S}",
            "-show_entries",
            "packet=pts_time",
        ],
    )
    return sorted(t for t in (_float_or_none(p.get("pts_time")) for p in info.get("packets", [])) if t is not None)


def _timestamps_irregular(stamps: list[float]) -> bool:
    """Whether frame durations vary by more than timestamp rounding explains."""
    deltas = [b - a for a, b in zip(stamps, stamps[1:], strict=False) if b > a]
    # The last packets of a sample may be cut off by the interval; too few deltas prove nothing.
    if len(deltas) < 8:
        return False
    median = statistics.median(deltas)
    allowed = max(VFR_DEVIATION * median, VFR_MIN_JITTER_S)
    irregular = sum(1 for d in deltas if abs(d - median) > allowed)
    return irregular / len(deltas) > VFR_IRREGULAR_SHARE


# --- reasons for files ffprobe cannot open -----------------------------------------------------


def _unreadable_error(path: Path, info: dict, stderr: str, boxes: list[Box] | None) -> ProbeError:
    # A file that starts like an MP4 but that ffprobe cannot open lost its end, index included.
    if boxes and (_mp4_is_cut_short(boxes, path.stat().st_size) or "moov" not in {b.kind for b in boxes}):
        return _truncated_mp4_error()
    sniffed = _sniff_kind(path)
    detail = info.get("error", {}).get("string") or _last_line(stderr) or "unknown format"
    if sniffed:
        return ProbeError(f"This is not a video file: it looks like {sniffed}.", problem=ProbeProblem.NOT_MEDIA)
    return ProbeError(f"This is not a video file ffmpeg can read ({detail}).", problem=ProbeProblem.NOT_MEDIA)


def _truncated_mp4_error() -> ProbeError:
    return ProbeError(
        "The file is truncated: it starts like an MP4/MOV video but its index (moov atom) is missing or "
        "cut off. The upload or copy probably stopped early; upload the complete file again.",
        problem=ProbeProblem.TRUNCATED,
    )


def _safe_mp4_boxes(path: Path) -> list[Box] | None:
    try:
        return read_mp4_boxes(path)
    except (OSError, struct.error):
        return None


def _mp4_is_cut_short(boxes: list[Box] | None, file_size: int) -> bool:
    """An MP4 whose last box claims more bytes than the file has, or whose moov never arrived."""
    if not boxes:
        return False
    last = boxes[-1]
    if last.offset + last.size > file_size:
        return True
    kinds = {box.kind for box in boxes}
    return "mdat" in kinds and "moov" not in kinds


_MAGIC = (
    (b"%PDF", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"\x7fELF", "a program (ELF executable)"),
    (b"MZ", "a Windows program"),
    (b"<!DOCTYPE html", "a web page (HTML)"),
    (b"<html", "a web page (HTML)"),
)


def _sniff_kind(path: Path) -> str | None:
    """A friendly name for common non-video files, from their first bytes."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    stripped = head.lstrip()
    for magic, name in _MAGIC:
        if head.startswith(magic) or stripped[:32].lower().startswith(magic.lower()):
            return name
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text and all(ch.isprintable() or ch in "\r\n\t" for ch in text.lstrip("\ufeff")):
        return "a text file"
    return None


# --- small conversions -----------------------------------------------------------------------


def _container_name(format_name: str, fmt: dict, path: Path) -> str:
    names = format_name.split(",")
    if "mov" in names and "mp4" in names:
        brand = (fmt.get("tags", {}).get("major_brand") or "").strip().lower()
        if brand == "qt":
            return "mov"
        return "m4a" if brand == "m4a" else "mp4"
    if "matroska" in names:
        return "webm" if path.suffix.lower() == ".webm" else "matroska"
    return names[0] if names else ""


def _rotation(video: dict) -> int:
    for side_data in video.get("side_data_list", []) or []:
        if "rotation" in side_data:
            return int(round(float(side_data["rotation"]))) % 360
    tag = video.get("tags", {}).get("rotate")
    if tag is not None:
        try:
            # The legacy tag counts clockwise; the display matrix (above) counter-clockwise.
            return (-int(round(float(tag)))) % 360
        except ValueError:
            return 0
    return 0


def _stream_duration(stream: dict) -> float | None:
    duration = _float_or_none(stream.get("duration"))
    if duration:
        return duration
    # Matroska keeps per-stream durations in a tag such as "00:00:03.600000000".
    tags = stream.get("tags", {})
    text = tags.get("DURATION") or tags.get("duration")
    if not text:
        return None
    try:
        hours, minutes, seconds = text.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    except ValueError:
        return None


def _frame_time(frame: dict) -> float | None:
    return _float_or_none(frame.get("best_effort_timestamp_time")) or _float_or_none(frame.get("pts_time"))


def _rate(text: str | None) -> float | None:
    if not text or text in {"0/0", "0/1"}:
        return None
    try:
        value = float(Fraction(text))
    except (ValueError, ZeroDivisionError):
        return None
    return value if value > 0 else None


def _float_or_none(value: Any) -> float | None:
    if value in (None, "", "N/A"):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _int_or_none(value: Any) -> int | None:
    if value in (None, "", "N/A"):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


_LOG_PREFIX = re.compile(r"^\[[^\]]* @ 0x[0-9a-f]+\]\s*")


def _last_line(text: str) -> str:
    """ffmpeg's last complaint, without the "[h264 @ 0x55…]" prefix that means nothing to people."""
    lines = [_LOG_PREFIX.sub("", line.strip()) for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _hms(seconds: float) -> str:
    seconds = max(0.0, seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{int(hours)} h {int(minutes):02d} min"
    if minutes:
        return f"{int(minutes)} min {secs:04.1f} s"
    return f"{secs:.2f} s"
