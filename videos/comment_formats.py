"""Read real-time viewer comments (danmaku) from CSV or JSONL, one row at a time.

A LiViBench-scale file has millions of rows and hundreds of MB, so nothing here holds the file:
`iter_comments` decodes incrementally (see text_encoding.open_text_stream) and yields one
`CommentRow` or `RowProblem` per record. A bad row is reported with its line number and skipped;
only a file that cannot be comments at all (binary, no time or text column, a JSON array) is
refused, and that happens when `iter_comments` is called, before a single row is read.

`write_copy_rows` turns rows into PostgreSQL COPY text format, so the importer can load them with
`cursor.copy_expert(copy_sql(), buffer)` in batches.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Self, TextIO

from django.utils.translation import gettext as _

from projects.refusals import Refused
from videos.subtitle_formats import parse_clock
from videos.text_encoding import TextDecodeError, open_text_stream

CSV = "csv"
JSONL = "jsonl"

# Header names (and JSONL keys) accepted for each field, in order of preference; compared after
# lower-casing and turning spaces and dashes into underscores.
TIME_ALIASES = ("time", "time_s", "timestamp", "t", "offset", "offset_s", "seconds", "sec", "time_sec", "start")
TEXT_ALIASES = ("text", "content", "comment", "message", "msg", "body", "danmaku")
USER_ALIASES = ("user", "username", "user_name", "author", "nickname", "nick", "uid", "user_id", "sender")

# videos.models.Comment.user's max_length: a longer value would make the whole COPY batch fail.
USER_MAX_LENGTH = 200
# A JSONL line longer than this is reported and skipped without being held in memory.
MAX_LINE_CHARS = 1_000_000

COPY_COLUMNS = ("video_id", "time_s", "text", "user", "metadata")


@dataclass(frozen=True, slots=True)
class CommentRow:
    line: int
    time_s: float
    text: str
    user: str = ""
    metadata: dict | None = None


@dataclass(frozen=True, slots=True)
class RowProblem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class CommentFormatError(Refused, ValueError):
    """The file cannot be a comments file; nothing was read from it."""

    status, code = 400, "comment_format"


def _normalise_name(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lstrip("\ufeff").strip().lower())


def _pick(normalised: list[str], aliases: tuple[str, ...]) -> int | None:
    for alias in aliases:
        if alias in normalised:
            return normalised.index(alias)
    return None


def _aliases(aliases: tuple[str, ...]) -> str:
    return ", ".join(aliases)


def parse_comment_time(value) -> float:
    """Seconds from a number, "12.5", "HH:MM:SS(.fff)" or "MM:SS(.fff)"; raises ValueError."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"time is {json.dumps(value)}, not a time")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError("missing time")
        try:
            seconds = float(text)
        except ValueError:
            try:
                seconds = parse_clock(text)
            except ValueError:
                raise ValueError(
                    f'bad time "{text[:40]}" (expected seconds like 12.5, HH:MM:SS.fff or MM:SS)'
                ) from None
    else:
        # Bad data in the file, not a programming error: callers report ValueError as a row problem.
        raise ValueError(f"time is a {type(value).__name__}, not a time")
    if not math.isfinite(seconds):
        raise ValueError(f'bad time "{value}" (not a finite number)')
    if seconds < 0:
        raise ValueError(f"negative time ({seconds:g} s)")
    return seconds


# Lone surrogates: our marker for bytes that did not decode, or an unpaired \udXXX escape in JSON;
# neither can be stored as UTF-8.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")


