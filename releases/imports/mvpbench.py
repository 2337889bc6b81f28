"""Read MVPBench JSONL: the inverse of releases/writers/mvpbench.py.

Record files are `mvpbench/<split>.jsonl` (or the `.jsonl` files at the top of the folder, or the one
file given); the file's name gives the reference videos their split when it is train, eval, test or
unsplit. A line becomes an MCQ over several videos: `id` (the reference video's file name, order 0)
then `video_options` (the candidates, in order), `options` (labels) and `answer` (one of them;
optional: test-style files have none). `query` is stored as the question; when it starts with one
`<video>` line per input video and has no other placeholder, those lines are left out of the
question (the writer puts them back the same way).
"""

from __future__ import annotations

from pathlib import Path

from ..validation import VIDEO_PLACEHOLDER
from .common import MISSING, Fields, MCQIn, Parsed, Where, import_root, media_dirs, record_files, split_of_file

FORMAT = "mvpbench"
FOLDER = "mvpbench"


def read(source: Path, *, project=None, progress=None) -> Parsed:
    root, given = import_root(source, FOLDER)
    parsed = Parsed(format=FORMAT, root=root, media_dirs=media_dirs(root))
    files = given or record_files(root, FOLDER, ".jsonl")
    if not files:
        parsed.problems.add(Where(parsed.rel(root)), "", "holds no MVPBench record file (mvpbench/*.jsonl).")
    for n, path in enumerate(files):
        if progress:
            progress(n, len(files), f"Reading {parsed.rel(path)}")
        lines = parsed.jsonl(path)
        if lines is None:
            continue
        split = split_of_file(path.stem)
        for index, record in lines:
            _record(parsed, record, Where(parsed.rel(path), index, _id(record)), split)
    return parsed


def _id(record) -> str:
    value = record.get("id") if isinstance(record, dict) else None
    return value if isinstance(value, str) else ""


def _file_name(f: Fields, name: str, value) -> None:
    for v in value if isinstance(value, list) else [value]:
        if v is not MISSING and (not v or "/" in v or v.startswith(".")):
            f.bad(name, f"{v!r} is not a file name under videos/.")


def _record(parsed: Parsed, record, where: Where, split) -> None:
    f = Fields(record, where, parsed.problems)
    if not f.ok:
        return
    reference = f.text("id")
    query = f.text("query")
    candidates = f.strings("video_options")
    options = f.strings("options")
    answer = f.text("answer", required=False, default=None)
    _file_name(f, "id", reference)
    _file_name(f, "video_options", candidates)
    if candidates is not MISSING and not candidates:
        f.bad("video_options", "is empty; an MVPBench question has at least one candidate video.")
    if options is not MISSING and not 2 <= len(options) <= 5:
        f.bad("options", f"has {len(options)} options; an MCQ has 2 to 5.")
    if answer not in (MISSING, None) and options is not MISSING and answer not in options:
        f.bad("answer", f"{answer!r} is not one of the options {options}.")
    if not f.ok:
        return
    inputs = [reference, *candidates]
    if len(set(inputs)) != len(inputs):
        f.bad("video_options", "names a video twice.")
        return
    head = "\n".join([VIDEO_PLACEHOLDER] * len(inputs) + [""])
    question = query
    if query.startswith(head) and VIDEO_PLACEHOLDER not in query[len(head) :]:
        question = query[len(head) :]
    elif query.count(VIDEO_PLACEHOLDER) != len(inputs):
        f.bad(
            "query", f"has {query.count(VIDEO_PLACEHOLDER)} {VIDEO_PLACEHOLDER} placeholders for {len(inputs)} videos."
        )
        return
    parsed.video(reference, where, "id", split=split)
    for name in candidates:
        parsed.video(name, where, "video_options")
    parsed.mcqs.append(
        MCQIn(
            source=where,
            videos=[(reference, "reference")] + [(name, "candidate") for name in candidates],
            question=question,
            options=options,
            correct_index=None if answer is None else options.index(answer),
        )
    )
