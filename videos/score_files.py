"""Read CSV files of externally computed video scores (aesthetic, optical flow, quality, ...).

Two shapes, told apart by the header; the first column names the video (its `name` in the project):

  wide:  video,aesthetic,flow           one column per score; an empty cell means "no score"
         clip_001,5.2,0.31
  long:  video,name,value               one score per row (`score,value` works too)
         clip_001,aesthetic,5.2

The browser page and the API read files the same way through `score_rows`. A bad value stops the
whole file with its line number, so a half-read file never updates some videos and not others.
"""

import csv
import io
import math
from collections.abc import Iterator

from .text_encoding import TextDecodeError, decode_bytes

VIDEO_COLUMNS = ("video", "video_name", "name", "video_id")


def score_rows(data: bytes) -> Iterator[tuple[str, str, float]]:
    """Yield (video name, score name, value) per score; raises ValueError with the reason (and line)."""
    try:
        text, _ = decode_bytes(data)
    except TextDecodeError as exc:
        raise ValueError(f"not a text file ({exc})") from exc
    reader = csv.reader(io.StringIO(text))
    header = [h.strip().lower() for h in next(reader, [])]
    if not header or header[0] not in VIDEO_COLUMNS:
        raise ValueError("the first column must be named video (the video's name)")
    long_form = header[1:3] in (["name", "value"], ["score", "value"])
    for line, row in enumerate(reader, start=2):
        if not row or not row[0].strip():
            continue
        try:
            if long_form:
                if len(row) < 3 or not row[1].strip():
                    raise ValueError("expected three columns: video, score name, value")
                yield row[0].strip(), row[1].strip(), _finite(row[2])
            else:
                for name, value in zip(header[1:], row[1:], strict=False):
                    if value.strip():
                        yield row[0].strip(), name, _finite(value)
        except ValueError as exc:
            raise ValueError(f"line {line}: {exc}") from exc


def _finite(raw: str) -> float:
    value = float(raw)
    # float() accepts "nan" and "inf"; neither can pass or fail a threshold honestly.
    if not math.isfinite(value):
        raise ValueError(f"{raw.strip()!r} is not a finite number")
    return value
