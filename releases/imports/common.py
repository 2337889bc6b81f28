"""What every benchmark reader shares: the plain records a file is read into, the list of problems
(each naming the file, the record and the field), and small checked readers of JSON values.

A reader never touches the database: it turns files into `Parsed` (videos named by file name, items
in file order, each with the file, record and sha256 it came from); `services.benchmark_import`
matches the videos and writes everything in one transaction, or nothing when any problem was found.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_PROBLEMS = 200
SPLIT_NAMES = {"train": "train", "eval": "eval", "test": "test", "unsplit": ""}


@dataclass(frozen=True)
class Where:
    """A record of a file: its path inside the import, its place (0-based) and its own id."""

    file: str
    index: int | None = None
    record_id: str = ""

    def label(self) -> str:
        if self.index is None:
            return self.file
        own = f" (id {self.record_id})" if self.record_id else ""
        return f"{self.file}, record {self.index}{own}"


class Problems:
    """Problems found in the files: every one counted, the first MAX_PROBLEMS kept."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.total = 0

    def add(self, where: Where, field_name: str, message: str) -> None:
        self.total += 1
        if len(self.rows) < MAX_PROBLEMS:
            place = where.label() + (f", field “{field_name}”" if field_name else "")
            self.rows.append(
                {
                    "file": where.file,
                    "record": where.index,
                    "record_id": where.record_id,
                    "field": field_name,
                    "message": f"{place}: {message}",
                }
            )

    def __bool__(self) -> bool:
        return self.total > 0

    def as_list(self) -> list[dict]:
        rows = list(self.rows)
        if self.total > len(rows):
            rows.append(
                {
                    "file": "",
                    "record": None,
                    "record_id": "",
                    "field": "",
                    "message": f"… and {self.total - len(rows)} more problems not listed.",
                }
            )
        return rows


# --- what a reader hands to the import ------------------------------------------------------------------


@dataclass
class CueIn:
    start_s: float
    end_s: float
    text: str
    source: str
    language: str = ""


@dataclass
class CommentIn:
    time_s: float
    text: str
    user: str = ""


@dataclass
class VideoIn:
    """A video the files name, by its file name, and what they say about it (None: nothing)."""

    file_name: str
    first: Where  # the first record that names it (for "unknown video")
    field_name: str
    name: str | None = None  # the name the files give it (SVBench Video_Name, generic video)
    split: str | None = None
    topic_category: str | None = None
    view_count: int | None = None
    language: str | None = None
    source_url: str | None = None
    cues: list[CueIn] | None = None  # replaces the video's cues of the sources they carry
    cue_sources: tuple[str, ...] = ()
    comments: list[CommentIn] | None = None  # replaces the video's comments

    @property
    def stem(self) -> str:
        return self.name or PurePosixPath(self.file_name).stem


@dataclass
class MomentIn:
    video: str  # file name
    frame_index: int
    time_s: float | None = None  # None: frame_index ÷ the video's fps
    order: int = 0
    note: str = ""


@dataclass
class MCQIn:
    source: Where
    videos: list[tuple[str, str]]  # (file name, role) in input order
    question: str
    options: list[str]
    correct_index: int | None
    category: str = ""
    level: str = ""
    task_group: str = ""
    referring_query: str = ""
    referring_start: int | None = None
    referring_end: int | None = None
    question_wo_referring_query: str = ""
    question_translation: str = ""
    moments: list[MomentIn] = field(default_factory=list)
    family: str = ""  # the benchmark file it must be released in again ("": the import's format)


@dataclass
class PairIn:
    question: str
    answer: str
    skill: str = ""
    question_translation: str = ""
    answer_translation: str = ""


@dataclass
class ChainIn:
    source: Where
    video: str  # file name
    start_s: float
    end_s: float
    pairs: list[PairIn]
    clip_index: int | None = None  # None: its place among the video's imported chains
    key: object = None  # how chain pairs of the same import name it


@dataclass
class RelationIn:
    from_index: int
    to_index: int
    relation_type: str
    decision: str = "accepted"
    rationale: str = ""
    original_question: str = ""
    original_answer: str = ""
    rewritten_question: str = ""
    rewritten_answer: str = ""


@dataclass
class ChainPairIn:
    source: Where
    video: str
    before: object  # the key of the earlier chain
    after: object
    relations: list[RelationIn]


