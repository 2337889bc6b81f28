"""Read our LiViBench JSONL (`vidqa-livibench/1`): the inverse of releases/writers/livibench.py.

Question files are `livibench/<split>.jsonl` (or the one file given); the file's name gives the videos
their split when it is train, eval, test or unsplit. A line becomes a single-video MCQ: video (file
name under videos/), task → category, group → task group, question, question_translation, options,
answer (0-based; optional in a test-style file). Its comments file (`{"time", "text", "user"}` lines)
replaces the video's comments, its ASR file (`{"start", "end", "text", "source"}` lines) the video's
cues of the sources it holds. id, audio and duration follow from the video and the order of the
lines, so they are type-checked and not stored.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from videos.models import CueSource

from ..writers.livibench import FORMAT_TAG
from .common import (
    MISSING,
    CommentIn,
    CueIn,
    Fields,
    MCQIn,
    Parsed,
    Where,
    import_root,
    media_dirs,
    option_index,
    options_check,
    record_files,
    split_of_file,
)

FORMAT = "livibench"
FOLDER = "livibench"


def read(source: Path, *, project=None, progress=None) -> Parsed:
    root, given = import_root(source, FOLDER)
    parsed = Parsed(format=FORMAT, root=root, media_dirs=media_dirs(root))
    files = given or record_files(root, FOLDER, ".jsonl")
    if not files:
        parsed.problems.add(Where(parsed.rel(root)), "", "holds no LiViBench question file (livibench/*.jsonl).")
    side_files: dict[tuple[str, str], object] = {}
    for n, path in enumerate(files):
        if progress:
            progress(n, len(files), f"Reading {parsed.rel(path)}")
        lines = parsed.jsonl(path)
        if lines is None:
            continue
        split = split_of_file(path.stem)
        for index, record in lines:
            rid = record.get("id") if isinstance(record, dict) else None
            where = Where(parsed.rel(path), index, rid if isinstance(rid, str) else "")
            _record(parsed, record, where, split, root, side_files)
    return parsed


def _record(parsed: Parsed, record, where: Where, split, root: Path, side_files) -> None:
    f = Fields(record, where, parsed.problems)
    if not f.ok:
        return
    tag = f.text("format")
    if tag is not MISSING and tag != FORMAT_TAG:
        f.bad("format", f"is {tag!r}; this reader knows {FORMAT_TAG!r}.")
    f.text("id", required=False)
    video = f.text("video")
    task = f.text("task")
    group = f.text("group", required=False)
    question = f.text("question")
    translation = f.text("question_translation", required=False)
    options = f.strings("options")
    options_check(f, "options", options)
    answer = option_index(f, "answer", options)
    comments_file = f.text("comments_file", required=False, default=None)
    asr_file = f.text("asr_file", required=False, default=None)
    f.get("audio", "bool", required=False)
    f.get("duration", "number", required=False)
    if video is not MISSING and (not video or "/" in video or video.startswith(".")):
        f.bad("video", f"{video!r} is not a file name under videos/.")
    if not f.ok:
        return
    vin = parsed.video(video, where, "video", split=split)
    if comments_file:
        comments = _side(parsed, root, comments_file, "comments_file", where, side_files, _comments)
        if comments is not None:
            if vin.comments is not None and vin.comments is not comments:
                f.bad("comments_file", f"names another comments file for video {video} than before.")
            vin.comments = comments
    if asr_file:
        cues = _side(parsed, root, asr_file, "asr_file", where, side_files, _cues)
        if cues is not None:
            if vin.cues is not None and vin.cues is not cues:
                f.bad("asr_file", f"names another ASR file for video {video} than before.")
            vin.cues = cues
    parsed.mcqs.append(
        MCQIn(
            source=where,
            videos=[(video, "main")],
            question=question,
            options=options,
            correct_index=answer,
            category=task,
            task_group=group,
            question_translation=translation,
        )
    )


def _side(parsed: Parsed, root: Path, value: str, name: str, where: Where, seen: dict, read_lines):
    key = (name, value)
    if key in seen:
        return seen[key]
    rel = PurePosixPath(value)
    seen[key] = None
    if rel.is_absolute() or ".." in rel.parts:
        parsed.problems.add(where, name, f"{value!r} is not a path inside the release.")
        return None
    path = next((b / rel for b in (root, root / FOLDER) if (b / rel).is_file()), None)
    if path is None:
        parsed.problems.add(where, name, f"{value} does not exist.")
        return None
    lines = parsed.jsonl(path)
    if lines is not None:
        seen[key] = read_lines(parsed, parsed.rel(path), lines)
    return seen[key]


def _comments(parsed: Parsed, rel: str, lines) -> list[CommentIn] | None:
    out = []
    for n, line in lines:
        f = Fields(line, Where(rel, n), parsed.problems)
        time_s, text, user = f.get("time", "number"), f.text("text"), f.text("user", required=False)
        if f.ok and time_s < 0:
            f.bad("time", "is before the start of the video.")
        if not f.ok:
            return None
        out.append(CommentIn(time_s, text, user))
    return out


def _cues(parsed: Parsed, rel: str, lines) -> list[CueIn] | None:
    out = []
    for n, line in lines:
        f = Fields(line, Where(rel, n), parsed.problems)
        start, end = f.get("start", "number"), f.get("end", "number")
        text, source = f.text("text"), f.text("source", required=False, default=CueSource.ASR)
        if f.ok and source not in CueSource.values:
            f.bad("source", f"{source!r} is not one of {', '.join(CueSource.values)}.")
        if f.ok and not 0 <= start <= end:
            f.bad("end", f"the cue must not end ({end}) before it starts ({start}).")
        if not f.ok:
            return None
        out.append(CueIn(start, end, text, source))
    return out
