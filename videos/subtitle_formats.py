"""Read and write subtitle files: SRT, WebVTT and the two LongVideoBench JSON shapes.

Pure functions over bytes and strings; storing cues is the importer's job. Reading is lenient per
cue and strict per file: a malformed cue is reported with its line number and skipped, the valid
ones are kept, and a file that yields no cue at all is refused with the reason.

LongVideoBench subtitle files (as its loader reads them) come in two shapes:
  shape "start_end":  [{"start": "HH:MM:SS.fff", "end": "HH:MM:SS.fff", "line": text}, ...]
  shape "timestamp":  [{"timestamp": [start_float, end_float], "text": text}, ...]
Its loader splits "start"/"end" on ":" into exactly three parts, and replaces a "timestamp" end
that is not a float (an int, or null) with the video's duration; the writers below honour both.

Decisions worth knowing:
- A file without the "WEBVTT" header but with timing lines is read as WebVTT when its name ends in
  .vtt (with a problem noting the missing header) and as SRT otherwise; both readers accept the
  other's decimal separator and optional hours, so no cue is lost either way.
- Text markup is removed: HTML-like tags (<i>, <font ...>, WebVTT <v Speaker>, <c.class>, karaoke
  timestamps) and ASS override blocks ({\\an8}) in SRT; WebVTT character references (&amp;) are
  unescaped. JSON text is plain text and kept as is (surrounding whitespace trimmed).
- An empty JSON list (what a release writes for a video without subtitles) holds no cue, so it is
  refused like any other file without cues.
- Cues are returned in time order; overlapping cues are valid and kept.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.utils.translation import gettext as _

from projects.refusals import Refused
from videos.text_encoding import TextDecodeError, decode_bytes

SRT = "srt"
VTT = "vtt"
LVB_START_END = "lvb_start_end"
LVB_TIMESTAMP = "lvb_timestamp"

# The value of videos.models.CueSource each format is stored under (kept as strings: this module
# does not import models).
_CUE_SOURCE = {SRT: "srt", VTT: "vtt", LVB_START_END: "lvb_json", LVB_TIMESTAMP: "lvb_json"}

TIMING_EXAMPLE = '"00:00:01,000 --> 00:00:04,000"'


@dataclass(frozen=True, slots=True)
class Cue:
    start: float
    end: float
    text: str


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class ParseReport:
    cues: list[Cue]
    problems: list[Problem]
    format: str
    encoding: str

    @property
    def source(self) -> str:
        """The CueSource value to store these cues under."""
        return _CUE_SOURCE[self.format]


class SubtitleFormatError(Refused, ValueError):
    """The file holds no usable cue; `problems` lists what was wrong with each cue it did hold."""

    status, code = 400, "subtitle_format"

    def __init__(self, message: str, *, problems: list[Problem] | None = None, format: str | None = None):
        super().__init__(message)
        self.problems = problems or []
        self.format = format


# ---------------------------------------------------------------------------------------------
# Timestamps


_CLOCK_RE = re.compile(r"(?P<neg>-)?(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+)(?:[.,](?P<f>\d+))?")
_NUMBER_RE = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)")


def parse_clock(value: str) -> float:
    """Seconds from "HH:MM:SS.fff", "HH:MM:SS,fff", "MM:SS.fff" (hours may exceed 99; may be negative).

    Raises ValueError with the reason.
    """
    match = _CLOCK_RE.fullmatch(value.strip())
    if not match:
        raise ValueError(f'"{value}" is not a time like "00:01:02.500"')
    hours = int(match["h"] or 0)
    minutes, seconds = int(match["m"]), int(match["s"])
    if seconds >= 60 or (match["h"] is not None and minutes >= 60):
        raise ValueError(f'"{value}" has minutes or seconds of 60 or more')
    fraction = float("0." + match["f"]) if match["f"] else 0.0
    total = hours * 3600 + minutes * 60 + seconds + fraction
    return -total if match["neg"] else total


def format_timestamp(seconds: float, style: str = VTT) -> str:
    """ "HH:MM:SS,mmm" for style "srt"; "HH:MM:SS.mmm" for "vtt" and "lvb" (hours grow past 99)."""
    if style not in (SRT, VTT, "lvb"):
        raise ValueError(f"unknown timestamp style {style!r}; use 'srt', 'vtt' or 'lvb'")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"cannot write a subtitle time of {seconds!r} seconds")
    millis = round(seconds * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    separator = "," if style == SRT else "."
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{millis:03d}"


def _describe(seconds: float) -> str:
    return "-" + format_timestamp(-seconds) if seconds < 0 else format_timestamp(seconds)


def _check_cue(line: int, start: float, end: float, text: str) -> Cue | Problem:
    if not (math.isfinite(start) and math.isfinite(end)):
        return Problem(line, "time is not a finite number")
    if start < 0:
        return Problem(line, f"starts at a negative time ({_describe(start)})")
    if end < start:
        return Problem(line, f"ends ({_describe(end)}) before it starts ({_describe(start)})")
    if not text:
        return Problem(line, "cue has no text")
    return Cue(start, end, text)


# ---------------------------------------------------------------------------------------------
# SRT and WebVTT


_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
_TIMING_RE = re.compile(r"\s*(?P<start>\S+?)\s*-->\s*(?P<end>\S+)(?:\s+(?P<settings>.*))?\s*")
_TIMING_HINT_RE = re.compile(r"\d\s*-->\s*-?\d")
_INDEX_RE = re.compile(r"\d+")
_CLOCK_LIKE_RE = re.compile(r"\d+:\d+(?::\d+)?[.,]\d+")
# <i>, </i>, <font color="red">, <v Speaker>, <c.yellow>, and WebVTT karaoke stamps <00:00:01.000>.
_TAG_RE = re.compile(r"</?(?:[A-Za-z][^<>]*|\d[\d:.]*)>")
_ASS_OVERRIDE_RE = re.compile(r"\{\\[^{}]*\}")
_VTT_META_BLOCKS = ("NOTE", "STYLE", "REGION")


def _blocks(lines: list[str], start: int) -> Iterator[list[tuple[int, str]]]:
    """Runs of non-blank lines as (1-based line number, line)."""
    block: list[tuple[int, str]] = []
    for i in range(start, len(lines)):
        if lines[i].strip():
            block.append((i + 1, lines[i]))
        elif block:
            yield block
            block = []
    if block:
        yield block


def _clip(text: str, limit: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clean_markup(lines: list[str], fmt: str) -> str:
    cleaned = []
    for line in lines:
        line = _TAG_RE.sub("", line)
        line = _ASS_OVERRIDE_RE.sub("", line) if fmt == SRT else html.unescape(line)
        line = line.strip()
        if line:
            cleaned.append(line)
    return "\n".join(cleaned)


def _is_vtt_meta_block(first_line: str) -> bool:
    word = first_line.strip().split(None, 1)[0] if first_line.strip() else ""
    return word in _VTT_META_BLOCKS


def _parse_block(block: list[tuple[int, str]], fmt: str, cues: list[Cue], problems: list[Problem]) -> None:
    timing_at = [k for k, (_, line) in enumerate(block) if "-->" in line]
    if not timing_at:
        # A cue whose timing line lost its arrow ("->", "- ->") is a bad cue, not stray text.
        for line_no, line in block:
            if len(_CLOCK_LIKE_RE.findall(line)) == 2:
                problems.append(Problem(line_no, f'bad timing line "{_clip(line)}" (expected {TIMING_EXAMPLE})'))
                return
        problems.append(Problem(block[0][0], f'text outside any cue (no timing line above it): "{_clip(block[0][1])}"'))
        return
    header_start = 0
    for n, pos in enumerate(timing_at):
        following = timing_at[n + 1] if n + 1 < len(timing_at) else len(block)
        text_end = following
        # A missing blank line between cues: the number right above the next timing line is that
        # cue's index, not this cue's text.
        if following < len(block) and following - 1 > pos and _INDEX_RE.fullmatch(block[following - 1][1].strip()):
            text_end = following - 1
        header = block[header_start:pos]
        header_start = text_end
        timing_line_no, timing_line = block[pos]

        if len(header) > 1:
            problems.append(Problem(header[0][0], f'text outside any cue: "{_clip(header[0][1])}"'))
        if header and fmt == SRT and not _INDEX_RE.fullmatch(header[-1][1].strip()):
            number = _clip(header[-1][1], 20)
            problems.append(Problem(header[-1][0], f'cue number "{number}" is not a number; cue skipped'))
            continue

        match = _TIMING_RE.fullmatch(timing_line)
        if not match:
            message = f'bad timing line "{_clip(timing_line)}" (expected {TIMING_EXAMPLE})'
            problems.append(Problem(timing_line_no, message))
            continue
        try:
            start, end = parse_clock(match["start"]), parse_clock(match["end"])
        except ValueError as exc:
            problems.append(Problem(timing_line_no, f'bad timing line "{_clip(timing_line)}": {exc}'))
            continue
        text = _clean_markup([line for _, line in block[pos + 1 : text_end]], fmt)
        checked = _check_cue(timing_line_no, start, end, text)
        (cues if isinstance(checked, Cue) else problems).append(checked)


def _parse_cue_file(text: str, fmt: str) -> tuple[list[Cue], list[Problem]]:
    lines = _LINE_BREAK_RE.split(text)
    cues: list[Cue] = []
    problems: list[Problem] = []
    first = 0
    if fmt == VTT:
        while first < len(lines) and not lines[first].strip():
            first += 1
        if first < len(lines) and _is_webvtt_header(lines[first]):
            # The header runs to the first blank line (it may carry "Kind:"/"Language:" lines); when
            # that blank line is missing and cues follow at once, only the WEBVTT line is the header.
            end = first + 1
            while end < len(lines) and lines[end].strip() and "-->" not in lines[end]:
                end += 1
            if end < len(lines) and "-->" in lines[end]:
                end = first + 1
            first = end
        else:
            message = 'missing the "WEBVTT" header line; read as WebVTT because of the .vtt file name'
            problems.append(Problem(first + 1, message))
    for block in _blocks(lines, first):
        if fmt == VTT and _is_vtt_meta_block(block[0][1]):
            continue
        _parse_block(block, fmt, cues, problems)
    return cues, problems


def _is_webvtt_header(line: str) -> bool:
    line = line.lstrip("\ufeff")
    return line.startswith("WEBVTT") and (len(line) == 6 or line[6] in " \t")


# ---------------------------------------------------------------------------------------------
# LongVideoBench JSON


_JSON_WS_RE = re.compile(r"[ \t\n\r]*")


def _json_kind(value) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _iter_json_array(text: str) -> Iterator[tuple[int, object]]:
    """Yield (line number, element) of a top-level JSON array, so problems can name their line.

    Raises json.JSONDecodeError for invalid JSON and SubtitleFormatError when the JSON is not a list.
    """
    decoder = json.JSONDecoder()
    idx = _JSON_WS_RE.match(text, 0).end()
    if not text.startswith("[", idx):
        value = json.loads(text)
        raise SubtitleFormatError(
            f"the JSON is {_json_kind(value)}, not a list of cues (LongVideoBench subtitle files are a JSON array)"
        )
    idx += 1
    line, counted_to = 1, 0
    idx = _JSON_WS_RE.match(text, idx).end()
    if text.startswith("]", idx):
        idx += 1
    else:
        while True:
            idx = _JSON_WS_RE.match(text, idx).end()
            value, end = decoder.raw_decode(text, idx)
            line += text.count("\n", counted_to, idx)
            counted_to = idx
            yield line, value
            idx = _JSON_WS_RE.match(text, end).end()
            if text.startswith(",", idx):
                idx += 1
            elif text.startswith("]", idx):
                idx += 1
                break
            else:
                raise json.JSONDecodeError("Expecting ',' delimiter", text, idx)
    idx = _JSON_WS_RE.match(text, idx).end()
    if idx != len(text):
        raise json.JSONDecodeError("Extra data", text, idx)


def _time_value(value, key: str) -> float:
    if isinstance(value, bool) or value is None:
        raise ValueError(f'"{key}" is {_json_kind(value)}, not a time')
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if _NUMBER_RE.fullmatch(value.strip()):
            return float(value)
        try:
            return parse_clock(value)
        except ValueError as exc:
            raise ValueError(f'"{key}": {exc}') from None
    raise ValueError(f'"{key}" is {_json_kind(value)}, not a time')


def _lvb_element(line: int, n: int, element, video_duration_s: float | None) -> tuple[str | None, Cue | Problem]:
    if not isinstance(element, dict):
        return None, Problem(line, f"element {n} is {_json_kind(element)}, not an object")
    if "timestamp" in element:
        shape, text = LVB_TIMESTAMP, element.get("text")
        stamp = element["timestamp"]
        if not isinstance(stamp, list) or len(stamp) != 2:
            return shape, Problem(line, f'element {n}: "timestamp" must be a list [start, end]')
        start_value, end_value = stamp
        if end_value is None:
            if video_duration_s is None:
                return shape, Problem(
                    line,
                    f'element {n}: end is null (LongVideoBench reads it as "until the end of the video"); '
                    "the video's duration is needed to keep this cue",
                )
            end_value = video_duration_s
        keys = ("timestamp[0]", "timestamp[1]", "text")
    elif {"start", "end", "line"} & element.keys():
        shape, text = LVB_START_END, element.get("line")
        start_value, end_value = element.get("start"), element.get("end")
        for key in ("start", "end", "line"):
            if key not in element:
                return shape, Problem(line, f'element {n} has no "{key}"')
        keys = ("start", "end", "line")
    else:
        found = ", ".join(f'"{k}"' for k in list(element)[:6]) or "none"
        return None, Problem(
            line,
            f'element {n} is not a LongVideoBench cue: expected "start"/"end"/"line" or "timestamp"/"text" '
            f"(keys found: {found})",
        )
    try:
        start, end = _time_value(start_value, keys[0]), _time_value(end_value, keys[1])
    except ValueError as exc:
        return shape, Problem(line, f"element {n}: {exc}")
    if text is None:
        return shape, Problem(line, f'element {n} has no "{keys[2]}"')
    if not isinstance(text, str):
        return shape, Problem(line, f'element {n}: "{keys[2]}" is {_json_kind(text)}, not text')
    return shape, _check_cue(line, start, end, text.strip())


def _parse_lvb_json(text: str, video_duration_s: float | None) -> tuple[list[Cue], list[Problem], str]:
    cues: list[Cue] = []
    problems: list[Problem] = []
    shape = None
    try:
        for n, (line, element) in enumerate(_iter_json_array(text), start=1):
            element_shape, checked = _lvb_element(line, n, element, video_duration_s)
            shape = shape or element_shape
            (cues if isinstance(checked, Cue) else problems).append(checked)
    except json.JSONDecodeError as exc:
        raise SubtitleFormatError(
            _("not valid JSON: %(msg)s at line %(lineno)s column %(colno)s")
            % {"msg": exc.msg, "lineno": exc.lineno, "colno": exc.colno}
        ) from None
    return cues, problems, shape or LVB_START_END


# ---------------------------------------------------------------------------------------------
# Entry point


def _sniff_format(text: str, extension: str) -> str:
    stripped = text.lstrip()
    if _is_webvtt_header(_LINE_BREAK_RE.split(stripped, 1)[0]):
        return VTT
    if stripped[:1] in ("[", "{"):
        return "json"
    if _TIMING_HINT_RE.search(text):
        return VTT if extension == ".vtt" else SRT
    if extension in (".srt", ".vtt", ".json"):
        return extension[1:]
    raise SubtitleFormatError(
        f"not a subtitle file: no WEBVTT header, no timing lines like {TIMING_EXAMPLE} and not a JSON list"
    )


def parse_subtitles(data: bytes, filename: str | None = None, *, video_duration_s: float | None = None) -> ParseReport:
    """Detect the format (by content, then by file name) and read every valid cue.

    `video_duration_s` lets a LongVideoBench "timestamp" cue with a null end run to the end of the
    video, as the benchmark's loader does. Raises SubtitleFormatError when no cue is usable.
    """
    extension = os.path.splitext(filename or "")[1].lower()
    if not data:
        raise SubtitleFormatError(_("empty file: no subtitle cues"))
    try:
        text, encoding = decode_bytes(data)
    except TextDecodeError as exc:
        raise SubtitleFormatError(_("not a subtitle file: %(exc)s") % {"exc": exc}) from None
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise SubtitleFormatError(_("empty file: no subtitle cues"))

    kind = _sniff_format(text, extension)
    if kind == "json":
        cues, problems, fmt = _parse_lvb_json(text, video_duration_s)
    else:
        fmt = kind
        cues, problems = _parse_cue_file(text, fmt)

    if not cues:
        if fmt in (SRT, VTT) and not _TIMING_HINT_RE.search(text):
            if kind == VTT and not problems:
                message = f"no subtitle cues: the WebVTT file has a header but no timing lines like {TIMING_EXAMPLE}"
            else:
                message = f"not a subtitle file: no timing lines like {TIMING_EXAMPLE}"
        elif not problems:
            message = "no subtitle cues: the JSON list is empty"
        else:
            message = f"no valid cues: {len(problems)} problem(s), the first at {problems[0]}"
        raise SubtitleFormatError(message, problems=problems, format=fmt)
    cues.sort(key=lambda cue: (cue.start, cue.end))
    return ParseReport(cues=cues, problems=problems, format=fmt, encoding=encoding)


# ---------------------------------------------------------------------------------------------
# Writers


def _in_time_order(cues: Iterable[Cue]) -> list[Cue]:
    return sorted(cues, key=lambda cue: (cue.start, cue.end))


def _single_block(text: str) -> str:
    # A blank line ends a cue in SRT and WebVTT, so text must not contain one.
    return "\n".join(line.rstrip() for line in _LINE_BREAK_RE.split(text) if line.strip())


def to_srt(cues: Iterable[Cue]) -> str:
    parts = []
    for n, cue in enumerate(_in_time_order(cues), start=1):
        parts.append(
            f"{n}\n{format_timestamp(cue.start, SRT)} --> {format_timestamp(cue.end, SRT)}\n{_single_block(cue.text)}\n"
        )
    return "\n".join(parts)


def _vtt_escape(text: str) -> str:
    # Escaping "<" and ">" also keeps "-->" out of cue text, which WebVTT forbids.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_webvtt(cues: Iterable[Cue]) -> str:
    """A WebVTT document for the browser's <track> element."""
    parts = ["WEBVTT\n"]
    for cue in _in_time_order(cues):
        timing = f"{format_timestamp(cue.start, VTT)} --> {format_timestamp(cue.end, VTT)}"
        parts.append(f"{timing}\n{_vtt_escape(_single_block(cue.text))}\n")
    return "\n".join(parts)


LVB_SHAPES = ("start_end", "timestamp")


def to_lvb_json(cues: Iterable[Cue], shape: str = "start_end") -> list[dict]:
    """A LongVideoBench subtitle list in time order, ready for json.dump.

    "timestamp" values are always floats (json writes 5.0, never 5: the loader replaces a
    non-float end with the video's duration), rounded to the millisecond like the other shape.
    """
    if shape not in LVB_SHAPES:
        raise ValueError(f"unknown LongVideoBench subtitle shape {shape!r}; use one of {LVB_SHAPES}")
    ordered = _in_time_order(cues)
    if shape == "start_end":
        return [
            {"start": format_timestamp(c.start, "lvb"), "end": format_timestamp(c.end, "lvb"), "line": c.text}
            for c in ordered
        ]
    return [{"timestamp": [round(float(c.start), 3), round(float(c.end), 3)], "text": c.text} for c in ordered]
