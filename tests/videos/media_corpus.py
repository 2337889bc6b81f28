"""A corpus of bad video inputs, built by the test suite in a temporary folder.

Each case is a file (or a missing path) that people really upload by mistake or that a broken
copy really produces, with the ProbeProblem the probe must report and a phrase its reason must
contain. `build_corpus` makes them all from one small generated video, so no binary fixtures
live in the repository.
"""

from __future__ import annotations

import random
import struct
import subprocess
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from videos.probe import ProbeProblem, read_mp4_boxes
from videos.synthetic import SceneSpec, make_scene_video

SMALL = {"width": 160, "height": 90, "fps": 25}


@dataclass(frozen=True)
class BadInput:
    name: str
    path: Path
    problem: ProbeProblem
    reason_contains: str


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", *args], check=True)


def lavfi(source: str, *args: str | Path) -> None:
    """Render a lavfi source; the last argument is the output path."""
    ffmpeg("-f", "lavfi", "-i", source, *(str(arg) for arg in args))


def truncate_half(src: Path, dst: Path) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: len(data) // 2])
    return dst


def patch_matroska_duration(src: Path, dst: Path, seconds: float) -> Path:
    """Rewrite the Segment Duration element (ID 0x4489, an 8-byte float in milliseconds)."""
    data = bytearray(src.read_bytes())
    at = data.find(b"\x44\x89\x88")
    if at < 0:
        raise ValueError(f"{src.name} has no 8-byte Matroska Duration element")
    data[at + 3 : at + 11] = struct.pack(">d", seconds * 1000.0)
    dst.write_bytes(bytes(data))
    return dst


def replace_once(src: Path, dst: Path, old: bytes, new: bytes) -> Path:
    if len(old) != len(new):
        raise ValueError("replacement must keep the file layout: same length")
    data = src.read_bytes()
    if data.count(old) != 1:
        raise ValueError(f"{old!r} occurs {data.count(old)} times in {src.name}")
    dst.write_bytes(data.replace(old, new))
    return dst


def scramble(src: Path, dst: Path, *, start: int, end: int | None = None, seed: int = 1) -> Path:
    """Overwrite bytes [start, end) with deterministic noise."""
    data = bytearray(src.read_bytes())
    rng = random.Random(seed)
    stop = len(data) if end is None else min(end, len(data))
    for i in range(start, stop):
        data[i] = rng.randrange(256)
    dst.write_bytes(bytes(data))
    return dst


def rotated_copy(src: Path, dst: Path, degrees: int) -> Path:
    """Stream copy with a rotation tag, which ffmpeg 5.1 turns into a display matrix."""
    ffmpeg("-i", str(src), "-map", "0", "-c", "copy", "-metadata:s:v:0", f"rotate={degrees}", str(dst))
    return dst


