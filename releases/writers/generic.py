"""Generic JSONL with provenance, for other tools: `generic/<split>.jsonl` and `generic/videos.jsonl`.

Every released item is one line, `kind` being qa_chain, chain_pair or mcq, in video name order and,
per video, chains (clip order), chain pairs (position order), then MCQs (id order). Each line carries
the item's fields, its split and video, its status and edit version, and its provenance: origin
(machine or human), whether a person edited it, the author, when it was accepted, and the model call
that drafted it (model, prompt template and version, pipeline step). A test-style release leaves out
answers (QA answers and their translations, MCQ correct_index). `generic/videos.jsonl` has one line
per released video with its probe facts and metadata.
"""

from __future__ import annotations

from ..validation import schema_errors
from .common import VideoBundle, Writer


class GenericWriter(Writer):
    format = "generic"

    def begin(self) -> None:
        self.streams: dict = {}
        self.videos_out = self.ctx.files.open_stream("generic/videos.jsonl")
        self.records = 0

    def _out(self, split: str):
        if split not in self.streams:
            self.streams[split] = self.ctx.files.open_stream(f"generic/{split}.jsonl")
        return self.streams[split]

    def video(self, bundle: VideoBundle) -> None:
        ctx, v = self.ctx, bundle.video
        if not (bundle.chains or bundle.chain_pairs or bundle.mcqs):
            return
        split = ctx.split_of(v)
        file = f"generic/{split}.jsonl"
        out = self._out(split)
        self.videos_out.write_json_line(
            {
                "video": v.name,
                "file": v.file_name,
                "split": split,
                "duration_s": v.duration_s,
                "fps": v.fps,
                "frame_count": v.frame_count,
                "width": v.width,
                "height": v.height,
                "has_audio": v.has_audio,
                "topic_category": v.topic_category,
                "duration_group": v.duration_group,
                "view_count": v.view_count,
                "language": v.language,
                "source_url": v.source_url,
            }
        )
        test = ctx.test_style
        lines = []
        for c in bundle.chains:
            pairs = []
            for p in c.pairs:
                pair = {"index": p.index, "question": p.question}
                if not test:
                    pair["answer"] = p.answer
                pair["skill"] = p.skill
                pair["question_translation"] = p.question_translation
                if not test:
                    pair["answer_translation"] = p.answer_translation
                pairs.append(pair)
            lines.append(
                (
                    f"chain {c.id}",
                    {
                        "kind": "qa_chain",
                        "id": c.id,
                        "split": split,
                        "video": v.name,
                        **c.meta,
                        "clip": {"index": c.clip_index, "start_s": c.start_s, "end_s": c.end_s},
                        "pairs": pairs,
                    },
                )
            )
        for cp in bundle.chain_pairs:
            relations = [
                {
                    "from_index": r.from_index,
                    "to_index": r.to_index,
                    "type": r.relation_type,
                    "label": ctx.relation_labels.get(r.relation_type, r.relation_type),
                    "decision": r.decision,
                    "origin": r.origin,
                    "rationale": r.rationale,
                    "original_question": r.original_question,
                    "original_answer": r.original_answer,
                    "rewritten_question": r.rewritten_question,
                    "rewritten_answer": r.rewritten_answer,
                }
                for r in cp.relations
            ]
            lines.append(
                (
                    f"chain_pair {cp.id}",
                    {
                        "kind": "chain_pair",
                        "id": cp.id,
                        "split": split,
                        "video": v.name,
                        **cp.meta,
                        "before_index": cp.before_index,
                        "chain_before": cp.chain_before_id,
                        "chain_after": cp.chain_after_id,
                        "relations": relations,
                    },
                )
            )
        for m in bundle.mcqs:
            record = {
                "kind": "mcq",
                "id": m.id,
                "split": split,
                "video": v.name,
                **m.meta,
                "family": m.family,
                "question": m.question,
                "referring_query": m.referring_query,
                "referring_span": None if m.referring_start is None else [m.referring_start, m.referring_end],
                "question_wo_referring_query": m.question_wo_referring_query,
                "question_translation": m.question_translation,
                "options": list(m.options),
            }
            if not test:
                record["correct_index"] = m.correct_index
            record.update(
                {
                    "category": m.category,
                    "level": m.level,
                    "task_group": m.task_group,
                    "videos": [
                        {"video": link.name, "file": link.file_name, "role": link.role, "order": link.order}
                        for link in m.videos
                    ],
                    "moments": [
                        {
                            "video": ctx.videos[mo.video_id].name if mo.video_id in ctx.videos else None,
                            "time_s": mo.time_s,
                            "frame_index": mo.frame_index,
                            "order": mo.order,
                            "note": mo.note,
                        }
                        for mo in m.moments
                    ],
                }
            )
            lines.append((f"mcq {m.id}", record))
        for item, record in lines:
            out.write_json_line(record)
            self.records += 1
            self.problems(file, item, schema_errors("generic.item", record))

    def finish(self) -> None:
        self.ctx.files.close_stream(self.videos_out)
        for split in sorted(self.streams):
            self.ctx.files.close_stream(self.streams[split])
        if not self.records:
            self.problem("generic/", "release", "No released item: there is nothing to write.")
