"""What every format writer shares: stable JSON text, files written into storage with their sha256,
the per-video bundle the build hands to writers, and the list of problems validation finds.

Byte-identical output rests on three habits kept everywhere: rows are read in an explicit order,
JSON is written by `dumps` (fixed separators, keys in insertion order, floats as Python's shortest
round-trip repr, UTF-8 without escapes), and nothing about the build itself (time, host) goes into a
data file.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.core.files import File
from django.core.files.base import ContentFile

FORMATS = ("svbench", "longvideobench", "mvpbench", "livibench", "generic")
# A JSON document of a format changes shape → its schema version moves (manifest: schema_versions).
SCHEMA_VERSIONS = {
    "manifest": "1",
    "svbench": "1",
    "longvideobench": "1",
    "mvpbench": "1",
    "livibench": "1",
    "generic": "1",
}
MAX_PROBLEMS = 1000
SPOOL_BYTES = 8 * 1024 * 1024
_COPY_CHUNK = 1024 * 1024


def dumps(obj) -> str:
    """The one JSON text of `obj` every release file uses."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def split_label(split: str) -> str:
    """How a split is named in file names: train, eval, test; videos without one are `unsplit`."""
    return split or "unsplit"


class ReleaseStorageError(RuntimeError):
    """A file could not be written under the release's folder as asked."""


class ReleaseFiles:
    """Writes files under the release's storage prefix and remembers each one's sha256 and size."""

    def __init__(self, storage, prefix: str):
        self.storage = storage
        self.prefix = prefix.rstrip("/") + "/"
        self.records: dict[str, dict] = {}

    def name(self, path: str) -> str:
        return self.prefix + path

    def exists(self, path: str) -> bool:
        return self.records.get(path) is not None

    def _check(self, path: str) -> None:
        norm = posixpath.normpath(path)
        if norm != path or path.startswith(("/", "../")) or path in self.records:
            raise ReleaseStorageError(f"{path!r} is not a new relative path inside the release")

    def _save(self, path: str, content) -> None:
        saved = self.storage.save(self.name(path), content)
        if saved != self.name(path):
            # The storage picked another name: a stale file is in the way. Never leave it ambiguous.
            self.storage.delete(saved)
            raise ReleaseStorageError(f"{self.name(path)} already exists in storage; the release folder was not empty")

    def write_bytes(self, path: str, data: bytes) -> None:
        self._check(path)
        self._save(path, ContentFile(data, name=posixpath.basename(path)))
        self.records[path] = {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}

    def write_text(self, path: str, text: str) -> None:
        self.write_bytes(path, text.encode("utf-8"))

    def write_json(self, path: str, obj) -> None:
        self.write_bytes(path, dumps(obj).encode("utf-8"))

    def open_stream(self, path: str) -> StreamWriter:
        """A file written piece by piece (spooled to disk past a few MB); `close_stream` stores it."""
        self._check(path)
        self.records[path] = None  # taken: a second open of the same path is refused
        return StreamWriter(path)

    def close_stream(self, writer: StreamWriter) -> None:
        try:
            writer.tmp.seek(0)
            self._save(writer.path, File(writer.tmp, name=posixpath.basename(writer.path)))
            self.records[writer.path] = {"path": writer.path, "sha256": writer.sha.hexdigest(), "bytes": writer.size}
        finally:
            writer.tmp.close()

    @contextmanager
    def stream(self, path: str) -> Iterator[StreamWriter]:
        writer = self.open_stream(path)
        try:
            yield writer
        except BaseException:
            writer.tmp.close()
            raise
        self.close_stream(writer)

    def copy_from_storage(self, path: str, source_name: str, source_storage=None) -> None:
        """Copy a stored file (a video's original) into the release, hashing it on the way."""
        source_storage = source_storage or self.storage
        with self.stream(path) as out, source_storage.open(source_name, "rb") as src:
            while chunk := src.read(_COPY_CHUNK):
                out.write_bytes(chunk)

    def copy_from_local(self, path: str, local_path) -> None:
        with self.stream(path) as out, open(local_path, "rb") as src:
            while chunk := src.read(_COPY_CHUNK):
                out.write_bytes(chunk)

    def listing(self) -> list[dict]:
        return [self.records[p] for p in sorted(self.records) if self.records[p] is not None]


class StreamWriter:
    def __init__(self, path: str):
        self.path = path
        self.tmp = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed by ReleaseFiles.stream
        self.sha = hashlib.sha256()
        self.size = 0

    def write_bytes(self, data: bytes) -> None:
        self.tmp.write(data)
        self.sha.update(data)
        self.size += len(data)

    def write(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))


class JsonArrayWriter:
    """A JSON array written one element at a time (same text as `dumps` of the whole list)."""

    def __init__(self, stream: StreamWriter):
        self.stream = stream
        self.count = 0
        stream.write("[")

    def add(self, obj) -> None:
        self.stream.write(("," if self.count else "") + dumps(obj))
        self.count += 1

    def close(self) -> None:
        self.stream.write("]")


