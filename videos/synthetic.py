"""Generate test and demo videos with ffmpeg whose scene cuts fall at exactly known times.

Every scene comes from a different lavfi source (test patterns, fractals, cellular automata,
solid colours with a moving box) so a content-based detector sees an unmistakable change at
each cut and little change inside a scene. Scene lengths are rounded to whole frames, so the
returned cut times are exact frame boundaries. The audio is a sine tone whose pitch changes per
scene: never silent, and it marks the cuts for the ear too.

Runs one ffmpeg process with a list argv (never a shell) and the ultrafast preset.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Source filter chains per pattern. {w} {h} {fps} are filled in; the chain must produce a
# video stream of exactly that size and rate. Neighbours in this cycle differ strongly in hue
# and brightness, which is what PySceneDetect's ContentDetector measures.
PATTERNS: dict[str, str] = {
    "testsrc2": "testsrc2=size={w}x{h}:rate={fps}",
    "red_box": (
        "color=c=0xC0392B:size={w}x{h}:rate={fps}[bg{i}];"
        "color=c=white:size={bw}x{bw}:rate={fps}[box{i}];"
        "[bg{i}][box{i}]overlay=x='mod(t*{speed}\\,W-w)':y='(H-h)/2':shortest=1"
    ),
    "smptebars": "smptebars=size={w}x{h}:rate={fps}",
    "mandelbrot": "mandelbrot=size={w}x{h}:rate={fps}:maxiter=64",
    "blue_box": (
        "color=c=0x1F3A93:size={w}x{h}:rate={fps}[bg{i}];"
        "color=c=yellow:size={bw}x{bw}:rate={fps}[box{i}];"
        "[bg{i}][box{i}]overlay=x='(W-w)/2':y='mod(t*{speed}\\,H-h)':shortest=1"
    ),
    # The automata change many pixels per frame, so they fill only the middle of a calm
    # background: enough motion to look alive, far too little to pass for a cut.
    "life": (
        "color=c=0x4A235A:size={w}x{h}:rate={fps}[bg{i}];"
        "life=size={qw}x{qh}:rate={fps}:seed=7:ratio=0.3:life_color=0x00FF00:death_color=0x102010,"
        "scale={hw}:{hh}:flags=neighbor[fg{i}];"
        "[bg{i}][fg{i}]overlay=x='(W-w)/2':y='(H-h)/2':shortest=1"
    ),
    "gradients": "gradients=size={w}x{h}:rate={fps}:c0=0xFF8800:c1=0xFFFF00:seed=3:speed=0.002",
    "colorchart": "colorchart=rate={fps}:patch_size=64x64,scale={w}:{h}",
    "rgbtestsrc": "rgbtestsrc=size={w}x{h}:rate={fps}",
    "green_box": (
        "color=c=0x117A65:size={w}x{h}:rate={fps}[bg{i}];"
        "color=c=0xFF00FF:size={bw}x{bw}:rate={fps}[box{i}];"
        "[bg{i}][box{i}]overlay=x='W-w-mod(t*{speed}\\,W-w)':y='(H-h)/3':shortest=1"
    ),
}
PATTERN_CYCLE: tuple[str, ...] = tuple(PATTERNS)

# Tones per scene when a SceneSpec gives none: distinct, audible, not harmonics of each other.
TONE_CYCLE_HZ: tuple[float, ...] = (440.0, 660.0, 330.0, 880.0, 550.0, 247.0, 740.0, 392.0, 1000.0, 294.0)

AUDIO_SAMPLE_RATE = 48000

# Codec defaults per container, so "demo.webm" just works without naming codecs.
_CONTAINER_DEFAULTS: dict[str, tuple[str, str]] = {
    ".mp4": ("libx264", "aac"),
    ".m4v": ("libx264", "aac"),
    ".mov": ("libx264", "aac"),
    ".mkv": ("libx264", "aac"),
    ".webm": ("libvpx-vp9", "libopus"),
    ".avi": ("mpeg4", "libmp3lame"),
    ".ts": ("libx264", "aac"),
}


class SyntheticVideoError(RuntimeError):
    """ffmpeg refused to make the requested video; the message carries its stderr tail."""


@dataclass(frozen=True)
class SceneSpec:
    """One scene: how long it lasts and, optionally, what it looks and sounds like."""

    duration_s: float
    pattern: str | None = None  # a key of PATTERNS; None picks the next one in PATTERN_CYCLE
    tone_hz: float | None = None  # None picks the next one in TONE_CYCLE_HZ

    def __post_init__(self) -> None:
        if self.duration_s <= 0:
            raise ValueError(f"scene duration must be positive, got {self.duration_s}")
        if self.pattern is not None and self.pattern not in PATTERNS:
            raise ValueError(f"unknown pattern {self.pattern!r}; choose one of {', '.join(PATTERNS)}")


def _ffmpeg_binary() -> str:
    # Usable outside Django too (scripts, benchmarks): fall back to the PATH binary.
    from django.conf import settings

    return getattr(settings, "FFMPEG_BINARY", "ffmpeg") if settings.configured else "ffmpeg"


def scene_frame_counts(scenes: Sequence[SceneSpec], fps: int) -> list[int]:
    """Frames per scene: each duration rounded to whole frames, at least one frame."""
    return [max(1, round(scene.duration_s * fps)) for scene in scenes]


def cut_times(scenes: Sequence[SceneSpec], fps: int) -> list[float]:
    """The start time of every scene after the first, on exact frame boundaries."""
    cuts: list[float] = []
    frames = 0
    for count in scene_frame_counts(scenes, fps)[:-1]:
        frames += count
        cuts.append(round(frames / fps, 6))
    return cuts


def make_scene_video(
    path: str | Path,
    scenes: Sequence[SceneSpec],
    *,
    width: int = 640,
    height: int = 360,
    fps: int = 25,
    audio: bool = True,
    vcodec: str | None = None,
    acodec: str | None = None,
    faststart: bool = True,
    variable_frame_rate: bool = False,
    extra_output_args: Sequence[str] = (),
    timeout_s: float = 300,
) -> list[float]:
    """Write a video of the given scenes to `path` and return the cut times in seconds.

    The container follows the file suffix (.mp4, .mov, .mkv, .webm, .avi, .ts); codecs default
    to what that container usually holds and can be overridden. `faststart=False` leaves the
    MP4/MOV index (moov atom) at the end, as many cameras and editors do. `variable_frame_rate`
    drops every third frame while keeping the others' timestamps, so the stream has irregular
    frame durations (a cut may then land on the next kept frame, at most one frame later).
    `extra_output_args` go just before the output path (e.g. ["-metadata:s:v", "rotate=90"]).
    """
    if not scenes:
        raise ValueError("a video needs at least one scene")
    if width % 2 or height % 2:
        raise ValueError("width and height must be even for yuv420p")
    path = Path(path)
    suffix = path.suffix.lower()
    default_v, default_a = _CONTAINER_DEFAULTS.get(suffix, ("libx264", "aac"))
    vcodec = vcodec or default_v
    acodec = acodec or default_a

    counts = scene_frame_counts(scenes, fps)
    box = max(16, min(width, height) // 5)
    graph: list[str] = []
    concat_inputs: list[str] = []
    for i, (scene, frames) in enumerate(zip(scenes, counts, strict=True)):
        pattern = scene.pattern or PATTERN_CYCLE[i % len(PATTERN_CYCLE)]
        source = PATTERNS[pattern].format(
            w=width,
            h=height,
            fps=fps,
            i=i,
            bw=box,
            speed=max(width, height) // 3,
            hw=width // 2,
            hh=height // 2,
            qw=max(8, width // 8),
            qh=max(8, height // 8),
        )
        # Every source is normalised to the same size, pixel format and aspect so concat accepts it.
        graph.append(
            f"{source},scale={width}:{height},format=yuv420p,setsar=1,trim=end_frame={frames},setpts=PTS-STARTPTS[v{i}]"
        )
        concat_inputs.append(f"[v{i}]")
        if audio:
            tone = scene.tone_hz or TONE_CYCLE_HZ[i % len(TONE_CYCLE_HZ)]
            samples = round(frames / fps * AUDIO_SAMPLE_RATE)
            graph.append(
                f"sine=frequency={tone}:sample_rate={AUDIO_SAMPLE_RATE},"
                f"atrim=end_sample={samples},asetpts=PTS-STARTPTS,aformat=channel_layouts=stereo[a{i}]"
            )
            concat_inputs.append(f"[a{i}]")
    video_out, audio_out = "[vout]", "[aout]"
    outputs = video_out + (audio_out if audio else "")
    graph.append(f"{''.join(concat_inputs)}concat=n={len(scenes)}:v=1:a={1 if audio else 0}{outputs}")
    if audio and acodec == "libopus":
        # ffmpeg 5.1 does not re-chunk filter_complex audio for libopus's fixed 20 ms frames.
        graph.append(f"{audio_out}asetnsamples=n={AUDIO_SAMPLE_RATE // 50}:p=0[aopus]")
        audio_out = "[aopus]"
    if variable_frame_rate:
        graph.append(f"{video_out}select='not(eq(mod(n\\,3)\\,2))'[vvfr]")
        video_out = "[vvfr]"

    argv = [
        _ffmpeg_binary(),
        "-hide_banner",
        "-nostdin",
        "-loglevel",
        "error",
        "-y",
        "-filter_complex",
        ";".join(graph),
        "-map",
        video_out,
    ]
    if audio:
        argv += ["-map", audio_out, "-c:a", acodec, "-b:a", "96k"]
    argv += ["-c:v", vcodec]
    argv += _video_codec_speed_args(vcodec)
    if variable_frame_rate:
        argv += ["-fps_mode", "vfr"]
    else:
        argv += ["-r", str(fps)]
    if faststart and suffix in {".mp4", ".m4v", ".mov"}:
        argv += ["-movflags", "+faststart"]
    argv += list(extra_output_args)
    argv.append(str(path))

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        path.unlink(missing_ok=True)
        raise SyntheticVideoError(f"ffmpeg took longer than {timeout_s:g} s to generate {path.name}") from exc
    if proc.returncode != 0:
        path.unlink(missing_ok=True)
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        raise SyntheticVideoError(f"ffmpeg could not generate {path.name}: {tail}")
    return cut_times(scenes, fps)


def _video_codec_speed_args(vcodec: str) -> list[str]:
    """Fastest settings per encoder: these videos exist to be decoded, not admired."""
    if vcodec in {"libx264", "libx265"}:
        args = ["-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        if vcodec == "libx265":
            args += ["-x265-params", "log-level=error", "-tag:v", "hvc1"]
        return args
    if vcodec == "libvpx-vp9":
        return ["-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-b:v", "1M", "-pix_fmt", "yuv420p"]
    if vcodec == "libvpx":
        return ["-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M"]
    if vcodec == "mpeg4":
        return ["-q:v", "5"]
    return []
