"""Read LongVideoBench files: the inverse of releases/writers/longvideobench.py.

Record files are the JSON arrays under `longvideobench/` (or at the top of the folder, or the one file
given); each record's subtitles are `subtitles/<subtitle_path>` and its video `videos/<video_path>`.
A file named `lvb_<split>.json` (train, eval, test, unsplit) gives its videos that split; other names
(`lvb_val.json`) leave the videos' splits as they are.

Record → MCQ: question, question_wo_referring_query (the referring query is what `question` has in
front of it, when it ends with it), candidates → options, correct_choice (optional: test-style files
have none) → correct_index, question_category → category, level, position → referred moments (frame
indexes; the time is frame ÷ the video's fps). The video gets topic_category and view_count.
duration, duration_group and the record id follow from the video and the record order, so they are
read, type-checked and otherwise not stored. Subtitles: either shape of the format
(`{"start": "HH:MM:SS.fff", "end", "line"}` or `{"timestamp": [start, end], "text"}`), moved by
starting_timestamp_for_subtitles so times count from the start of the file, stored as
LongVideoBench JSON cues.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from .common import (
    MISSING,
    CueIn,
    Fields,
    MCQIn,
    MomentIn,
    Parsed,
    Where,
    import_root,
    media_dirs,
    option_index,
    options_check,
    record_files,
    split_of_file,
)

FORMAT = "longvideobench"
FOLDER = "longvideobench"


def read(source: Path, *, project=None, progress=None) -> Parsed:
    root, given = import_root(source, FOLDER)
    parsed = Parsed(format=FORMAT, root=root, media_dirs=media_dirs(root))
    files = given or record_files(root, FOLDER, ".json")
    if not files:
        parsed.problems.add(Where(parsed.rel(root)), "", "holds no LongVideoBench record file (longvideobench/*.json).")
    subtitle_dirs = [d / "subtitles" for d in (root, root.parent)]
    subtitles: dict[str, tuple] = {}  # subtitle_path → (cues, starting offset)
    for n, path in enumerate(files):
        if progress:
            progress(n, len(files), f"Reading {parsed.rel(path)}")
        doc = parsed.json(path)
        if doc is None:
            continue
        rel = parsed.rel(path)
        if not isinstance(doc, list):
            parsed.problems.add(Where(rel), "", "is not a JSON array of records.")
            continue
        split = split_of_file(path.stem)
        for index, record in enumerate(doc):
            rid = record.get("id") if isinstance(record, dict) else None
            where = Where(rel, index, rid if isinstance(rid, str) else "")
            _record(parsed, record, where, split, subtitle_dirs, subtitles)
    return parsed


def _record(parsed: Parsed, record, where: Where, split, subtitle_dirs, subtitles) -> None:
    f = Fields(record, where, parsed.problems)
    if not f.ok:
        return
    f.text("video_id")
    question = f.text("question")
    without = f.text("question_wo_referring_query", required=False)
    candidates = f.strings("candidates")
    options_check(f, "candidates", candidates)
    correct = option_index(f, "correct_choice", candidates)
    position = f.get("position", "int_list", required=False, default=[])
    topic = f.text("topic_category", required=False)
    category = f.text("question_category")
    level = f.text("level", required=False)
    f.text("id", required=False)
    video_path = f.text("video_path")
    subtitle_path = f.text("subtitle_path", required=False, default=None)
    f.get("duration_group", "int", required=False)
    start = f.get("starting_timestamp_for_subtitles", "number", required=False, default=0.0)
    f.get("duration", "number", required=False)
    view_count = f.get("view_count", "nonneg_int", required=False)
    if video_path is not MISSING and (not video_path or "/" in video_path or video_path.startswith(".")):
        f.bad("video_path", f"{video_path!r} is not a file name under videos/.")
    if not f.ok:
        return

    cues = None
    if subtitle_path:
        cues = _subtitles(parsed, subtitle_path, start, where, subtitle_dirs, subtitles)
    video = parsed.video(
        video_path,
        where,
        "video_path",
        split=split,
        topic_category=topic or None,
        view_count=view_count,
    )
    if cues is not None:
        if video.cues is not None and video.cues is not cues:
            parsed.problems.add(where, "subtitle_path", f"names other subtitles for video {video_path} than before.")
        video.cues, video.cue_sources = cues, ("srt", "vtt", "lvb_json")
    referring, span = "", (None, None)
    if without and question.endswith(without) and len(question) > len(without):
        head = question[: len(question) - len(without)]
        referring = head.strip()
        if referring:
            begin = len(head) - len(head.lstrip())
            span = (begin, begin + len(referring))
    parsed.mcqs.append(
        MCQIn(
            source=where,
            videos=[(video_path, "main")],
            question=question,
            options=candidates,
            correct_index=correct,
            category=category,
            level=level,
            referring_query=referring,
            referring_start=span[0],
            referring_end=span[1],
            question_wo_referring_query=without,
            moments=[MomentIn(video=video_path, frame_index=frame, order=k) for k, frame in enumerate(position)],
        )
    )


def _subtitles(parsed: Parsed, subtitle_path: str, start: float, where: Where, dirs, seen) -> list[CueIn] | None:
    key = subtitle_path
    if key in seen:
        cues, offset = seen[key]
        if offset != start:
            parsed.problems.add(
                where, "starting_timestamp_for_subtitles", f"is {start}, an earlier record of {key} said {offset}."
            )
        return cues
    rel = PurePosixPath(subtitle_path)
    if rel.is_absolute() or ".." in rel.parts:
        parsed.problems.add(where, "subtitle_path", f"{subtitle_path!r} is not a path under subtitles/.")
        seen[key] = (None, start)
        return None
    path = next((d / rel for d in dirs if (d / rel).is_file()), None)
    if path is None:
        parsed.problems.add(where, "subtitle_path", f"subtitles/{subtitle_path} does not exist.")
        seen[key] = (None, start)
        return None
    doc = parsed.json(path)
    cues = None if doc is None else subtitle_cues(parsed, doc, Where(parsed.rel(path)), start)
    seen[key] = (cues, start)
    return cues


def subtitle_cues(parsed: Parsed, doc, file: Where, offset: float) -> list[CueIn] | None:
    """A LongVideoBench subtitle array as cues counted from the start of the file (either shape)."""
    if not isinstance(doc, list):
        parsed.problems.add(file, "", "is not a JSON array of subtitles.")
        return None
    cues = []
    for n, element in enumerate(doc):
        where = Where(file.file, n)
        f = Fields(element, where, parsed.problems)
        if not f.ok:
            return None
        if "timestamp" in element:
            stamps = f.get("timestamp", "list")
            text = f.text("text")
            if stamps is not MISSING and (
                len(stamps) != 2 or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in stamps)
            ):
                f.bad("timestamp", "must be [start, end] in seconds.")
            if not f.ok:
                return None
            start, end = float(stamps[0]), float(stamps[1])
        else:
            start_text, end_text, text = f.text("start"), f.text("end"), f.text("line")
            if not f.ok:
                return None
            start, end = _clock(start_text), _clock(end_text)
            if start is None or end is None:
                f.bad("start" if start is None else "end", "must be a time HH:MM:SS.fff.")
                return None
        if offset:
            start, end = start - offset, end - offset
            if end < 0:
                continue
            start = max(start, 0.0)
        if start < 0 or end < start:
            f.bad("timestamp" if "timestamp" in element else "end", f"ends ({end}) before it starts ({start}).")
            return None
        cues.append(CueIn(start, end, text, "lvb_json"))
    return cues


def _clock(text: str) -> float | None:
    parts = text.strip().split(":")
    if len(parts) != 3:
        return None
    try:
        hours, minutes, seconds = int(parts[0]), int(parts[1]), float(parts[2])
    except ValueError:
        return None
    return hours * 3600 + minutes * 60 + seconds