class CommentReader:
    """Iterator of CommentRow | RowProblem over one file; also says what it found (format, columns)."""

    def __init__(self, fileobj_or_path, filename: str | None = None):
        self.filename = filename or (str(fileobj_or_path) if isinstance(fileobj_or_path, (str, os.PathLike)) else None)
        extension = os.path.splitext(self.filename or "")[1].lower()
        # A text stream handed in stays the caller's to close; one we open is ours.
        self._owns_stream = not isinstance(fileobj_or_path, io.TextIOBase)
        try:
            self._stream, self.encoding = open_text_stream(fileobj_or_path)
        except TextDecodeError as exc:
            raise CommentFormatError(_("not a comments file: %(exc)s") % {"exc": exc}) from None
        try:
            self._rows = self._open(extension)
        except BaseException:
            self.close()
            raise

    # -- set-up: everything that can refuse the file happens here, before any row is yielded.

    def _open(self, extension: str) -> Iterator[CommentRow | RowProblem]:
        blank = 0
        while True:
            first = self._stream.readline(MAX_LINE_CHARS)
            if not first:
                raise CommentFormatError(_("empty file: no header and no comments"))
            if first.strip():
                break
            blank += 1
        head = first.strip()
        if head.startswith("["):
            raise CommentFormatError(
                "this is a JSON array; comments must be JSONL (one JSON object per line) or CSV with a header row"
            )
        if head.startswith("{"):
            self.format = JSONL
            # JSONL keys may differ from line to line, so they are resolved per line.
            self.columns, self.extra_columns = {}, []
            return self._jsonl_rows(first, blank + 1)
        if extension in (".jsonl", ".ndjson"):
            raise CommentFormatError(f'not JSONL: line {blank + 1} is not a JSON object: "{head[:60]}"')
        self.format = CSV
        return self._csv_rows(first, blank)

    def _csv_header(self, first: str) -> tuple[str, list[str], int, int, int | None]:
        candidates = []
        for delimiter in (",", "\t", ";", "|"):
            header = next(csv.reader([first], delimiter=delimiter), [])
            names = [_normalise_name(name) for name in header]
            time_i, text_i = _pick(names, TIME_ALIASES), _pick(names, TEXT_ALIASES)
            if time_i is not None and text_i is not None:
                return delimiter, header, time_i, text_i, _pick(names, USER_ALIASES)
            candidates.append((time_i, text_i, header))
        time_i, text_i, header = candidates[0]
        missing = []
        if time_i is None:
            missing.append(f"no time column (one of: {_aliases(TIME_ALIASES)})")
        if text_i is None:
            missing.append(f"no text column (one of: {_aliases(TEXT_ALIASES)})")
        found = ", ".join(f'"{name.strip()[:30]}"' for name in header[:10])
        raise CommentFormatError(
            f"not a comments CSV: the header row has {' and '.join(missing)}; found columns: {found}. "
            "The first line must be a header naming the columns."
        )

    def _csv_rows(self, first: str, blank: int) -> Iterator[CommentRow | RowProblem]:
        delimiter, header, time_i, text_i, user_i = self._csv_header(first)
        roles = {time_i, text_i, user_i} - {None}
        extras, taken = [], set()
        for i, name in enumerate(header):
            if i in roles:
                continue
            key = name.strip().lstrip("\ufeff") or f"column_{i + 1}"
            while key in taken:
                key += "_"
            taken.add(key)
            extras.append((i, key))
        self.columns = {"time": header[time_i].strip(), "text": header[text_i].strip()}
        if user_i is not None:
            self.columns["user"] = header[user_i].strip()
        self.extra_columns = [key for _, key in extras]
        return self._csv_body(delimiter, first, blank, len(header), time_i, text_i, user_i, extras)

    def _csv_body(self, delimiter, first, blank, width, time_i, text_i, user_i, extras):
        reader = csv.reader(itertools.chain([first], self._stream), delimiter=delimiter)
        next(reader)  # the header, already read
        consumed = reader.line_num
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield RowProblem(blank + consumed + 1, f"unreadable CSV: {exc}")
                consumed = reader.line_num
                continue
            line = blank + consumed + 1
            consumed = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != width:
                yield RowProblem(
                    line, f"row has {len(row)} fields but the header has {width} (text with an unquoted delimiter?)"
                )
                continue
            raw = "".join(row)
            if "\x00" in raw or _SURROGATE_RE.search(raw):
                yield self._bad_characters(line, raw)
                continue
            metadata = {key: row[i] for i, key in extras} if extras else None
            yield _build_row(line, row[time_i], row[text_i], row[user_i] if user_i is not None else "", metadata)

    def _jsonl_rows(self, first: str, first_line_no: int) -> Iterator[CommentRow | RowProblem]:
        key_plans: dict[tuple, tuple] = {}
        line_no, pending = first_line_no, first
        while True:
            raw = pending if pending is not None else self._stream.readline(MAX_LINE_CHARS + 1)
            pending = None
            if not raw:
                return
            if len(raw) > MAX_LINE_CHARS and not raw.endswith(("\n", "\r")):
                while True:  # drain the rest of the line without keeping it
                    more = self._stream.readline(MAX_LINE_CHARS)
                    if not more or more.endswith(("\n", "\r")):
                        break
                yield RowProblem(line_no, f"line longer than {MAX_LINE_CHARS} characters; skipped")
                line_no += 1
                continue
            current, line_no = line_no, line_no + 1
            text = raw.strip()
            if not text:
                continue
            if "\x00" in text or _SURROGATE_RE.search(text):
                yield self._bad_characters(current, text)
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                yield RowProblem(current, f"invalid JSON: {exc.msg} at column {exc.colno}")
                continue
            if not isinstance(obj, dict):
                yield RowProblem(current, f"not a JSON object but a {type(obj).__name__}")
                continue
            if "\\u0000" in text:
                yield RowProblem(current, "contains a NUL character (\\u0000), which the database cannot store")
                continue
            # Only a line with a surrogate escape can hold an unpaired one; paired ones (emoji
            # written by ensure_ascii) decode to one character and pass.
            if _SURROGATE_ESCAPE_RE.search(text) and _SURROGATE_RE.search(json.dumps(obj, ensure_ascii=False)):
                yield RowProblem(current, "contains an unpaired \\udXXX escape, which is not valid Unicode")
                continue
            keys = tuple(obj)
            plan = key_plans.get(keys)
            if plan is None:
                if len(key_plans) > 1000:
                    key_plans.clear()
                names = [_normalise_name(k) for k in keys]
                time_i, text_i, user_i = (_pick(names, a) for a in (TIME_ALIASES, TEXT_ALIASES, USER_ALIASES))
                plan = key_plans[keys] = (
                    None if time_i is None else keys[time_i],
                    None if text_i is None else keys[text_i],
                    None if user_i is None else keys[user_i],
                    [k for i, k in enumerate(keys) if i not in (time_i, text_i, user_i)],
                )
            time_key, text_key, user_key, extra_keys = plan
            if time_key is None:
                yield RowProblem(current, f"no time field (one of: {_aliases(TIME_ALIASES)})")
                continue
            if text_key is None:
                yield RowProblem(current, f"no text field (one of: {_aliases(TEXT_ALIASES)})")
                continue
            metadata = {k: obj[k] for k in extra_keys} if extra_keys else None
            yield _build_row(current, obj[time_key], obj[text_key], obj[user_key] if user_key else "", metadata)

    def _bad_characters(self, line: int, raw: str) -> RowProblem:
        if "\x00" in raw:
            return RowProblem(line, "contains a NUL character, which the database cannot store")
        return RowProblem(line, f"holds bytes that are not valid {self.encoding} (does the file mix encodings?)")

    # -- iterator protocol

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> CommentRow | RowProblem:
        try:
            return next(self._rows)
        except StopIteration:
            self.close()
            raise

    def close(self) -> None:
        rows = getattr(self, "_rows", None)
        if rows is not None:
            rows.close()
        if self._owns_stream:
            self._stream.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _as_text(value, field: str) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{field} is {json.dumps(value)[:40]}, not text")


