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
import math
import os
import posixpath
import re
import tempfile
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import orjson
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage

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


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
json_string = json.encoder.encode_basestring  # a str as JSON text, exactly as _ENCODER writes it
# Types orjson would write and the stdlib refuses go to the stdlib (which then raises, as ever).
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
_SMALL_FLOAT = re.compile(rb"\de-\d")


def dumps(obj) -> str:
    """The one JSON text of `obj` every release file uses."""
    return _ENCODER.encode(obj)


def dumps_bytes(obj) -> bytes:
    """`dumps(obj)` in UTF-8, the same bytes, written by orjson (several times faster) when it can.

    orjson's text equals the stdlib's (strings, ints, floats' shortest repr) except where it says
    nothing: NaN and ±inf, which it writes as null where the stdlib refuses them; floats of magnitude
    below 1e-4, which it writes as 0.00001 or 1e-7 where Python writes 1e-05 and 1e-07; and what it
    refuses (ints beyond 64 bits, non-str keys, lone surrogates, subclasses, dates). So when orjson
    refuses, or its bytes hold `null`, `0.0000` or a digit, `e-`, digit anywhere (inside a string too:
    a false alarm costs time, never bytes), the stdlib encoder gives the answer: the text, or the error.
    tests/releases/test_writers_common.py holds the cases.
    """
    try:
        data = orjson.dumps(obj, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError included
        return _ENCODER.encode(obj).encode("utf-8")
    if b"null" in data or b"0.0000" in data or (b"e-" in data and _SMALL_FLOAT.search(data)):
        return _ENCODER.encode(obj).encode("utf-8")
    return data


def json_float(value: float) -> str:
    """A float as JSON text, exactly as `dumps` writes it (the shortest repr that reads back the same)."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no JSON text")
    return float.__repr__(value)


def split_label(split: str) -> str:
    """How a split is named in file names: train, eval, test; videos without one are `unsplit`."""
    return split or "unsplit"


class ReleaseStorageError(RuntimeError):
    """A file could not be written under the release's folder as asked."""


class ReleaseFiles:
    """Writes files under the release's storage prefix and remembers each one's sha256 and size.

    Any Django storage works (S3 included): a file is stored with `storage.save` once it is complete,
    long ones spooled to a temporary file first. On local storage (FileSystemStorage) a release's
    thousands of small files are written straight to the path the storage gives them, with its
    permission settings, by a few threads: creating a file costs the disk far more than the CPU, so
    the build goes on encoding while files are being created. That is what `save` would do, without
    its per-file search for a free name (the build empties the folder first; an existing file is
    refused, never renamed). `listing()` waits for every write and raises the first failure.
    """

    WRITE_THREADS = 4
    MAX_QUEUED = 256  # files handed to the threads and not yet written (bounds the memory they hold)

    def __init__(self, storage, prefix: str):
        self.storage = storage
        self.prefix = prefix.rstrip("/") + "/"
        self.records: dict[str, dict | None] = {}
        self.local = isinstance(storage, FileSystemStorage)
        self._dirs: set[str] = set()
        self._pool = (
            ThreadPoolExecutor(max_workers=self.WRITE_THREADS, thread_name_prefix="release-files")
            if self.local and self.WRITE_THREADS
            else None
        )
        self._queued: deque = deque()

    def name(self, path: str) -> str:
        return self.prefix + path

    def exists(self, path: str) -> bool:
        return self.records.get(path) is not None

    def _check(self, path: str) -> None:
        norm = posixpath.normpath(path)
        if norm != path or path.startswith(("/", "../")) or path in self.records:
            raise ReleaseStorageError(f"{path!r} is not a new relative path inside the release")
        self.records[path] = None  # taken: a second write of the same path is refused

    def _local_path(self, path: str) -> str:
        full = self.storage.path(self.name(path))
        folder = os.path.dirname(full)
        if folder not in self._dirs:
            mode = self.storage.directory_permissions_mode
            if mode is None:
                os.makedirs(folder, exist_ok=True)
            else:
                old = os.umask(0o777 & ~mode)  # as FileSystemStorage does, so the mode is exact
                try:
                    os.makedirs(folder, mode, exist_ok=True)
                finally:
                    os.umask(old)
            self._dirs.add(folder)
        return full

    def _local_create(self, full: str):
        try:
            handle = open(full, "xb")  # noqa: SIM115 - closed by the caller
        except FileExistsError:
            raise ReleaseStorageError(f"{full} already exists; the release folder was not empty") from None
        if self.storage.file_permissions_mode is not None:
            os.chmod(full, self.storage.file_permissions_mode)
        return handle

    def _local_write(self, full: str, data: bytes, record: dict | None = None) -> None:
        with self._local_create(full) as fh:
            fh.write(data)
        if record is not None:
            record["sha256"] = hashlib.sha256(data).hexdigest()

    def _submit(self, path: str, data: bytes, record: dict | None = None) -> None:
        """Write `data` to the path (by a writing thread when there are some); with `record`, also put the
        data's sha256 into it there. Hashing off the building thread matters more than its CPU time: it
        releases the GIL, and winning it back from the busy writing threads cost more than the hash."""
        full = self._local_path(path)
        if self._pool is None:
            self._local_write(full, data, record)
            return
        while len(self._queued) >= self.MAX_QUEUED:
            self._queued.popleft().result()
        self._queued.append(self._pool.submit(self._local_write, full, data, record))

    def wait(self) -> None:
        """Every queued write done (the first failure raised)."""
        while self._queued:
            self._queued.popleft().result()

    def close(self) -> None:
        if self._pool is not None:
            try:
                self.wait()
            finally:
                self._pool.shutdown(wait=True)
                self._pool = None

    def _save(self, path: str, content) -> None:
        saved = self.storage.save(self.name(path), content)
        if saved != self.name(path):
            # The storage picked another name: a stale file is in the way. Never leave it ambiguous.
            self.storage.delete(saved)
            raise ReleaseStorageError(f"{self.name(path)} already exists in storage; the release folder was not empty")

    def write_bytes(self, path: str, data: bytes) -> None:
        self._check(path)
        record = {"path": path, "sha256": None, "bytes": len(data)}  # sha256: filled in once written
        if self.local:
            self._submit(path, data, record)
        else:
            self._save(path, ContentFile(data, name=posixpath.basename(path)))
            record["sha256"] = hashlib.sha256(data).hexdigest()
        self.records[path] = record

    def write_text(self, path: str, text: str) -> None:
        self.write_bytes(path, text.encode("utf-8"))

    def write_json(self, path: str, obj) -> None:
        self.write_bytes(path, dumps_bytes(obj))

    def open_stream(self, path: str) -> StreamWriter:
        """A file written piece by piece; `close_stream` stores it."""
        self._check(path)
        if self.local:
            return StreamWriter(path, None, files=self)
        return StreamWriter(path, tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES), files=self)  # noqa: SIM115

    def close_stream(self, writer: StreamWriter) -> None:
        try:
            writer.flush()
            if not self.local:
                writer.fh.seek(0)
                self._save(writer.path, File(writer.fh, name=posixpath.basename(writer.path)))
            elif writer.fh is None:  # small enough to have stayed in memory
                self._submit(writer.path, b"".join(writer.held))
                writer.held = []
            self.records[writer.path] = {"path": writer.path, "sha256": writer.sha.hexdigest(), "bytes": writer.size}
        finally:
            writer.discard()

    @contextmanager
    def stream(self, path: str) -> Iterator[StreamWriter]:
        writer = self.open_stream(path)
        try:
            yield writer
        except BaseException:
            writer.discard()
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
        self.wait()
        return [self.records[p] for p in sorted(self.records) if self.records[p] is not None]