@dataclass
class Parsed:
    format: str
    root: Path
    files: dict[str, dict] = field(default_factory=dict)  # path → {path, sha256, bytes}
    videos: dict[str, VideoIn] = field(default_factory=dict)
    mcqs: list[MCQIn] = field(default_factory=list)
    chains: list[ChainIn] = field(default_factory=list)
    chain_pairs: list[ChainPairIn] = field(default_factory=list)
    problems: Problems = field(default_factory=Problems)
    media_dirs: list[Path] = field(default_factory=list)  # where videos not yet in the project are looked for

    def read(self, path: Path) -> bytes | None:
        """The bytes of a file of the import, remembered with its sha256; None (and a problem) if unreadable."""
        rel = self.rel(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.problems.add(Where(rel), "", f"cannot be read ({exc.strerror or exc}).")
            return None
        self.files[rel] = {"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        return data

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    def sha(self, path: Path) -> str:
        return self.files.get(self.rel(path), {}).get("sha256", "")

    def json(self, path: Path):
        """A whole JSON file; None (and a problem naming the line) when it is not JSON."""
        data = self.read(path)
        if data is None:
            return None
        try:
            return json.loads(data.decode("utf-8"))
        except UnicodeDecodeError:
            self.problems.add(Where(self.rel(path)), "", "is not UTF-8 text.")
        except ValueError as exc:
            self.problems.add(Where(self.rel(path)), "", f"is not valid JSON ({exc}).")
        return None

    def jsonl(self, path: Path) -> list[tuple[int, object]] | None:
        """(line index, value) of every non-empty line; bad lines become problems."""
        data = self.read(path)
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.problems.add(Where(self.rel(path)), "", "is not UTF-8 text.")
            return None
        out = []
        for n, line in enumerate(text.splitlines()):
            if not line.strip():
                continue
            try:
                out.append((n, json.loads(line)))
            except ValueError as exc:
                self.problems.add(Where(self.rel(path), n), "", f"is not valid JSON ({exc}).")
        return out

    def video(self, file_name: str, where: Where, field_name: str, **facts) -> VideoIn:
        """The video of this file name, created on first mention; facts that disagree are problems."""
        video = self.videos.get(file_name)
        if video is None:
            video = self.videos[file_name] = VideoIn(file_name=file_name, first=where, field_name=field_name)
        for key, value in facts.items():
            if value is None:
                continue
            current = getattr(video, key)
            if current is None:
                setattr(video, key, value)
            elif current != value:
                self.problems.add(
                    where, key, f"says {value!r} for video {file_name}, an earlier record said {current!r}."
                )
        return video


# --- checked reading of one record -----------------------------------------------------------------------

MISSING = object()


class Fields:
    """Reads the fields of one JSON object, recording a problem for each missing or mistyped one."""

    def __init__(self, record, where: Where, problems: Problems):
        self.where, self.problems = where, problems
        self.ok = isinstance(record, dict)
        self.record = record if self.ok else {}
        if not self.ok:
            problems.add(where, "", f"is {_kind(record)}, not an object.")

    def bad(self, name: str, message: str) -> None:
        self.ok = False
        self.problems.add(self.where, name, message)

    def get(self, name: str, kind: str, *, required: bool = True, default=None):
        if name not in self.record or (not required and self.record[name] is None):
            if required:
                self.bad(name, "is missing.")
                return MISSING
            return default
        value = self.record[name]
        checked = _check(value, kind)
        if checked is MISSING:
            self.bad(name, f"is {_kind(value)}; it must be {KINDS[kind]}.")
        return checked

    def text(self, name: str, *, required: bool = True, default: str = ""):
        return self.get(name, "str", required=required, default=default)

    def strings(self, name: str, *, required: bool = True, default=None):
        return self.get(name, "str_list", required=required, default=default)


KINDS = {
    "str": "text",
    "int": "a whole number",
    "nonneg_int": "a whole number ≥ 0",
    "number": "a number",
    "bool": "true or false",
    "str_list": "a list of texts",
    "int_list": "a list of whole numbers ≥ 0",
    "list": "a list",
    "dict": "an object",
}


def _check(value, kind: str):
    if kind == "str":
        return value if isinstance(value, str) else MISSING
    if kind in ("int", "nonneg_int"):
        if isinstance(value, bool) or not isinstance(value, int) or (kind == "nonneg_int" and value < 0):
            return MISSING
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return MISSING
        return float(value)
    if kind == "bool":
        return value if isinstance(value, bool) else MISSING
    if kind == "str_list":
        return list(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else MISSING
    if kind == "int_list":
        ok = isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
        return list(value) if ok else MISSING
    if kind == "list":
        return value if isinstance(value, list) else MISSING
    if kind == "dict":
        return value if isinstance(value, dict) else MISSING
    raise ValueError(kind)


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def split_of_file(stem: str) -> str | None:
    """The split a record file names (`lvb_test` → test, `unsplit` → ""); None when it names none of ours."""
    tail = stem.rsplit("_", 1)[-1].lower()
    return SPLIT_NAMES.get(tail)


def option_index(fields: Fields, name: str, options, *, required: bool = False):
    """A 0-based correct option index that must fall among the options."""
    value = fields.get(name, "nonneg_int", required=required)
    if value is MISSING or value is None:
        return value
    if options is not MISSING and value >= len(options):
        fields.bad(name, f"is {value}, but there are only {len(options)} options (0 to {len(options) - 1}).")
        return MISSING
    return value


def options_check(fields: Fields, name: str, options) -> None:
    """2 to 5 options (an MCQ stores at most five)."""
    if options is not MISSING and options is not None and not 2 <= len(options) <= 5:
        fields.bad(name, f"has {len(options)} options; an MCQ has 2 to 5.")


def record_files(root: Path, folder: str, suffix: str) -> list[Path]:
    """The record files of a format: under `<root>/<folder>/` when that folder exists, else at the top."""
    base = root / folder if (root / folder).is_dir() else root
    return sorted(p for p in base.glob(f"*{suffix}") if p.is_file())


def media_dirs(root: Path) -> list[Path]:
    """Where a release keeps its videos: `videos/` beside the format's folder (or above it)."""
    return [d / "videos" for d in (root, root.parent) if (d / "videos").is_dir()]


def import_root(source: Path, folder: str) -> tuple[Path, list[Path] | None]:
    """The release folder an import reads from, and the record files when one file was given.

    A folder is the release (or the format's own folder inside it); a single record file is read with
    the release folder above it (`<release>/<folder>/<file>` or `<release>/<file>`)."""
    source = Path(source)
    if source.is_dir():
        if source.name == folder and not (source / folder).is_dir():
            return source.parent, None
        return source, None
    parent = source.parent
    root = parent.parent if parent.name == folder else parent
    return root, [source]
