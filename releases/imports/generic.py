"""Read generic JSONL: the inverse of releases/writers/generic.py.

`generic/videos.jsonl` gives each released video's file name, split and metadata (topic category,
view count, language, source URL; the probe facts come from the file itself). `generic/<split>.jsonl`
lines are items: `qa_chain` (a clip at clip.index / start_s / end_s and its pairs with skill and
translations), `chain_pair` (chain_before / chain_after name chains of the same import by their id;
relations with type, decision, rationale and the rewrite) and `mcq` (every MCQ field, its videos in
order with their roles, its moments with time and frame). An item's id, status, version and
provenance are the exporting project's: the import gives its own (origin "imported", the status
chosen), so those fields are read for chain pairs' references only.
"""

from __future__ import annotations

from pathlib import Path

from .common import (
    MISSING,
    ChainIn,
    ChainPairIn,
    Fields,
    MCQIn,
    MomentIn,
    PairIn,
    Parsed,
    RelationIn,
    Where,
    import_root,
    media_dirs,
    option_index,
    options_check,
    record_files,
    split_of_file,
)

FORMAT = "generic"
FOLDER = "generic"
VIDEOS_FILE = "videos.jsonl"


def read(source: Path, *, project=None, progress=None) -> Parsed:
    root, given = import_root(source, FOLDER)
    parsed = Parsed(format=FORMAT, root=root, media_dirs=media_dirs(root))
    files = given or record_files(root, FOLDER, ".jsonl")
    videos_path = next((p for p in files if p.name == VIDEOS_FILE), None)
    if videos_path is None and (root / FOLDER / VIDEOS_FILE).is_file():
        videos_path = root / FOLDER / VIDEOS_FILE
    item_files = [p for p in files if p.name != VIDEOS_FILE]
    if not item_files:
        parsed.problems.add(Where(parsed.rel(root)), "", "holds no generic item file (generic/<split>.jsonl).")
    names: dict[str, str] = {}  # video name → file name
    if videos_path is not None:
        for index, line in parsed.jsonl(videos_path) or []:
            _video_line(parsed, line, Where(parsed.rel(videos_path), index), names)
    for n, path in enumerate(item_files):
        if progress:
            progress(n, len(item_files), f"Reading {parsed.rel(path)}")
        split = split_of_file(path.stem)
        for index, record in parsed.jsonl(path) or []:
            rid = record.get("id") if isinstance(record, dict) else None
            where = Where(parsed.rel(path), index, "" if rid is None else str(rid))
            _item(parsed, record, where, split, names)
    return parsed


def _video_line(parsed: Parsed, line, where: Where, names: dict) -> None:
    f = Fields(line, where, parsed.problems)
    name, file_name = f.text("video"), f.text("file")
    split = f.text("split", required=False, default=None)
    topic = f.text("topic_category", required=False, default=None)
    view_count = f.get("view_count", "nonneg_int", required=False)
    language = f.text("language", required=False, default=None)
    url = f.text("source_url", required=False, default=None)
    if not f.ok:
        return
    names[name] = file_name
    parsed.video(
        file_name,
        where,
        "file",
        name=name,
        split=None if split is None else split_of_file(split),
        topic_category=topic,
        view_count=view_count,
        language=language,
        source_url=url,
    )


def _item(parsed: Parsed, record, where: Where, split, names: dict) -> None:
    f = Fields(record, where, parsed.problems)
    if not f.ok:
        return
    kind = f.text("kind")
    f.get("id", "int")
    video = f.text("video")
    if not f.ok:
        return
    if kind == "mcq":
        _mcq(parsed, f, where)
        return
    file_name = names.get(video)
    if file_name is None:
        f.bad("video", f"{video!r} is not in generic/{VIDEOS_FILE}.")
        return
    if kind == "qa_chain":
        _chain(parsed, f, where, file_name)
    elif kind == "chain_pair":
        _chain_pair(parsed, f, where, file_name)
    else:
        f.bad("kind", f"{kind!r} is not qa_chain, chain_pair or mcq.")


