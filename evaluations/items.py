"""The questions of a release file, read from the release's own files, as evaluation items.

Which files hold questions (`question_files`): LongVideoBench arrays, MVPBench, LiViBench and
generic JSONL (its MCQ lines). Each record becomes an `EvalItem` with its answer, its videos (by
the file name the release uses), its category, level and duration group, the moments a
LongVideoBench record points at, and where its subtitles, speech and comments are. The item it came
from is the manifest's `items` entry for the record (generic lines carry their item's id).

A test-style release has no answers: it cannot be scored, and `load_items` refuses it.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.core.files.storage import default_storage
from django.utils.translation import gettext as _

from projects.refusals import Refused
from releases.validation import VIDEO_PLACEHOLDER

from .models import Protocol

QUESTION_DIRS = {
    "longvideobench/": "longvideobench",
    "mvpbench/": "mvpbench",
    "livibench/": "livibench",
    "generic/": "generic",
}
DEFAULT_PROTOCOL = {
    "svbench": Protocol.SV_STREAMING,
    "longvideobench": Protocol.FRAMES_SUBTITLES,
    "mvpbench": Protocol.MULTI_VIDEO,
    "livibench": Protocol.LIVE,
    "generic": Protocol.FRAMES,
}


class ItemsRefused(Refused):
    status, code = 400, "evaluation_items_invalid"


@dataclass(frozen=True)
class EvalItem:
    """One question: multiple choice (options and the correct index) or open (a reference answer)."""

    index: int
    record_id: str
    mcq_id: int | None
    question: str
    options: tuple[str, ...]
    correct_index: int | None
    videos: tuple[str, ...]  # file names under the release's videos/ (or the project's videos' names)
    category: str = ""
    level: str = ""
    duration_group: str = ""
    subtitles_file: str = ""  # LongVideoBench: subtitles/<video>.json
    asr_file: str = ""  # LiViBench
    comments_file: str = ""
    extras: dict = field(default_factory=dict)
    # An open question (SVBench): its reference answer, its chain and turn, the chain's end time.
    reference: str = ""
    chain: str = ""
    turn: int = 0
    end_s: float | None = None

    @property
    def is_open(self) -> bool:
        return not self.options

    @property
    def cluster(self) -> str:
        return self.videos[0] if self.videos else self.record_id


SVBENCH_DIALOGUE = "svbench/Dialogue"


def question_files(release) -> list[str]:
    """The release's files of questions, LongVideoBench first (the format's own loader reads those);
    SVBench's questions are a folder of Dialogue files (one per video; `_EN`/`_ZH` sub-folders)."""
    found = []
    dialogue = sorted(
        {
            posixpath.dirname(f["path"])
            for f in release.files or []
            if f["path"].startswith(SVBENCH_DIALOGUE + "/") and f["path"].endswith(".json")
        }
    )
    for f in release.files or []:
        path = f["path"]
        for prefix, fmt in QUESTION_DIRS.items():
            if not path.startswith(prefix) or path.count("/") != 1:
                continue
            if (
                fmt == "longvideobench"
                and path.endswith(".json")
                or fmt != "longvideobench"
                and path.endswith(".jsonl")
                and not path.endswith("videos.jsonl")
            ):
                found.append(path)
    order = list(QUESTION_DIRS.values())
    return sorted(found, key=lambda p: (order.index(QUESTION_DIRS[p.split("/")[0] + "/"]), p)) + dialogue


def file_format(file: str) -> str:
    if file.startswith(SVBENCH_DIALOGUE):
        return "svbench"
    return QUESTION_DIRS[file.split("/")[0] + "/"]


def read_release_file(release, path: str) -> bytes:
    with default_storage.open(release.storage_prefix + path, "rb") as fh:
        return fh.read()


def _records(release, file: str) -> list:
    data = read_release_file(release, file).decode("utf-8")
    if file.endswith(".json"):
        return json.loads(data)
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def load_items(release, file: str) -> list[EvalItem]:
    """Every scorable question of `file`. Raises ItemsRefused for a file with no answers."""
    if file not in question_files(release):
        raise ItemsRefused(
            _("%(file)s is not a file of questions in release %(version)s.")
            % {"file": file, "version": release.version}
        )
    fmt = file_format(file)
    if fmt == "svbench":
        return _svbench_items(release, file)
    records = _records(release, file)
    linked = (release.manifest or {}).get("items", {}).get(file, [])
    items: list[EvalItem] = []
    for index, record in enumerate(records):
        if fmt == "generic" and record.get("kind") != "mcq":
            continue
        mcq_id = record.get("id") if fmt == "generic" else (linked[index] if index < len(linked) else None)
        item = _item(fmt, index, record, mcq_id)
        if item is not None:
            items.append(item)
    if records and not items:
        raise ItemsRefused(
            _("%(file)s holds no question with an answer (a test-style release cannot be scored).") % {"file": file}
        )
    return items


