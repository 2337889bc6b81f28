"""Subtitle cues: import from files, serve to the player. Every source lands in SubtitleCue."""

from dataclasses import dataclass, field

from django.db import transaction

from .models import CueSource, SubtitleCue, Video
from .subtitle_formats import Cue, Problem, parse_subtitles, to_webvtt

# A larger "subtitle" file is almost certainly something else.
SUBTITLE_MAX_BYTES = 20 * 1024 * 1024

# File imports replace each other; speech recognition and manual cues are kept apart.
FILE_SOURCES = (CueSource.SRT, CueSource.VTT, CueSource.LVB_JSON)


@dataclass
class SubtitleImport:
    count: int
    format: str
    encoding: str
    problems: list[Problem] = field(default_factory=list)


def file_cue_count(*, video: Video) -> int:
    """How many cues an imported subtitle file gave this video: a new import replaces them."""
    return SubtitleCue.objects.filter(video=video, source__in=FILE_SOURCES).count()


def subtitles_import(*, video: Video, data: bytes, filename: str, language: str = "") -> SubtitleImport:
    """Parse and store a subtitle file; malformed cues are reported by line and skipped.

    Raises subtitle_formats.SubtitleFormatError (nothing stored) when no cue is usable.
    """
    report = parse_subtitles(data, filename, video_duration_s=video.duration_s)
    with transaction.atomic():
        SubtitleCue.objects.filter(video=video, source__in=FILE_SOURCES).delete()
        SubtitleCue.objects.bulk_create(
            [
                SubtitleCue(
                    video=video,
                    start_s=c.start,
                    end_s=c.end,
                    text=c.text,
                    source=report.source,
                    language=language or video.language,
                )
                for c in report.cues
            ],
            batch_size=2000,
        )
    return SubtitleImport(len(report.cues), report.format, report.encoding, report.problems)


def cues_replace(*, video: Video, cues: list[Cue], source: str, language: str = "") -> int:
    """Store cues from one source (e.g. speech recognition), replacing that source's earlier cues."""
    with transaction.atomic():
        SubtitleCue.objects.filter(video=video, source=source).delete()
        SubtitleCue.objects.bulk_create(
            [
                SubtitleCue(video=video, start_s=c.start, end_s=c.end, text=c.text, source=source, language=language)
                for c in cues
            ],
            batch_size=2000,
        )
    return len(cues)


def cue_track(*, video: Video) -> list[SubtitleCue]:
    """The cues the player shows: file subtitles when there are any, else the transcript."""
    cues = list(SubtitleCue.objects.filter(video=video, source__in=FILE_SOURCES).order_by("start_s", "id"))
    if not cues:
        cues = list(SubtitleCue.objects.filter(video=video).exclude(source__in=FILE_SOURCES).order_by("start_s", "id"))
    return cues


def cues_webvtt(*, video: Video) -> str:
    return to_webvtt(Cue(c.start_s, c.end_s, c.text) for c in cue_track(video=video))
