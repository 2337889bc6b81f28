"""SVBench: Dialogue, Con, Streaming and Path files per video, and the meta CSV.

Layout (paths from the release folder):

    svbench/Dialogue/<Video_Name>.json    chains in time order
    svbench/Con/<Video_Name>.json         consecutive chain pairs with their linkages
    svbench/Streaming/<Video_Name>.json   temporal dialogue paths (releases.paths)
    svbench/Path/<Video_Name>.json        the same paths as [chain_index, question_index]
    svbench/meta.csv                      Video_Name, Path_of_Video, Sort_of_Set, Path_of_QandA, Path_of_Con

When the release holds translations, Dialogue, Con and Streaming have `<Folder>_EN` and `<Folder>_ZH`
sub-folders (primary language and translation) and there is one meta CSV per language
(`meta_EN.csv`, `meta_ZH.csv`); Path is the same for both languages and stays in `Path/`.

Chains are the released chains of the video in clip order; a chain that was not released leaves a
gap, and the chains on both sides become consecutive (their Con element then has no linkage, since
linkages only join clips i and i + 1). Linkages are the released relations (accepted, or still
candidates when the release asked for unreviewed chain pairs) of a released chain pair whose two
chains are both released; indexes are positions in the written question lists.
"""

from __future__ import annotations

import csv
import hashlib
import io

from ..paths import streaming_paths
from ..validation import schema_errors, svbench_rules
from .common import ChainData, VideoBundle, Writer, dumps_bytes

META_COLUMNS = ["Video_Name", "Path_of_Video", "Sort_of_Set", "Path_of_QandA", "Path_of_Con"]


def video_seed(seed: int, video_name: str) -> int:
    """The paths' seed of one video: from the release seed and the video's name only."""
    digest = hashlib.sha256(f"{seed}:{video_name}".encode()).hexdigest()
    return int(digest[:16], 16)


