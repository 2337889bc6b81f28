"""Turn the bytes of an uploaded text file (subtitles, comments) into text, whatever its encoding.

Subtitle and comment files arrive in UTF-8, UTF-8 with a BOM, UTF-16 (with or without a BOM) and,
for Chinese sources, GB18030/GBK/GB2312. We try the cheap, certain answers first and fall back to
statistical detection (charset-normalizer) only when they fail, because detection guesses wrong on
short inputs far more often than a strict decode does.

`decode_bytes` is for small files held in memory (subtitles); `open_text_stream` sniffs only the
start of a file and then decodes incrementally, for comment files of hundreds of MB.
"""

from __future__ import annotations

import codecs
import io
import os
import re
from typing import BinaryIO

import charset_normalizer

SNIFF_BYTES = 64 * 1024

# Name of the codec error handler used by `open_text_stream`: it maps every byte that does not
# decode to a lone surrogate U+DC00+byte. No strict decode of UTF-8, UTF-16 or GB18030 ever yields
# a lone surrogate, so such a character marks exactly the undecodable bytes and a reader can skip
# that one record with a clear message instead of aborting a file of millions of rows.
UNDECODABLE_ERRORS = "vidqa-undecodable"
_UNDECODABLE_RE = re.compile("[\udc00-\udcff]")


def _mark_undecodable(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return "".join(chr(0xDC00 + b) for b in bad), exc.end


codecs.register_error(UNDECODABLE_ERRORS, _mark_undecodable)


def has_undecodable(text: str) -> bool:
    """True if `text` holds bytes that `open_text_stream` could not decode in the sniffed encoding."""
    return _UNDECODABLE_RE.search(text) is not None


class TextDecodeError(ValueError):
    """The bytes are not text in any encoding we recognise; the message says what they look like."""


# Order matters: UTF-32 LE's BOM starts with UTF-16 LE's. The codec names decode the whole file,
# BOM included, and drop the BOM.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"),
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)