def _chain(parsed: Parsed, f: Fields, where: Where, file_name: str) -> None:
    clip = Fields(f.get("clip", "dict"), where, parsed.problems) if f.record.get("clip") is not None else None
    pairs_doc = f.get("pairs", "list")
    if clip is None or not f.ok:
        if clip is None:
            f.bad("clip", "is missing.")
        return
    index, start, end = clip.get("index", "nonneg_int"), clip.get("start_s", "number"), clip.get("end_s", "number")
    if not clip.ok:
        return
    pairs = []
    for n, doc in enumerate(pairs_doc):
        p = Fields(doc, Where(where.file, where.index, f"{where.record_id} pair {n}"), parsed.problems)
        question, answer = p.text("question"), p.text("answer")
        skill = p.text("skill", required=False)
        qt, at = p.text("question_translation", required=False), p.text("answer_translation", required=False)
        if not p.ok:
            return
        pairs.append(PairIn(question, answer, skill, qt, at))
    if not pairs:
        f.bad("pairs", "is empty; a chain has at least one question.")
        return
    if not 0 <= start < end:
        f.bad("clip", f"must end after it starts ({start} to {end}).")
        return
    parsed.chains.append(
        ChainIn(
            source=where, video=file_name, start_s=start, end_s=end, pairs=pairs, clip_index=index, key=f.record["id"]
        )
    )


def _chain_pair(parsed: Parsed, f: Fields, where: Where, file_name: str) -> None:
    before, after = f.get("chain_before", "int"), f.get("chain_after", "int")
    docs = f.get("relations", "list")
    if not f.ok:
        return
    relations = []
    for n, doc in enumerate(docs):
        r = Fields(doc, Where(where.file, where.index, f"{where.record_id} relation {n}"), parsed.problems)
        values = {
            "from_index": r.get("from_index", "nonneg_int"),
            "to_index": r.get("to_index", "nonneg_int"),
            "relation_type": r.text("type"),
            "decision": r.text("decision", required=False, default="accepted"),
            "rationale": r.text("rationale", required=False),
            "original_question": r.text("original_question", required=False),
            "original_answer": r.text("original_answer", required=False),
            "rewritten_question": r.text("rewritten_question", required=False),
            "rewritten_answer": r.text("rewritten_answer", required=False),
        }
        if r.ok and values["decision"] not in ("accepted", "candidate"):
            r.bad("decision", f"{values['decision']!r} is not accepted or candidate.")
        if not r.ok:
            return
        relations.append(RelationIn(**values))
    known = {c.key for c in parsed.chains}
    for name, key in (("chain_before", before), ("chain_after", after)):
        if key not in known:
            f.bad(name, f"chain {key} is not an earlier qa_chain line of this import.")
    if f.ok:
        parsed.chain_pairs.append(
            ChainPairIn(source=where, video=file_name, before=before, after=after, relations=relations)
        )


def _mcq(parsed: Parsed, f: Fields, where: Where) -> None:
    family = f.text("family")
    question = f.text("question")
    referring = f.text("referring_query", required=False)
    span = f.get("referring_span", "int_list", required=False)
    without = f.text("question_wo_referring_query", required=False)
    translation = f.text("question_translation", required=False)
    options = f.strings("options")
    options_check(f, "options", options)
    correct = option_index(f, "correct_index", options)
    category = f.text("category", required=False)
    level = f.text("level", required=False)
    group = f.text("task_group", required=False)
    links = f.get("videos", "list")
    moment_docs = f.get("moments", "list", required=False, default=[])
    if span not in (MISSING, None) and (len(span) != 2 or span[0] >= span[1]):
        f.bad("referring_span", "must be [start, end] with start before end.")
    if not f.ok:
        return
    videos, by_name = [], {}
    for n, doc in enumerate(links):
        v = Fields(doc, Where(where.file, where.index, f"{where.record_id} video {n}"), parsed.problems)
        name, file_name, role = v.text("video"), v.text("file"), v.text("role")
        if not v.ok:
            return
        videos.append((file_name, role))
        by_name[name] = file_name
        parsed.video(file_name, where, "videos", name=name)
    if not videos:
        f.bad("videos", "is empty; an MCQ is over at least one video.")
        return
    moments = []
    for n, doc in enumerate(moment_docs):
        m = Fields(doc, Where(where.file, where.index, f"{where.record_id} moment {n}"), parsed.problems)
        name, time_s, frame = m.text("video"), m.get("time_s", "number"), m.get("frame_index", "nonneg_int")
        order, note = m.get("order", "nonneg_int", required=False, default=n), m.text("note", required=False)
        if m.ok and name not in by_name:
            m.bad("video", f"{name!r} is not one of the question's videos.")
        if m.ok and time_s < 0:
            m.bad("time_s", "is before the start of the video.")
        if not m.ok:
            return
        moments.append(MomentIn(video=by_name[name], frame_index=frame, time_s=time_s, order=order, note=note))
    parsed.mcqs.append(
        MCQIn(
            source=where,
            videos=videos,
            question=question,
            options=options,
            correct_index=correct,
            category=category,
            level=level,
            task_group=group,
            referring_query=referring,
            referring_start=span[0] if span else None,
            referring_end=span[1] if span else None,
            question_wo_referring_query=without,
            question_translation=translation,
            moments=moments,
            family=family,
        )
    )