class SVBenchWriter(Writer):
    format = "svbench"

    def begin(self) -> None:
        self.meta_rows: dict[str, list[list[str]]] = {lang: [] for lang in self.ctx.languages}
        self.videos = 0

    def _folder(self, folder: str, lang: str) -> str:
        if len(self.ctx.languages) == 1:
            return f"svbench/{folder}"
        return f"svbench/{folder}/{folder}_{lang}"

    def _texts(self, chain: ChainData, lang: str) -> tuple[list[str], list[str]]:
        if lang == self.ctx.primary_language:
            return [p.question for p in chain.pairs], [p.answer for p in chain.pairs]
        # A missing translation is reported once per chain (below); the text falls back to the original
        # so the file stays well-formed and the report names only the real problem.
        return (
            [p.question_translation or p.question for p in chain.pairs],
            [p.answer_translation or p.answer for p in chain.pairs],
        )

    def video(self, bundle: VideoBundle) -> None:
        chains = bundle.chains
        if not chains:
            return
        self.videos += 1
        ctx, v = self.ctx, bundle.video
        chain_ids = [c.id for c in chains]
        position = {c.id: i for i, c in enumerate(chains)}
        place = {p.id: (i, q) for i, c in enumerate(chains) for q, p in enumerate(c.pairs)}
        links = []  # (chain position i, question in i, question in i + 1, label)
        for cp in bundle.chain_pairs:
            i, j = position.get(cp.chain_before_id), position.get(cp.chain_after_id)
            if i is None or j != i + 1:
                continue
            for r in cp.relations:
                a, b = place.get(r.from_pair_id), place.get(r.to_pair_id)
                if a is None or b is None or a[0] != i or b[0] != j:
                    continue
                links.append((i, a[1], b[1], ctx.relation_labels.get(r.relation_type, r.relation_type)))
        paths = streaming_paths(
            chains=[c.pairs for c in chains],
            relations=[((i, q), (i + 1, t)) for i, q, t, _ in links],
            p=ctx.path_p,
            seed=video_seed(ctx.seed, v.name),
        )
        path_doc = {"Paths": [[[c, q] for c, q in path] for path in paths]}
        name = f"{v.name}.json"
        path_file = f"svbench/Path/{name}"
        ctx.files.write_json(path_file, path_doc)
        self.problems(path_file, f"video {v.name}", schema_errors("svbench.path", path_doc))
        video_path = ctx.media(v)

        for lang in ctx.languages:
            texts = [self._texts(c, lang) for c in chains]
            if lang != ctx.primary_language:
                for c in chains:
                    missing = [p.index for p in c.pairs if not (p.question_translation and p.answer_translation)]
                    if missing:
                        self.problem(
                            f"{self._folder('Dialogue', lang)}/{name}",
                            f"chain {c.id}",
                            f"turn(s) {', '.join(map(str, missing))} have no {lang} translation; the release "
                            f"holds translations, so every released turn needs one",
                        )
            dialogue = []
            for c, (questions, answers) in zip(chains, texts, strict=True):
                element_chain = {"questions": questions}
                if not ctx.test_style:
                    element_chain["answers"] = answers
                dialogue.append(
                    {"chain": element_chain, "qac_timestamps_start": c.start_s, "qac_timestamps_end": c.end_s}
                )
            con = []
            for i in range(len(chains) - 1):
                own = [(q, t, label) for (ci, q, t, label) in links if ci == i]
                con.append(
                    {
                        "chain_1": {**dialogue[i]["chain"], **_stamps(dialogue[i])},
                        "chain_2": {**dialogue[i + 1]["chain"], **_stamps(dialogue[i + 1])},
                        "relationship": {
                            "chainBefore": [q for q, _, _ in own],
                            "chainAfter": [t for _, t, _ in own],
                            "relationship": [label for _, _, label in own],
                        },
                    }
                )
            streaming = []
            for path in paths:
                walk = {"questions": [dialogue[c]["chain"]["questions"][q] for c, q in path]}
                if not ctx.test_style:
                    walk["answers"] = [dialogue[c]["chain"]["answers"][q] for c, q in path]
                walk["timestamps"] = [[chains[c].start_s, chains[c].end_s] for c, _ in path]
                streaming.append(walk)

            files = {}
            for folder, doc, schema_name in (
                ("Dialogue", dialogue, "svbench.dialogue"),
                ("Con", con, "svbench.con"),
                ("Streaming", streaming, "svbench.streaming"),
            ):
                files[folder] = f"{self._folder(folder, lang)}/{name}"
                ctx.files.write_bytes(files[folder], dumps_bytes(doc))
                self.problems(files[folder], f"video {v.name}", schema_errors(schema_name, doc))
            for item, message in svbench_rules(
                dialogue=dialogue,
                con=con,
                streaming=streaming,
                path=path_doc,
                test_style=ctx.test_style,
                chain_ids=chain_ids,
            ):
                self.problem(files["Dialogue"], f"video {v.name}" if item == "video" else item, message)
            self.meta_rows[lang].append(
                [v.name, video_path, ctx.split_of(v).capitalize(), files["Dialogue"], files["Con"]]
            )

    def finish(self) -> None:
        if not self.videos:
            self.problem("svbench/", "release", "No released QA chain: there is nothing to write as SVBench.")
            return
        for lang, rows in self.meta_rows.items():
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(META_COLUMNS)
            writer.writerows(rows)
            name = "svbench/meta.csv" if len(self.ctx.languages) == 1 else f"svbench/meta_{lang}.csv"
            self.ctx.files.write_text(name, out.getvalue())


def _stamps(element: dict) -> dict:
    # The very float objects of the Dialogue element: Con's timestamps are bit-identical to them.
    return {
        "qac_timestamps_start": element["qac_timestamps_start"],
        "qac_timestamps_end": element["qac_timestamps_end"],
    }
