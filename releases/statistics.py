"""Statistics of a release, counted while it is written (the build never holds the project in memory).

Shape (the statistics page draws it; the manifest repeats the counts):

    {"videos": n, "items": {"qa_chain": n, "chain_pair": n, "relation": n, "mcq": n}, "qa_pairs": n,
     "per_split": {split: {"videos": n, "items": n}},
     "categories": {taxonomy: {code: n}},      # topic_categories (videos), skills (QA pairs),
                                               # question_categories and levels (LongVideoBench MCQs),
                                               # tasks and task_groups (LiViBench), mvp_subtasks,
                                               # relation_types (relations)
     "duration_groups": {name: videos},
     "duration_histogram": {"edges_s": [...], "counts": [...]},
     "qa_per_video": {"edges": [...], "counts": [...]},
     "option_lengths": {"edges_chars": [...], "correct": [...], "distractor": [...]}}

Histograms: `counts[i]` counts values with `edges[i] <= x < edges[i + 1]`; the last count holds
everything from the last edge up, so `counts` is as long as `edges`. Edges are fixed, so releases
compare bin for bin. "Items" of a split are its QA chains, chain pairs and MCQs; QA per video counts
a video's released QA pairs and MCQs.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict

from .writers.common import VideoBundle, split_label

DURATION_EDGES_S = [0, 15, 30, 60, 120, 180, 300, 600, 900, 1800, 3600]
QA_PER_VIDEO_EDGES = [0, 1, 2, 5, 10, 20, 30, 40, 50, 75, 100]
OPTION_LENGTH_EDGES = [0, 5, 10, 20, 40, 80, 160, 320]
ITEM_KINDS = ("qa_chain", "chain_pair", "relation", "mcq")
FAMILY_TAXONOMY = {"longvideobench": "question_categories", "livibench": "tasks", "mvpbench": "mvp_subtasks"}


def _bin(edges: list, value: float) -> int:
    return max(0, bisect_right(edges, value) - 1)


class ReleaseStatistics:
    def __init__(self):
        self.videos = 0
        self.items = Counter()
        self.qa_pairs = 0
        self.per_split: dict[str, Counter] = defaultdict(Counter)
        self.categories: dict[str, Counter] = defaultdict(Counter)
        self.duration_groups = Counter()
        self.duration_counts = [0] * len(DURATION_EDGES_S)
        self.qa_counts = [0] * len(QA_PER_VIDEO_EDGES)
        self.correct_lengths = [0] * len(OPTION_LENGTH_EDGES)
        self.distractor_lengths = [0] * len(OPTION_LENGTH_EDGES)

    def add(self, bundle: VideoBundle) -> None:
        v = bundle.video
        items = len(bundle.chains) + len(bundle.chain_pairs) + len(bundle.mcqs)
        if not items:
            return
        self.videos += 1
        split = split_label(v.split)
        self.per_split[split]["videos"] += 1
        self.per_split[split]["items"] += items
        self.items["qa_chain"] += len(bundle.chains)
        self.items["chain_pair"] += len(bundle.chain_pairs)
        self.items["mcq"] += len(bundle.mcqs)
        if v.topic_category:
            self.categories["topic_categories"][v.topic_category] += 1
        if v.duration_group:
            self.duration_groups[v.duration_group] += 1
        if v.duration_s is not None:
            self.duration_counts[_bin(DURATION_EDGES_S, v.duration_s)] += 1
        pairs = 0
        for chain in bundle.chains:
            pairs += len(chain.pairs)
            for pair in chain.pairs:
                if pair.skill:
                    self.categories["skills"][pair.skill] += 1
        self.qa_pairs += pairs
        for cp in bundle.chain_pairs:
            self.items["relation"] += len(cp.relations)
            for r in cp.relations:
                self.categories["relation_types"][r.relation_type] += 1
        for m in bundle.mcqs:
            if m.category:
                self.categories[FAMILY_TAXONOMY[m.family]][m.category] += 1
            if m.family == "longvideobench" and m.level:
                self.categories["levels"][m.level] += 1
            if m.family == "livibench" and m.task_group:
                self.categories["task_groups"][m.task_group] += 1
            for i, option in enumerate(m.options):
                target = self.correct_lengths if i == m.correct_index else self.distractor_lengths
                target[_bin(OPTION_LENGTH_EDGES, len(str(option)))] += 1
        self.qa_counts[_bin(QA_PER_VIDEO_EDGES, pairs + len(bundle.mcqs))] += 1

    def counts(self) -> dict:
        """What the manifest repeats: counts per split, category and duration group."""
        return {
            "videos": self.videos,
            "items": {kind: self.items[kind] for kind in ITEM_KINDS},
            "qa_pairs": self.qa_pairs,
            "per_split": {s: {"videos": c["videos"], "items": c["items"]} for s, c in sorted(self.per_split.items())},
            "categories": {name: dict(sorted(counter.items())) for name, counter in sorted(self.categories.items())},
            "duration_groups": dict(sorted(self.duration_groups.items(), key=lambda kv: _group_key(kv[0]))),
        }

    def as_dict(self) -> dict:
        return {
            **self.counts(),
            "duration_histogram": {"edges_s": list(DURATION_EDGES_S), "counts": list(self.duration_counts)},
            "qa_per_video": {"edges": list(QA_PER_VIDEO_EDGES), "counts": list(self.qa_counts)},
            "option_lengths": {
                "edges_chars": list(OPTION_LENGTH_EDGES),
                "correct": list(self.correct_lengths),
                "distractor": list(self.distractor_lengths),
            },
        }


def _group_key(name: str):
    return (0, float(name), "") if name.replace(".", "", 1).isdigit() else (1, 0.0, name)


# --- what each format holds, and why an item was left out of it ---------------------------------------

FORMAT_EXAMPLES = 20  # items named per reason; the count holds them all
_FAMILY_REASON = {
    "mvpbench": "an MCQ over several videos (MVPBench holds it)",
    "longvideobench": "an MCQ of a LongVideoBench category (LongVideoBench holds it)",
    "livibench": "an MCQ of a LiViBench task (LiViBench holds it)",
}
_CHAIN_REASON = "a QA chain or chain pair (SVBench and generic hold them)"


class FormatTally:
    """Per chosen format: the items its files hold, and the released items it left out, by reason.

    Mirrors how the writers route items: generic holds every item; SVBench the QA chains and chain
    pairs; each MCQ format the MCQs of its family (releases.build.mcq_family)."""

    def __init__(self, formats):
        self.formats = list(formats)
        self.held: dict[str, Counter] = {f: Counter() for f in self.formats}
        self.left: dict[str, dict[str, list]] = {f: defaultdict(lambda: [0, []]) for f in self.formats}

    def _leave(self, fmt: str, reason: str, item: str) -> None:
        entry = self.left[fmt][reason]
        entry[0] += 1
        if len(entry[1]) < FORMAT_EXAMPLES:
            entry[1].append(item)

    def add(self, bundle: VideoBundle) -> None:
        chains = [(f"qa_chain {c.id}", "qa_chain") for c in bundle.chains]
        chains += [(f"chain_pair {cp.id}", "chain_pair") for cp in bundle.chain_pairs]
        for fmt in self.formats:
            if fmt == "generic":
                self.held[fmt]["qa_chain"] += len(bundle.chains)
                self.held[fmt]["chain_pair"] += len(bundle.chain_pairs)
                self.held[fmt]["mcq"] += len(bundle.mcqs)
                continue
            if fmt == "svbench":
                self.held[fmt]["qa_chain"] += len(bundle.chains)
                self.held[fmt]["chain_pair"] += len(bundle.chain_pairs)
                for m in bundle.mcqs:
                    self._leave(fmt, "an MCQ (SVBench holds QA chains only)", f"mcq {m.id}")
                continue
            for item, _kind in chains:
                self._leave(fmt, _CHAIN_REASON, item)
            for m in bundle.mcqs:
                if m.family == fmt:
                    self.held[fmt]["mcq"] += 1
                else:
                    self._leave(fmt, _FAMILY_REASON.get(m.family, m.family), f"mcq {m.id}")

    def as_dict(self) -> dict:
        """{format: {"items": {kind: n}, "left_out": [{"reason", "count", "items": [first few]}]}}"""
        return {
            fmt: {
                "items": {kind: n for kind, n in sorted(self.held[fmt].items()) if n},
                "left_out": [
                    {"reason": reason, "count": count, "items": items}
                    for reason, (count, items) in sorted(self.left[fmt].items())
                ],
            }
            for fmt in self.formats
        }