@dataclass
class Problems:
    """What validation found, as {"format", "file", "item", "message"} rows (the first MAX_PROBLEMS kept)."""

    rows: list[dict] = field(default_factory=list)
    total: int = 0

    def add(self, fmt: str, file: str, item: str, message: str) -> None:
        self.total += 1
        if len(self.rows) < MAX_PROBLEMS:
            self.rows.append({"format": fmt, "file": file, "item": item, "message": message})

    def extend(self, fmt: str, file: str, item: str, messages) -> None:
        for message in messages:
            self.add(fmt, file, item, message)

    def as_list(self) -> list[dict]:
        rows = list(self.rows)
        if self.total > len(rows):
            rows.append(
                {
                    "format": "",
                    "file": "",
                    "item": "",
                    "message": f"… and {self.total - len(rows)} more problems not listed.",
                }
            )
        return rows


# --- what the build hands to writers, one video at a time -------------------------------------------


@dataclass
class VideoInfo:
    id: int
    name: str
    file_name: str  # under videos/ in the release
    original: str  # storage name of the original file
    duration_s: float | None
    fps: float | None
    frame_count: int | None
    topic_category: str
    view_count: int | None
    has_audio: bool
    language: str
    split: str
    duration_group: str
    source_url: str = ""
    width: int | None = None
    height: int | None = None

    @property
    def playable_duration_s(self) -> float | None:
        """How long the video decodes for: the probed duration, capped by frames ÷ fps, rounded down to ms."""
        if self.duration_s is None:
            return None
        duration = self.duration_s
        if self.frame_count and self.fps:
            duration = min(duration, self.frame_count / self.fps)
        return int(duration * 1000) / 1000


@dataclass
class PairData:
    id: int
    index: int
    question: str
    answer: str
    skill: str
    question_translation: str
    answer_translation: str


@dataclass
class ChainData:
    id: int
    clip_index: int
    start_s: float
    end_s: float
    pairs: list[PairData]
    meta: dict  # status, version, provenance: for the generic format


@dataclass
class RelationData:
    id: int
    from_pair_id: int
    to_pair_id: int
    from_index: int
    to_index: int
    relation_type: str
    decision: str
    origin: str
    rationale: str
    original_question: str
    original_answer: str
    rewritten_question: str
    rewritten_answer: str


@dataclass
class ChainPairData:
    id: int
    before_index: int
    chain_before_id: int
    chain_after_id: int
    relations: list[RelationData]
    meta: dict


@dataclass
class MCQVideoData:
    video_id: int
    name: str
    file_name: str
    role: str
    order: int


@dataclass
class MomentData:
    video_id: int
    time_s: float
    frame_index: int
    order: int
    note: str


@dataclass
class MCQData:
    id: int
    family: str  # longvideobench, mvpbench or livibench: which benchmark file it belongs in
    question: str
    referring_query: str
    referring_start: int | None
    referring_end: int | None
    question_wo_referring_query: str
    options: list
    correct_index: int | None
    category: str
    level: str
    task_group: str
    question_translation: str
    videos: list[MCQVideoData]
    moments: list[MomentData]
    meta: dict


@dataclass
class CueData:
    start_s: float
    end_s: float
    text: str
    source: str
    language: str


@dataclass
class VideoBundle:
    video: VideoInfo
    chains: list[ChainData]
    chain_pairs: list[ChainPairData]
    mcqs: list[MCQData]
    cues: list[CueData] | None = None  # loaded only when a writer needs them


class Writer:
    """One format. The build calls `begin`, then `video` for every released video in name order, then `finish`."""

    format = ""
    needs_cues = False  # subtitles or transcripts of videos with MCQs of this format
    needs_media = True  # the videos its records reference go under videos/ (with include_media)

    def __init__(self, ctx):
        self.ctx = ctx

    def begin(self) -> None:  # noqa: B027 - optional hook
        pass

    def video(self, bundle: VideoBundle) -> None:
        raise NotImplementedError

    def finish(self) -> None:  # noqa: B027 - optional hook
        pass

    def problem(self, file: str, item: str, message: str) -> None:
        self.ctx.problems.add(self.format, file, item, message)

    def problems(self, file: str, item: str, messages) -> None:
        self.ctx.problems.extend(self.format, file, item, messages)


@dataclass
class BuildContext:
    """What the writers of one build share."""

    project: object
    release: object
    files: ReleaseFiles
    problems: Problems
    test_style: bool
    include_media: bool
    seed: int
    path_p: float
    primary_language: str  # "EN", "ZH", …: the language QA text is written in
    languages: list[str]  # [primary] or [primary, other] when the release holds translations
    lvb_levels: dict[str, str]  # LongVideoBench category code → level
    tasks: dict[str, str]  # LiViBench task → group
    relation_labels: dict[str, str]  # relation type code → released label
    videos: dict[int, VideoInfo]  # every video a record may name (candidates of MVPBench included)
    media_copier: object = None  # callable(VideoInfo) → None; copies the original under videos/ once

    def media(self, video: VideoInfo) -> str:
        """The release path of the video's file; with include_media the file is copied there (once)."""
        if self.include_media and self.media_copier is not None:
            self.media_copier(video)
        return f"videos/{video.file_name}"

    def split_of(self, video: VideoInfo) -> str:
        return split_label(video.split)
