"""Speech recognition for videos without subtitles, into the same cue table (source "asr")."""

import subprocess
import tempfile
from pathlib import Path

from django.conf import settings

from llm.client import transcribe

from .models import CueSource, Video
from .storage_files import local_path
from .subtitle_formats import Cue
from .subtitles import cues_replace

# 16 kHz mono at 32 kbit/s is ~14 MB an hour: chunks of 20 minutes stay far below upload limits.
CHUNK_S = 20 * 60


def _extract_audio(src: Path, dst: Path, start_s: float, length_s: float) -> None:
    cmd = [
        settings.FFMPEG_BINARY,
        "-nostdin",
        "-v",
        "error",
        "-y",
        "-ss",
        f"{start_s:.3f}",
        "-t",
        f"{length_s:.3f}",
        "-i",
        str(src),
        "-vn",
        "-ac",
        "1",
        "-ar",
        "16000",
        "-b:a",
        "32k",
        str(dst),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0 or not dst.exists() or dst.stat().st_size == 0:
        raise RuntimeError(f"ffmpeg could not extract the audio: {done.stderr.strip()[-300:] or 'no output'}")


def video_transcribe(*, video: Video, language: str | None = None, progress=None) -> int:
    """Transcribe the video's audio chunk by chunk; replaces earlier speech-recognition cues."""
    if not video.has_audio:
        raise ValueError(f"{video.name} has no audio track to transcribe.")
    duration = video.duration_s or 0
    starts = [i * CHUNK_S for i in range(max(1, int(-(-duration // CHUNK_S))))]
    cues: list[Cue] = []
    with local_path(video.original.name) as src, tempfile.TemporaryDirectory() as tmp:
        for n, start in enumerate(starts):
            chunk = Path(tmp) / f"chunk{n}.mp3"
            _extract_audio(src, chunk, start, min(CHUNK_S, max(0.1, duration - start)))
            segments, _call = transcribe(
                project=video.project, audio_path=chunk, language=language or video.language or None
            )
            for seg_start, seg_end, text in segments:
                text = text.strip()
                if not text:
                    continue
                s = min(duration, start + max(0.0, seg_start))
                e = min(duration, max(s, start + seg_end))
                cues.append(Cue(round(s, 3), round(e, 3), text))
            if progress:
                progress((n + 1) / len(starts))
    return cues_replace(video=video, cues=cues, source=CueSource.ASR, language=language or video.language)