# Magic numbers of files people upload by mistake, so the refusal can say what the file is.
_BINARY_SIGNATURES = (
    (0, b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (0, b"\xff\xd8\xff", "a JPEG image"),
    (0, b"GIF87a", "a GIF image"),
    (0, b"GIF89a", "a GIF image"),
    (0, b"%PDF-", "a PDF document"),
    (0, b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (0, b"\x1f\x8b", "a gzip-compressed file"),
    (0, b"\x1aE\xdf\xa3", "a Matroska/WebM video"),
    (4, b"ftyp", "an MP4/MOV video"),
    (0, b"OggS", "an Ogg media file"),
    (0, b"ID3", "an MP3 audio file"),
    (0, b"fLaC", "a FLAC audio file"),
    (0, b"SQLite format 3\x00", "an SQLite database"),
    (0, b"\x7fELF", "an executable"),
)


def sniff_binary_kind(data: bytes) -> str | None:
    """Name the kind of binary file `data` starts like ("a PNG image"), or None."""
    for offset, magic, kind in _BINARY_SIGNATURES:
        if data[offset : offset + len(magic)] == magic:
            return kind
    if data[:4] == b"RIFF" and data[8:12] in (b"AVI ", b"WAVE", b"WEBP"):
        return {b"AVI ": "an AVI video", b"WAVE": "a WAV audio file", b"WEBP": "a WebP image"}[data[8:12]]
    return None


# Control characters (other than tab, newline, vertical tab, form feed, carriage return), the private
# use area and U+FFFD do not occur in real subtitles or comments; a decode full of them is a wrong guess.
_IMPLAUSIBLE_RE = re.compile("[\x00-\x08\x0e-\x1f\x7f\ue000-\uf8ff\ufffd]")
_PLAUSIBLE_MAX_SHARE = 0.01


def _plausible(text: str) -> bool:
    # A share, not "none at all": one stray NUL must not make a million-row file "binary", while
    # UTF-16 text misread as UTF-8 is about half NULs.
    sample = text[:SNIFF_BYTES]
    if not sample:
        return True
    return len(_IMPLAUSIBLE_RE.findall(sample)) <= _PLAUSIBLE_MAX_SHARE * len(sample)


def _try_decode(data: bytes, encoding: str, complete: bool) -> str | None:
    """Strictly decode; on a partial sample, tolerate a character cut off at the end."""
    try:
        text = codecs.getincrementaldecoder(encoding)("strict").decode(data, final=complete)
    except (UnicodeDecodeError, LookupError):
        return None
    return text if _plausible(text) else None


def _utf16_guess(data: bytes) -> str | None:
    """UTF-16 without a BOM: text with any ASCII in it (digits, colons, newlines) has a zero high byte
    in one half of its code units and almost never in the other half."""
    sample = data[: SNIFF_BYTES & ~1]
    units = len(sample) // 2
    if units < 2:
        return None
    even_zero = sample[0::2].count(0) / units
    odd_zero = sample[1::2].count(0) / units
    # Some CJK characters have a zero low byte (U+4E00 "一"), hence a ratio rather than zero.
    if odd_zero >= 0.2 and even_zero <= odd_zero / 4:
        return "utf-16-le"
    if even_zero >= 0.2 and odd_zero <= even_zero / 4:
        return "utf-16-be"
    return None


def _mostly_gb2312(text: str) -> bool:
    """Chinese text is mostly GB2312 characters; Latin-1 text that happens to decode as GB18030
    ("ß" + "e" is a valid pair) lands in the rarer GBK extension instead."""
    non_ascii = "".join(c for c in text[:SNIFF_BYTES] if c > "\x7f" and c != "?")
    if not non_ascii:
        return True
    unencodable = non_ascii.encode("gb2312", "replace").count(b"?")
    return unencodable <= len(non_ascii) / 2


def _charset_normalizer_guess(sample: bytes, complete: bool) -> str | None:
    best = charset_normalizer.from_bytes(sample).best()
    if best is None:
        return None
    encoding = codecs.lookup(best.encoding).name
    return encoding if _try_decode(sample, encoding, complete) is not None else None


def _detect(sample: bytes, *, complete: bool) -> str:
    """The codec name that decodes `sample` (the whole file when `complete`) from its first byte."""
    if not sample:
        return "utf-8"
    for bom, encoding, label in _BOMS:
        if sample.startswith(bom):
            if _try_decode(sample, encoding, complete) is None:
                raise TextDecodeError(f"the file starts with a {label} byte order mark but is not valid {label} text")
            return encoding
    if _try_decode(sample, "utf-8", complete) is not None:
        return "utf-8"
    utf16 = _utf16_guess(sample)
    if utf16 and _try_decode(sample, utf16, complete) is not None:
        return utf16
    # GB18030 is a superset of GBK and GB2312, so one attempt covers all three.
    gb_text = _try_decode(sample, "gb18030", complete)
    if gb_text is not None and _mostly_gb2312(gb_text):
        return "gb18030"
    detected = _charset_normalizer_guess(sample, complete)
    if detected:
        return detected
    if gb_text is not None:
        return "gb18030"
    kind = sniff_binary_kind(sample)
    if kind:
        raise TextDecodeError(f"this is {kind}, not a text file")
    raise TextDecodeError(
        "not a text file: the bytes are not UTF-8, UTF-16, GB18030 or any encoding charset detection "
        "recognises (binary data?)"
    )


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode a whole small file; returns (text, codec name). A BOM is consumed, not returned.

    Raises TextDecodeError when the bytes are not plausibly text.
    """
    encoding = _detect(data, complete=True)
    return data.decode(encoding), encoding


class _ReplayReader(io.RawIOBase):
    """Serves the sniffed prefix again, then the rest of the source, so non-seekable uploads work."""

    def __init__(self, prefix: bytes, source: BinaryIO, *, owns_source: bool):
        self._prefix = memoryview(prefix)
        self._source = source
        self._owns_source = owns_source

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        chunk = self._source.read(len(buffer))
        if not chunk:
            return 0
        n = len(chunk)
        buffer[:n] = chunk
        return n

    def close(self) -> None:
        if not self.closed and self._owns_source:
            self._source.close()
        super().close()


def open_text_stream(fileobj_or_path, *, sniff_bytes: int = SNIFF_BYTES) -> tuple[io.TextIOBase, str]:
    """Open a (possibly huge) text file for streaming; returns (text stream, codec name).

    Only the first `sniff_bytes` are read to choose the encoding; the rest is decoded as it is read.
    Bytes later in the file that do not decode in that encoding become lone surrogates (see
    `has_undecodable`) instead of aborting the read. Line endings are left untranslated
    (`newline=""`), as the csv module requires. Closing the stream closes a file opened from a path,
    never a file object the caller passed in.
    """
    if isinstance(fileobj_or_path, io.TextIOBase):
        return fileobj_or_path, getattr(fileobj_or_path, "encoding", None) or "str"
    if isinstance(fileobj_or_path, (str, os.PathLike)):
        # Not a `with` block: the returned stream owns the file and closes it.
        source, owns = open(fileobj_or_path, "rb"), True  # noqa: SIM115
    else:
        source, owns = fileobj_or_path, False
    try:
        # One byte more than we sniff tells whether the sample is the whole file.
        chunks, size = [], 0
        while size <= sniff_bytes:
            chunk = source.read(sniff_bytes + 1 - size)
            if not chunk:
                break
            if isinstance(chunk, str):
                raise TypeError("open_text_stream needs a binary file object (opened with 'rb')")
            chunks.append(chunk)
            size += len(chunk)
        prefix = b"".join(chunks)
        encoding = _detect(prefix[:sniff_bytes], complete=size <= sniff_bytes)
    except BaseException:
        if owns:
            source.close()
        raise
    raw = _ReplayReader(prefix, source, owns_source=owns)
    stream = io.TextIOWrapper(io.BufferedReader(raw), encoding=encoding, errors=UNDECODABLE_ERRORS, newline="")
    return stream, encoding
