"""MVPBench: `mvpbench/<split>.jsonl`, one question per line, with the video files under `videos/`.

Line: `id` (the reference video's file name), `query` (the question with one `<video>` placeholder per
input video, reference first), `video_options` (the candidate videos' file names in input order),
`options` (the option labels, e.g. "1", "2", "3") and `answer` (one of `options`; omitted in a
test-style release). An MCQ over several videos is an MVPBench question: its first video (order 0)
is the reference, the others are the candidates. When the question text carries no placeholder, the
placeholders are put before it, one per line; a question with some but not all placeholders fails
validation rather than being guessed at. The split is the reference video's.
"""

from __future__ import annotations

from ..validation import VIDEO_PLACEHOLDER, mvpbench_record_rules, schema_errors
from .common import VideoBundle, Writer


class MVPBenchWriter(Writer):
    format = "mvpbench"

    def begin(self) -> None:
        self.streams: dict = {}
        self.records = 0

    def video(self, bundle: VideoBundle) -> None:
        mcqs = [m for m in bundle.mcqs if m.family == self.format]
        if not mcqs:
            return
        ctx = self.ctx
        split = ctx.split_of(bundle.video)
        file = f"mvpbench/{split}.jsonl"
        if split not in self.streams:
            self.streams[split] = ctx.files.open_stream(file)
        out = self.streams[split]
        for m in mcqs:
            inputs = [ctx.videos[link.video_id] for link in m.videos]
            for video in inputs:
                ctx.media(video)
            query = m.question
            if VIDEO_PLACEHOLDER not in query:
                query = "\n".join([VIDEO_PLACEHOLDER] * len(inputs) + [query])
            options = [str(o) for o in m.options]
            record = {
                "id": inputs[0].file_name,
                "query": query,
                "video_options": [v.file_name for v in inputs[1:]],
                "options": options,
            }
            if not ctx.test_style and m.correct_index is not None and m.correct_index < len(options):
                record["answer"] = options[m.correct_index]
            out.write_json_line(record)
            ctx.record_item(file, m.id)
            self.records += 1
            self.problems(file, f"mcq {m.id}", schema_errors("mvpbench.record", record))
            self.problems(file, f"mcq {m.id}", mvpbench_record_rules(record, test_style=ctx.test_style))

    def finish(self) -> None:
        for split in sorted(self.streams):
            self.ctx.files.close_stream(self.streams[split])
        if not self.records:
            self.problem("mvpbench/", "release", "No released MCQ fits MVPBench (MCQs over several videos).")