class StreamWriter:
    """A file written piece by piece. Text pieces are gathered and encoded in blocks (many small writes
    cost more than the encoding). On local storage the bytes stay in memory up to SPOOL_BYTES and are
    then handed to the writing threads whole; a longer file is created and written as it grows."""

    BUFFER_CHARS = 1 << 20

    def __init__(self, path: str, fh, *, files: ReleaseFiles):
        self.path = path
        self.fh = fh
        self.files = files
        self.sha = hashlib.sha256()
        self.size = 0
        self.held: list[bytes] = []
        self._held_bytes = 0
        self._pending: list[bytes] = []
        self._pending_chars = 0  # bytes, in fact: the pieces are encoded as they come

    def write_bytes(self, data: bytes) -> None:
        self.flush()
        self._put(data)

    def _put(self, data: bytes) -> None:
        self.sha.update(data)
        self.size += len(data)
        if self.fh is None:
            self.held.append(data)
            self._held_bytes += len(data)
            if self._held_bytes <= SPOOL_BYTES:
                return
            self.fh = self.files._local_create(self.files._local_path(self.path))
            data, self.held = b"".join(self.held), []
        self.fh.write(data)

    def write(self, text: str) -> None:
        self.write_data(text.encode("utf-8"))

    def write_data(self, data: bytes) -> None:
        """Bytes, gathered like text (`write_bytes` stores them at once, for large blocks)."""
        self._pending.append(data)
        self._pending_chars += len(data)
        if self._pending_chars >= self.BUFFER_CHARS:
            self.flush()

    def write_json_line(self, obj) -> None:
        """`dumps(obj)` and a newline: one JSONL line."""
        self._pending.append(dumps_bytes(obj))
        self._pending.append(b"\n")
        self._pending_chars += len(self._pending[-2]) + 1
        if self._pending_chars >= self.BUFFER_CHARS:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending, self._pending_chars = [], 0
            self._put(data)

    def discard(self) -> None:
        self.held = []
        if self.fh is not None:
            self.fh.close()


class JsonArrayWriter:
    """A JSON array written one element at a time (same text as `dumps` of the whole list)."""

    def __init__(self, stream: StreamWriter):
        self.stream = stream
        self.count = 0
        stream.write_data(b"[")

    def add(self, obj) -> None:
        if self.count:
            self.stream.write_data(b",")
        self.stream.write_data(dumps_bytes(obj))
        self.count += 1

    def close(self) -> None:
        self.stream.write_data(b"]")


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
    """One format. The build calls `begin`, then for each chunk of videos `chunk` with its bundles and
    `video` for each of them, all in name order, then `finish`."""

    format = ""
    needs_cues = False  # subtitles or transcripts of videos with MCQs of this format
    needs_media = True  # the videos its records reference go under videos/ (with include_media)

    def __init__(self, ctx):
        self.ctx = ctx

    def begin(self) -> None:  # noqa: B027 - optional hook
        pass

    def chunk(self, bundles: list[VideoBundle]) -> None:  # noqa: B027 - optional hook
        """The bundles `video` is about to be called with (to read what they need in one query)."""

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
    # Record file → the MCQ id of each of its records, in order: the manifest's `items`, so a
    # prediction on a record links back to its item.
    record_items: dict[str, list[int]] = field(default_factory=dict)

    def record_item(self, file: str, item_id: int) -> None:
        self.record_items.setdefault(file, []).append(item_id)

    def media(self, video: VideoInfo) -> str:
        """The release path of the video's file; with include_media the file is copied there (once)."""
        if self.include_media and self.media_copier is not None:
            self.media_copier(video)
        return f"videos/{video.file_name}"

    def split_of(self, video: VideoInfo) -> str:
        return split_label(video.split)