def _svbench_items(release, folder: str) -> list[EvalItem]:
    """Every question of every chain of every video's Dialogue file, in video name and chain order."""
    files = sorted(
        f["path"] for f in release.files or [] if posixpath.dirname(f["path"]) == folder and f["path"].endswith(".json")
    )
    items: list[EvalItem] = []
    for path in files:
        video = PurePosixPath(path).stem
        for c, element in enumerate(_records(release, path)):
            chain = element.get("chain") or {}
            answers = chain.get("answers")
            if answers is None:
                raise ItemsRefused(
                    _("%(file)s holds no answers (a test-style release cannot be scored).") % {"file": path}
                )
            for t, (question, answer) in enumerate(zip(chain.get("questions", []), answers, strict=False)):
                items.append(
                    EvalItem(
                        index=len(items),
                        record_id=f"{video}#{c}.{t}",
                        mcq_id=None,
                        question=question,
                        options=(),
                        correct_index=None,
                        videos=(video,),
                        reference=answer,
                        chain=f"{video}#{c}",
                        turn=t,
                        end_s=float(element.get("qac_timestamps_end") or 0.0) or None,
                    )
                )
    if not items:
        raise ItemsRefused(_("%(file)s holds no question.") % {"file": folder})
    return items


def _item(fmt: str, index: int, r: dict, mcq_id) -> EvalItem | None:
    if fmt == "longvideobench":
        if r.get("correct_choice") is None:
            return None
        return EvalItem(
            index=index,
            record_id=str(r["id"]),
            mcq_id=mcq_id,
            question=r["question"],
            options=tuple(str(o) for o in r["candidates"]),
            correct_index=int(r["correct_choice"]),
            videos=(r["video_path"],),
            category=r.get("question_category", ""),
            level=r.get("level", ""),
            duration_group=str(r.get("duration_group", "")),
            subtitles_file=f"subtitles/{r['subtitle_path']}" if r.get("subtitle_path") else "",
        )
    if fmt == "mvpbench":
        options = tuple(str(o) for o in r["options"])
        if "answer" not in r or r["answer"] not in options:
            return None
        videos = (r["id"], *r.get("video_options", []))
        return EvalItem(
            index=index,
            record_id=f"{r['id']}#{index}",
            mcq_id=mcq_id,
            question=r["query"],
            options=options,
            correct_index=options.index(r["answer"]),
            videos=tuple(videos),
        )
    if fmt == "livibench":
        if r.get("answer") is None:
            return None
        return EvalItem(
            index=index,
            record_id=str(r["id"]),
            mcq_id=mcq_id,
            question=r["question"],
            options=tuple(str(o) for o in r["options"]),
            correct_index=int(r["answer"]),
            videos=(r["video"],),
            category=r.get("task", ""),
            level=r.get("group", ""),
            asr_file=r.get("asr_file", ""),
            comments_file=r.get("comments_file", ""),
        )
    # generic MCQ line
    if r.get("correct_index") is None:
        return None
    videos = tuple(v["file"] for v in sorted(r.get("videos") or [], key=lambda v: v.get("order", 0))) or (r["video"],)
    return EvalItem(
        index=index,
        record_id=str(r["id"]),
        mcq_id=r["id"],
        question=r["question"],
        options=tuple(str(o) for o in r["options"]),
        correct_index=int(r["correct_index"]),
        videos=videos,
        category=r.get("category", ""),
        level=r.get("level", ""),
    )


def question_text(item: EvalItem, *, video_labels: list[str] | None = None) -> str:
    """The question as a prompt shows it (MVPBench placeholders named "Video 1" …)."""
    text = item.question
    if video_labels and VIDEO_PLACEHOLDER in text:
        for label in video_labels:
            text = text.replace(VIDEO_PLACEHOLDER, label, 1)
        text = text.replace(VIDEO_PLACEHOLDER, "")
        text = "\n".join(line for line in text.splitlines() if line.strip()) or text
    return text


def media_path(file_name: str) -> str:
    return posixpath.join("videos", file_name)
