"""LiViBench as our own documented JSONL, version 1 (`vidqa-livibench/1`; docs/release_formats.md).

    livibench/<split>.jsonl           one question per line (schema livibench.record)
    livibench/comments/<video>.jsonl  the video's real-time comments in time order
    livibench/asr/<video>.jsonl       the video's speech transcript in time order
    videos/<file>                     with include_media

Question line: format, id (`<video>_<n>`, n counting the video's questions from 0 in MCQ id order),
video (file name under videos/), task, group, question, question_translation (only when there is
one), options, answer (0-based option index; omitted in a test-style release), comments_file,
asr_file (both always written, possibly empty, so a reader never meets a missing file), audio
(whether the video has an audio track) and duration (float seconds).

The transcript is the video's speech-recognition cues when it has any, else its imported subtitles.
Comments are streamed from the database (a livestream can have hundreds of thousands), one query per
chunk of videos read in the order the videos are written; every line is checked for its types, and
the first line of each file against the schema.
"""

from __future__ import annotations

import itertools

from django.db import connection
from django.db.models.functions import Collate

from videos.models import Comment

from ..validation import livibench_record_rules, schema_errors
from .common import VideoBundle, Writer, json_float, json_string

FORMAT_TAG = "vidqa-livibench/1"
COMMENT_CHUNK = 5000


class LiViBenchWriter(Writer):
    format = "livibench"
    needs_cues = True

    def begin(self) -> None:
        self.streams: dict = {}
        self.records = 0
        self._comments = None  # this chunk's (video_id, time_s, text, user) rows, read as videos come
        self._ahead = None  # the row read but not yet written (the next video's first)
        self._places: dict[int, int] = {}  # video id → its place among the chunk's videos with comments

    def chunk(self, bundles: list[VideoBundle]) -> None:
        self._close_comments()
        ids = [b.video.id for b in bundles if any(m.family == self.format for m in b.mcqs)]
        self._places = {video_id: n for n, video_id in enumerate(ids)}
        if ids:
            # Videos come in name order (Python's, i.e. by code point), so one cursor over the chunk's
            # comments, sorted by name in the collation that compares code points, hands each video
            # its own in turn. PostgreSQL calls that collation "C", SQLite "BINARY" (UTF-8 bytes).
            code_points = "C" if connection.vendor == "postgresql" else "BINARY"
            self._comments = (
                Comment.objects.filter(video_id__in=ids)
                .order_by(Collate("video__name", code_points), "time_s", "id")
                .values_list("video_id", "time_s", "text", "user")
                .iterator(chunk_size=COMMENT_CHUNK)
            )

    def _close_comments(self) -> None:
        if self._comments is not None:
            self._comments.close()  # frees the server-side cursor even when not read to the end
        self._comments, self._ahead = None, None

    def _video_comments(self, video_id: int):
        if self._comments is None or video_id not in self._places:
            # `video` called without `chunk` (a writer driven by hand): this video's comments alone.
            yield from (
                Comment.objects.filter(video_id=video_id)
                .order_by("time_s", "id")
                .values_list("time_s", "text", "user")
                .iterator(chunk_size=COMMENT_CHUNK)
            )
            return
        place = self._places.get(video_id, -1)
        row = self._ahead or next(self._comments, None)
        while row is not None and self._places[row[0]] < place:
            # A video of the chunk that was not asked for (no build does that): its comments are passed by.
            row = next(self._comments, None)
        while row is not None and row[0] == video_id:
            yield row[1:]
            row = next(self._comments, None)
        self._ahead = row

    def video(self, bundle: VideoBundle) -> None:
        mcqs = [m for m in bundle.mcqs if m.family == self.format]
        if not mcqs:
            return
        ctx, v = self.ctx, bundle.video
        item = f"video {v.name}"
        comments_file = f"livibench/comments/{v.name}.jsonl"
        with ctx.files.stream(comments_file) as out:
            rows = self._video_comments(v.id)
            first = next(rows, None)
            if first is not None:
                line = {"time": float(first[0]), "text": first[1], "user": first[2]}
                self.problems(comments_file, item, schema_errors("livibench.comment", line))
                rows = itertools.chain((first,), rows)
            # The text `dumps` gives for {"time", "text", "user"}, put together directly and handed on
            # in blocks: a livestream has hundreds of thousands of comments.
            lines = []
            for time_s, text, user in rows:
                lines.append(
                    f'{{"time":{json_float(float(time_s))},"text":{json_string(text)},"user":{json_string(user)}}}\n'
                )
                if len(lines) >= COMMENT_CHUNK:
                    out.write("".join(lines))
                    lines = []
            if lines:
                out.write("".join(lines))
        asr_file = f"livibench/asr/{v.name}.jsonl"
        cues = bundle.cues or []
        transcript = [c for c in cues if c.source == "asr"] or cues
        with ctx.files.stream(asr_file) as out:
            for n, c in enumerate(transcript):
                line = {"start": c.start_s, "end": c.end_s, "text": c.text, "source": c.source}
                if n == 0:
                    self.problems(asr_file, item, schema_errors("livibench.asr", line))
                out.write_json_line(line)

        ctx.media(v)
        split = ctx.split_of(v)
        file = f"livibench/{split}.jsonl"
        if split not in self.streams:
            self.streams[split] = ctx.files.open_stream(file)
        out = self.streams[split]
        for n, m in enumerate(mcqs):
            record = {
                "format": FORMAT_TAG,
                "id": f"{v.name}_{n}",
                "video": v.file_name,
                "task": m.category,
                "group": m.task_group or ctx.tasks.get(m.category, ""),
                "question": m.question,
            }
            if m.question_translation:
                record["question_translation"] = m.question_translation
            record["options"] = list(m.options)
            if not ctx.test_style and m.correct_index is not None:
                record["answer"] = m.correct_index
            record.update(
                {
                    "comments_file": comments_file,
                    "asr_file": asr_file,
                    "audio": bool(v.has_audio),
                    "duration": v.playable_duration_s,
                }
            )
            out.write_json_line(record)
            ctx.record_item(file, m.id)
            self.records += 1
            self.problems(file, f"mcq {m.id}", schema_errors("livibench.record", record))
            self.problems(
                file,
                f"mcq {m.id}",
                livibench_record_rules(record, test_style=ctx.test_style, tasks=ctx.tasks or None),
            )

    def finish(self) -> None:
        self._close_comments()
        for split in sorted(self.streams):
            self.ctx.files.close_stream(self.streams[split])
        if not self.records:
            self.problem(
                "livibench/", "release", "No released MCQ fits LiViBench (single-video MCQs of a LiViBench task)."
            )
