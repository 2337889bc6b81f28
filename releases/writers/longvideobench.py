"""LongVideoBench: `longvideobench/lvb_<split>.json` arrays, `subtitles/<video>.json`, files under `videos/`.

Read with LongVideoBench's own loader as `LongVideoBenchDataset(<release folder>,
"longvideobench/lvb_test.json")`: it joins `videos/<video_path>` and `subtitles/<subtitle_path>` to
the release folder, so those two folders sit at the top of the release.

Record (keys in this order): video_id (the video's name), question (with the referring query),
question_wo_referring_query, candidates, correct_choice (0-based; omitted in a test-style release),
position (frame indexes of the referred moments on this video, in order), topic_category,
question_category, level, id (`<video_id>_<n>`, n counting the video's records from 0 in MCQ id
order), video_path (`<name><ext>`), subtitle_path (`<name>.json`), duration_group (15/60/600/3600),
starting_timestamp_for_subtitles (0.0: our cue times already count from the start of the file),
duration (float: the probed duration capped by frames ÷ fps and rounded down to the millisecond, so
it is never longer than what decodes), view_count (0 when unknown).

Subtitles: every record's file exists, `[]` when the video has none. Cues are
`{"timestamp": [start, end], "text": ...}` with float seconds (the loader takes a non-float end for
the end of the video). Which cues: imported subtitles (SRT, WebVTT, LongVideoBench JSON, manual)
when the video has any, else speech recognition; of those, the video's language (or the
project's) when present, else all.
"""

from __future__ import annotations

from ..validation import longvideobench_record_rules, longvideobench_subtitle_rules, schema_errors
from .common import CueData, JsonArrayWriter, VideoBundle, Writer, dumps_bytes
from .media import probe_video_duration

SUBTITLE_SOURCES = ("srt", "vtt", "lvb_json", "manual")


def subtitle_cues(cues: list[CueData], language: str) -> list[CueData]:
    """The cues a subtitle file shows (see the module doc)."""
    chosen = [c for c in cues if c.source in SUBTITLE_SOURCES] or [c for c in cues if c.source == "asr"]
    if language:
        own = [c for c in chosen if (c.language or "").lower().split("-")[0] == language]
        if own:
            return own
    return chosen


class LongVideoBenchWriter(Writer):
    format = "longvideobench"
    needs_cues = True

    def begin(self) -> None:
        self.arrays: dict[str, tuple] = {}
        self.records = 0

    def _array(self, split: str) -> JsonArrayWriter:
        if split not in self.arrays:
            stream = self.ctx.files.open_stream(f"longvideobench/lvb_{split}.json")
            self.arrays[split] = (stream, JsonArrayWriter(stream))
        return self.arrays[split][1]

    def video(self, bundle: VideoBundle) -> None:
        mcqs = [m for m in bundle.mcqs if m.family == self.format]
        if not mcqs:
            return
        ctx, v = self.ctx, bundle.video
        language = (v.language or ctx.primary_language).lower().split("-")[0]
        cues = subtitle_cues(bundle.cues or [], language)
        subtitles = [{"timestamp": [c.start_s, c.end_s], "text": c.text} for c in cues]
        subtitle_path = f"{v.name}.json"
        subtitle_file = f"subtitles/{subtitle_path}"
        ctx.files.write_bytes(subtitle_file, dumps_bytes(subtitles))
        item = f"video {v.name}"
        self.problems(subtitle_file, item, schema_errors("longvideobench.subtitles", subtitles))
        self.problems(subtitle_file, item, longvideobench_subtitle_rules(subtitles))

        ctx.media(v)
        limit = v.playable_duration_s
        if ctx.include_media and limit is not None:
            ctx.files.wait()  # the copy may still be on its way to disk
            probed = probe_video_duration(ctx.files.storage, ctx.files.name(f"videos/{v.file_name}"))
            if probed is None:
                self.problem(f"videos/{v.file_name}", item, "ffprobe could not read the copied video's duration")
            else:
                limit = min(limit, probed)
        split = ctx.split_of(v)
        array = self._array(split)
        file = f"longvideobench/lvb_{split}.json"
        group = v.duration_group
        for n, m in enumerate(mcqs):
            record = {
                "video_id": v.name,
                "question": m.question,
                "question_wo_referring_query": m.question_wo_referring_query,
                "candidates": list(m.options),
            }
            if not ctx.test_style and m.correct_index is not None:
                record["correct_choice"] = m.correct_index
            record.update(
                {
                    "position": [mo.frame_index for mo in m.moments if mo.video_id == v.id],
                    "topic_category": v.topic_category,
                    "question_category": m.category,
                    "level": m.level or ctx.lvb_levels.get(m.category, ""),
                    "id": f"{v.name}_{n}",
                    "video_path": v.file_name,
                    "subtitle_path": subtitle_path,
                    "duration_group": int(group) if group.isdigit() else group,
                    "starting_timestamp_for_subtitles": 0.0,
                    "duration": v.playable_duration_s,
                    "view_count": v.view_count or 0,
                }
            )
            array.add(record)
            ctx.record_item(file, m.id)
            self.records += 1
            mcq_item = f"mcq {m.id}"
            self.problems(file, mcq_item, schema_errors("longvideobench.record", record))
            self.problems(
                file,
                mcq_item,
                longvideobench_record_rules(
                    record,
                    test_style=ctx.test_style,
                    duration_limit_s=limit,
                    subtitle_exists=ctx.files.exists(subtitle_file),
                    levels=ctx.lvb_levels,
                ),
            )

    def finish(self) -> None:
        for split in sorted(self.arrays):
            stream, array = self.arrays[split]
            array.close()
            self.ctx.files.close_stream(stream)
        if not self.records:
            self.problem(
                "longvideobench/",
                "release",
                "No released MCQ fits LongVideoBench (single-video MCQs with a LongVideoBench category).",
            )