def _build_row(line: int, time_value, text_value, user_value, metadata: dict | None) -> CommentRow | RowProblem:
    try:
        time_s = parse_comment_time(time_value)
        text = _as_text(text_value, "text")
        user = "" if user_value is None else _as_text(user_value, "user")
    except ValueError as exc:
        return RowProblem(line, str(exc))
    if not text:
        return RowProblem(line, "empty text")
    if len(user) > USER_MAX_LENGTH:
        return RowProblem(line, f"user name longer than {USER_MAX_LENGTH} characters")
    return CommentRow(line, time_s, text, user, metadata)


def iter_comments(fileobj_or_path, filename: str | None = None) -> CommentReader:
    """Stream the rows of a CSV or JSONL comments file (binary file object or path).

    CSV: a header row naming a time and a text column (aliases above), optionally a user column;
    every other column goes into `metadata` as text. The delimiter may be a comma, tab, semicolon or
    pipe. JSONL: one object per line with the same names as keys; other keys go into `metadata` with
    their JSON values. Raises CommentFormatError at once when the file cannot be comments.
    """
    return CommentReader(fileobj_or_path, filename)


# ---------------------------------------------------------------------------------------------
# PostgreSQL COPY


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
# One encoder for all rows: json.dumps with options builds a new encoder per call, which is most of
# the cost at millions of rows.
_METADATA_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _copy_escape(value: str) -> str:
    # Most comments need no escaping; four C-level scans are cheaper than translating every one.
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.translate(_COPY_ESCAPES)
    return value


def copy_sql(table: str = "videos_comment") -> str:
    """The COPY statement matching `write_copy_rows` ("user" is a reserved word, hence the quotes)."""
    columns = ", ".join(f'"{column}"' for column in COPY_COLUMNS)
    return f'COPY "{table}" ({columns}) FROM STDIN'


def write_copy_rows(rows: Iterable[CommentRow], out: TextIO, *, video_id: int) -> int:
    """Write rows as COPY text format (columns COPY_COLUMNS) to `out`; returns how many."""
    video = str(int(video_id))
    count = 0
    for row in rows:
        if not isinstance(row, CommentRow):
            raise TypeError(f"write_copy_rows takes CommentRow, not {type(row).__name__}")
        if row.metadata is None:
            metadata = "\\N"
        else:
            metadata = _METADATA_JSON.encode(row.metadata)
            if "\\u0000" in metadata:
                raise ValueError(f"line {row.line}: PostgreSQL cannot store a NUL character")
            metadata = _copy_escape(metadata)
        if "\x00" in row.text or "\x00" in row.user:
            raise ValueError(f"line {row.line}: PostgreSQL cannot store a NUL character")
        out.write(f"{video}\t{float(row.time_s)!r}\t{_copy_escape(row.text)}\t{_copy_escape(row.user)}\t{metadata}\n")
        count += 1
    return count
