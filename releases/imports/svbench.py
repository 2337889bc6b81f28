"""Read SVBench files: the inverse of releases/writers/svbench.py.

The meta CSV (`svbench/meta.csv`, or `meta_<LANG>.csv` per language) lists the videos in order:
Video_Name, Path_of_Video (`videos/<file>`), Sort_of_Set (Train/Eval/Test/Unsplit: the video's
split), Path_of_QandA (the Dialogue file) and Path_of_Con (the Con file), paths from the release
folder. Dialogue: one element per chain in time order → a clip (qac_timestamps_start/end) with a QA
chain of its questions and answers. Con: one element per consecutive pair of chains → a chain pair;
chain_1 and chain_2 must repeat the Dialogue's chains (questions and timestamps), and the aligned
chainBefore / chainAfter / relationship lists become accepted relations (label → the project's
relation type with that released label, or that code).

With `Dialogue/Dialogue_EN` and `Dialogue/Dialogue_ZH` (and meta_EN.csv / meta_ZH.csv) the project's
primary language gives the questions and answers, the other one their translations. Streaming and
Path files are not read: a release derives them again from the chains, linkages and its seed.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path, PurePosixPath

from .common import (
    ChainIn,
    ChainPairIn,
    Fields,
    PairIn,
    Parsed,
    RelationIn,
    Where,
    media_dirs,
)

FORMAT = "svbench"
FOLDER = "svbench"
META_COLUMNS = ["Video_Name", "Path_of_Video", "Sort_of_Set", "Path_of_QandA", "Path_of_Con"]
SETS = {"train": "train", "eval": "eval", "test": "test", "unsplit": ""}


def _roots(source: Path) -> tuple[Path, Path]:
    """(release folder, svbench folder) for a release folder, its svbench/ folder or a meta CSV."""
    source = Path(source)
    if source.is_file():
        source = source.parent
    if (source / FOLDER).is_dir():
        return source, source / FOLDER
    return source.parent, source


def read(source: Path, *, project=None, progress=None) -> Parsed:
    release, folder = _roots(source)
    parsed = Parsed(format=FORMAT, root=release, media_dirs=media_dirs(folder))
    primary = ((getattr(project, "primary_language", "") or "en").split("-")[0]).upper()
    metas = sorted(folder.glob("meta_*.csv"))
    if (folder / "meta.csv").is_file():
        languages = {primary: folder / "meta.csv"}
    elif metas:
        languages = {p.stem.split("_", 1)[1].upper(): p for p in metas}
    else:
        parsed.problems.add(Where(parsed.rel(folder)), "", "holds no meta CSV (meta.csv or meta_EN.csv / meta_ZH.csv).")
        return parsed
    if primary not in languages:
        parsed.problems.add(
            Where(parsed.rel(next(iter(languages.values())))),
            "",
            f"no meta CSV in the project's language ({primary}); found {', '.join(sorted(languages))}.",
        )
        return parsed
    other = next((lang for lang in sorted(languages) if lang != primary), None)
    rows = _meta(parsed, languages[primary])
    translated = _meta(parsed, languages[other]) if other else None
    if translated is not None and [r[1]["Video_Name"] for r in translated] != [r[1]["Video_Name"] for r in rows]:
        parsed.problems.add(
            Where(parsed.rel(languages[other])), "Video_Name", "lists other videos than the primary one."
        )
        return parsed
    for n, (where, row) in enumerate(rows):
        if progress:
            progress(n, len(rows), f"Reading {row['Video_Name']}")
        _video(parsed, where, row, translated[n][1] if translated else None, release, folder, project)
    return parsed


def _meta(parsed: Parsed, path: Path) -> list[tuple[Where, dict]]:
    data = parsed.read(path)
    if data is None:
        return []
    rel = parsed.rel(path)
    try:
        reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig")))
        rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:
        parsed.problems.add(Where(rel), "", f"is not a readable CSV ({exc}).")
        return []
    missing = [c for c in META_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        parsed.problems.add(Where(rel), missing[0], "column is missing.")
        return []
    out = []
    for n, row in enumerate(rows):
        where = Where(rel, n, row.get("Video_Name") or "")
        for column in META_COLUMNS:
            if not (row.get(column) or "").strip():
                parsed.problems.add(where, column, "is empty.")
        sort = (row.get("Sort_of_Set") or "").strip().lower()
        if sort not in SETS:
            parsed.problems.add(
                where, "Sort_of_Set", f"{row.get('Sort_of_Set')!r} is not Train, Eval, Test or Unsplit."
            )
        out.append((where, row))
    return out


def _file(parsed: Parsed, where: Where, column: str, value: str, release: Path, folder: Path) -> Path | None:
    rel = PurePosixPath(value)
    if rel.is_absolute() or ".." in rel.parts:
        parsed.problems.add(where, column, f"{value!r} is not a path inside the release.")
        return None
    for base in (release, folder, folder.parent):
        if (base / rel).is_file():
            return base / rel
    parsed.problems.add(where, column, f"{value} does not exist.")
    return None


def _video(parsed: Parsed, where: Where, row: dict, other: dict | None, release: Path, folder: Path, project) -> None:
    name = row["Video_Name"].strip()
    dialogue_path = _file(parsed, where, "Path_of_QandA", row["Path_of_QandA"], release, folder)
    con_path = _file(parsed, where, "Path_of_Con", row["Path_of_Con"], release, folder)
    if dialogue_path is None or con_path is None:
        return
    file_name = PurePosixPath(row["Path_of_Video"].strip()).name
    parsed.video(file_name, where, "Path_of_Video", name=name, split=SETS.get(row["Sort_of_Set"].strip().lower()))
    chains = _dialogue(parsed, dialogue_path, name, file_name)
    if chains is None:
        return
    if other is not None:
        translation = _file(parsed, where, "Path_of_QandA", other["Path_of_QandA"], release, folder)
        if translation is None:
            return
        _translations(parsed, translation, chains)
    _con(parsed, con_path, chains, file_name, project)


def _dialogue(parsed: Parsed, path: Path, name: str, file_name: str) -> list[ChainIn] | None:
    doc = parsed.json(path)
    if doc is None:
        return None
    rel = parsed.rel(path)
    if not isinstance(doc, list):
        parsed.problems.add(Where(rel), "", "is not a JSON array of chains.")
        return None
    chains = []
    for i, element in enumerate(doc):
        where = Where(rel, i, f"{name}#{i}")
        chain = _chain(parsed, element, where)
        if chain is None:
            continue
        chains.append(
            ChainIn(source=where, video=file_name, start_s=chain[0], end_s=chain[1], pairs=chain[2], key=(file_name, i))
        )
    if len(chains) != len(doc):
        return None
    parsed.chains.extend(chains)
    return chains


def _chain(parsed: Parsed, element, where: Where):
    f = Fields(element, where, parsed.problems)
    if not f.ok:
        return None
    body = f.get("chain", "dict")
    start = f.get("qac_timestamps_start", "number")
    end = f.get("qac_timestamps_end", "number")
    if not f.ok:
        return None
    inner = Fields(body, where, parsed.problems)
    questions = inner.strings("questions")
    answers = inner.strings("answers")
    if not inner.ok:
        return None
    if not questions:
        inner.bad("questions", "is empty; a chain has at least one question.")
    elif len(answers) != len(questions):
        inner.bad("answers", f"has {len(answers)} answers for {len(questions)} questions.")
    if not 0 <= start < end:
        f.bad("qac_timestamps_end", f"the chain must end after it starts ({start} to {end}).")
    if not (inner.ok and f.ok):
        return None
    return start, end, [PairIn(question=q, answer=a) for q, a in zip(questions, answers, strict=True)]


def _translations(parsed: Parsed, path: Path, chains: list[ChainIn]) -> None:
    doc = parsed.json(path)
    if doc is None:
        return
    rel = parsed.rel(path)
    if not isinstance(doc, list) or len(doc) != len(chains):
        parsed.problems.add(Where(rel), "", f"must hold {len(chains)} chains like the primary Dialogue file.")
        return
    for i, (element, chain) in enumerate(zip(doc, chains, strict=True)):
        got = _chain(parsed, element, Where(rel, i))
        if got is None:
            continue
        if len(got[2]) != len(chain.pairs):
            parsed.problems.add(Where(rel, i), "questions", "has another number of questions than the primary chain.")
            continue
        for pair, translated in zip(chain.pairs, got[2], strict=True):
            pair.question_translation, pair.answer_translation = translated.question, translated.answer


def _con(parsed: Parsed, path: Path, chains: list[ChainIn], file_name: str, project) -> None:
    doc = parsed.json(path)
    if doc is None:
        return
    rel = parsed.rel(path)
    if not isinstance(doc, list) or len(doc) != max(len(chains) - 1, 0):
        parsed.problems.add(
            Where(rel), "", f"must hold {max(len(chains) - 1, 0)} chain pairs (one per consecutive pair)."
        )
        return
    labels = {}
    for r in project.taxonomy("relation_types") if project is not None else []:
        labels[r["code"]] = r["code"]
        labels[r.get("label") or r["code"]] = r["code"]
    for i, element in enumerate(doc):
        where = Where(rel, i)
        f = Fields(element, where, parsed.problems)
        if not f.ok:
            continue
        before, after, rel_doc = f.get("chain_1", "dict"), f.get("chain_2", "dict"), f.get("relationship", "dict")
        if not f.ok:
            continue
        for key, chain in (("chain_1", chains[i]), ("chain_2", chains[i + 1])):
            side = before if key == "chain_1" else after
            if (
                side.get("questions") != [p.question for p in chain.pairs]
                or side.get("qac_timestamps_start") != chain.start_s
                or side.get("qac_timestamps_end") != chain.end_s
            ):
                f.bad(key, f"does not repeat chain {i if key == 'chain_1' else i + 1} of the Dialogue file.")
        r = Fields(rel_doc, where, parsed.problems)
        befores = r.get("chainBefore", "int_list")
        afters = r.get("chainAfter", "int_list")
        names = r.strings("relationship")
        if not (f.ok and r.ok):
            continue
        if not len(befores) == len(afters) == len(names):
            r.bad("relationship", "chainBefore, chainAfter and relationship must be lists of the same length.")
            continue
        relations = []
        for k, (q, t, label) in enumerate(zip(befores, afters, names, strict=True)):
            if q >= len(chains[i].pairs):
                r.bad("chainBefore", f"entry {k} is {q}; chain {i} has {len(chains[i].pairs)} questions.")
            elif t >= len(chains[i + 1].pairs):
                r.bad("chainAfter", f"entry {k} is {t}; chain {i + 1} has {len(chains[i + 1].pairs)} questions.")
            elif label not in labels:
                r.bad("relationship", f"entry {k}: {label!r} is not a relation type of the project.")
            else:
                relations.append(RelationIn(from_index=q, to_index=t, relation_type=labels[label]))
        if r.ok and relations:  # a pair without linkages is no item to review
            parsed.chain_pairs.append(
                ChainPairIn(
                    source=where, video=file_name, before=(file_name, i), after=(file_name, i + 1), relations=relations
                )
            )
