"""What a video's name may be: it becomes a file and folder name in every release, and appears in pages.

One rule for every way a video comes in (upload, folder, manifest, API): letters and digits of any
script, spaces and `. _ - ( ) + ,`; not starting with `.`, `-` or a space, no `..`, at most 200
characters. A name given explicitly is refused with a reason; a name taken from a file name is
made to fit, since the person did not choose it as a name.
"""

import re
import unicodedata
from pathlib import Path

MAX_LENGTH = 200
_ALLOWED = re.compile(r"[\w .()+,-]+")
_DISALLOWED_CHAR = re.compile(r"[^\w .()+,-]")


class InvalidVideoName(ValueError):
    """The message names the bad name and says what is allowed."""


def video_name_check(name: str) -> str:
    """`name` if it is a valid video name; raises InvalidVideoName otherwise."""
    shown = repr(name) if len(name) <= 80 else repr(name[:80] + "…")
    problem = None
    if not name:
        problem = "it is empty"
    elif len(name) > MAX_LENGTH:
        problem = f"it is longer than {MAX_LENGTH} characters"
    elif not _ALLOWED.fullmatch(name):
        bad = sorted(set(_DISALLOWED_CHAR.findall(name)))
        problem = "it contains " + " ".join(repr(c) for c in bad[:10])
    elif ".." in name:
        problem = "it contains '..'"
    elif name[0] in ".- ":
        problem = f"it starts with {name[0]!r}"
    elif name[-1] in ". ":
        problem = f"it ends with {name[-1]!r}"
    if problem:
        raise InvalidVideoName(
            f"The video name {shown} is not allowed: {problem}. Use letters, digits, spaces and . _ - ( ) + , "
            "(not at the start), without '..'."
        )
    return name


def video_name_from_filename(filename: str) -> str:
    """A valid name from a file's name (its stem), disallowed characters replaced by `_`."""
    stem = unicodedata.normalize("NFKC", Path(filename).stem)
    stem = _DISALLOWED_CHAR.sub("_", stem)
    stem = re.sub(r"\.{2,}", ".", stem)
    stem = stem.lstrip(".- ").rstrip(". ")
    return stem[:MAX_LENGTH].rstrip(". ") or "video"