def build_corpus(folder: Path) -> dict[str, BadInput]:
    """Make every bad input in `folder`; keyed by case name."""
    folder.mkdir(parents=True, exist_ok=True)
    base_mp4 = folder / "_base.mp4"
    base_mkv = folder / "_base.mkv"
    base_webm = folder / "_base.webm"
    moov_at_end = folder / "_moov_at_end.mp4"
    scenes = [SceneSpec(1.2), SceneSpec(1.2), SceneSpec(1.6)]
    make_scene_video(base_mp4, scenes, **SMALL)
    make_scene_video(base_mkv, scenes, audio=False, **SMALL)
    make_scene_video(base_webm, scenes, **SMALL)
    make_scene_video(moov_at_end, scenes, faststart=False, **SMALL)

    cases: list[BadInput] = []

    def add(name: str, problem: ProbeProblem, phrase: str, make: Callable[[Path], object]) -> None:
        path = folder / name
        make(path)
        cases.append(BadInput(name, path, problem, phrase))

    add("zero_bytes.mp4", ProbeProblem.EMPTY, "0 bytes", lambda p: p.write_bytes(b""))
    add("missing.mp4", ProbeProblem.MISSING, "does not exist", lambda p: None)
    add("folder.mp4", ProbeProblem.NOT_MEDIA, "not a video file", lambda p: p.mkdir())
    add(
        "notes.mp4",
        ProbeProblem.NOT_MEDIA,
        "text file",
        lambda p: p.write_text("Meeting notes\nThis is not a video at all.\n" * 50, encoding="utf-8"),
    )
    add(
        "paper.mp4",
        ProbeProblem.NOT_MEDIA,
        "PDF",
        lambda p: p.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"),
    )
    add(
        "error_page.mp4",
        ProbeProblem.NOT_MEDIA,
        "web page",
        lambda p: p.write_text("<!DOCTYPE html><html><body><h1>403 Forbidden</h1></body></html>\n"),
    )
    add("archive.mp4", ProbeProblem.NOT_MEDIA, "ZIP", lambda p: _zip_with(p, base_mp4))
    add(
        "random_bytes.mp4",
        ProbeProblem.NOT_MEDIA,
        "not a video file",
        lambda p: p.write_bytes(random.Random(7).randbytes(64 * 1024)),
    )
    add(
        "picture.mp4",
        ProbeProblem.STILL_IMAGE,
        "still image",
        lambda p: lavfi("testsrc2=size=64x64", "-frames:v", "1", "-c:v", "png", "-f", "image2", p),
    )
    add(
        "photo.mov",
        ProbeProblem.STILL_IMAGE,
        "still image",
        lambda p: lavfi("testsrc2=size=64x64", "-frames:v", "1", "-c:v", "mjpeg", "-f", "image2", p),
    )
    add(
        "one_frame.mp4",
        ProbeProblem.STILL_IMAGE,
        "single frame",
        lambda p: ffmpeg(
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=64x64:rate=25",
            "-frames:v",
            "1",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            str(p),
        ),
    )
    add("truncated_half.mp4", ProbeProblem.TRUNCATED, "truncated", lambda p: truncate_half(base_mp4, p))
    add("truncated_moov_at_end.mp4", ProbeProblem.TRUNCATED, "moov", lambda p: truncate_half(moov_at_end, p))
    add("truncated_half.mkv", ProbeProblem.TRUNCATED, "truncated", lambda p: truncate_half(base_mkv, p))
    add("truncated_half.webm", ProbeProblem.TRUNCATED, "truncated", lambda p: truncate_half(base_webm, p))
    add("only_ftyp.mp4", ProbeProblem.TRUNCATED, "truncated", lambda p: p.write_bytes(base_mp4.read_bytes()[:32]))
    add(
        "speech.m4a",
        ProbeProblem.AUDIO_ONLY,
        "only audio",
        lambda p: ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:a", "aac", str(p)),
    )
    add("song_with_cover.mp3", ProbeProblem.AUDIO_ONLY, "only audio", lambda p: _mp3_with_cover(p, folder))
    add(
        "sound_named_video.mp4",
        ProbeProblem.AUDIO_ONLY,
        "only audio",
        lambda p: lavfi("sine=frequency=330:duration=2", "-c:a", "pcm_s16le", "-f", "wav", p),
    )
    add(
        "header_noise.mp4",
        ProbeProblem.NOT_MEDIA,
        "not a video file",
        lambda p: scramble(base_mp4, p, start=0, end=256),
    )
    add("damaged_index.mp4", ProbeProblem.NO_STREAMS, "damaged", lambda p: scramble(base_mp4, p, start=40, end=2000))
    add(
        "empty_recording.mp4",
        ProbeProblem.NO_STREAMS,
        "no video or audio streams",
        lambda p: ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x64", "-t", "0", "-c:v", "libx264", str(p)),
    )
    add(
        "unknown_codec.mkv",
        ProbeProblem.UNDECODABLE,
        "cannot decode",
        lambda p: replace_once(base_mkv, p, b"V_MPEG4/ISO/AVC", b"V_QUUX/FOO/BARZ"),
    )
    add("garbage_frames.mp4", ProbeProblem.UNDECODABLE, "cannot be decoded", lambda p: _garbage_payload(base_mp4, p))
    add(
        "no_video_frames.mkv",
        ProbeProblem.NO_FRAMES,
        "no frames",
        lambda p: ffmpeg("-i", str(base_webm), "-map", "0", "-c", "copy", "-bsf:v", "noise=drop=1", str(p)),
    )
    add("hundred_hours.mkv", ProbeProblem.TOO_LONG, "100 h", lambda p: patch_matroska_duration(base_mkv, p, 100 * 3600))
    add(
        "too_wide.mp4",
        ProbeProblem.TOO_LARGE,
        "8194×16",
        lambda p: ffmpeg(
            "-f",
            "lavfi",
            "-i",
            "color=c=blue:size=8194x16:rate=5",
            "-frames:v",
            "5",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            str(p),
        ),
    )
    add(
        "thousand_fps.mp4",
        ProbeProblem.TOO_LARGE,
        "1000 frames per second",
        lambda p: ffmpeg(
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=64x36:rate=1000",
            "-frames:v",
            "20",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            str(p),
        ),
    )
    return {case.name: case for case in cases}


def _zip_with(path: Path, member: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(member, "video.mp4")


def _mp3_with_cover(path: Path, folder: Path) -> None:
    cover = folder / "_cover.png"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x64", "-frames:v", "1", str(cover))
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=550:duration=2",
        "-i",
        str(cover),
        "-map",
        "0",
        "-map",
        "1",
        "-c:a",
        "libmp3lame",
        "-c:v",
        "mjpeg",
        "-disposition:v",
        "attached_pic",
        str(path),
    )


def _garbage_payload(src: Path, dst: Path) -> None:
    """Keep the MP4 boxes and index intact, replace every byte of media data with noise."""
    boxes = read_mp4_boxes(src) or []
    mdat = next((box for box in boxes if box.kind == "mdat"), None)
    if mdat is None:
        raise ValueError(f"{src.name} has no mdat box")
    scramble(src, dst, start=mdat.offset + 8, end=mdat.offset + mdat.size, seed=3)
