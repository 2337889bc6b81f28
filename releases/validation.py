"""Checks a release's documents before it is marked ready: the JSON Schemas in releases/schemas/ and
the benchmarks' rules that a schema cannot say (cross-file identity, floats, files that must exist).

The functions take documents as they are written (or read back) and return messages; the writers
attach the file and the item ("mcq 12", "chain 4", "video bench_00001") and the build stores them as
`validation_errors`. Any message fails the release.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import fastjsonschema
from jsonschema import Draft7Validator

from audits.static_checks import LVB_MIN_DURATION_S

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SCHEMAS = (
    "manifest",
    "svbench.dialogue",
    "svbench.con",
    "svbench.streaming",
    "svbench.path",
    "longvideobench.record",
    "longvideobench.subtitles",
    "mvpbench.record",
    "livibench.record",
    "livibench.comment",
    "livibench.asr",
    "generic.item",
)
MAX_SCHEMA_MESSAGES = 5
VIDEO_PLACEHOLDER = "<video>"


@functools.cache
def schema(name: str) -> dict:
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@functools.cache
def _validator(name: str) -> Draft7Validator:
    s = schema(name)
    Draft7Validator.check_schema(s)
    return Draft7Validator(s)


@functools.cache
def _fast(name: str):
    _validator(name)  # the schema itself is checked by jsonschema first
    return fastjsonschema.compile(schema(name))


def schema_errors(name: str, document) -> list[str]:
    """What is wrong with `document` against schema `name` (at most a few messages, each with its place).

    A release checks hundreds of thousands of values, so the common case (valid) runs the schema
    compiled to Python by fastjsonschema; only a document it refuses goes through jsonschema, whose
    messages say where each problem is.
    """
    try:
        _fast(name)(document)
        return []
    except fastjsonschema.JsonSchemaValueException as exc:
        fast_message = f"{name} schema: {exc.message}"
    validator = _validator(name)
    messages = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        messages.append(f"{name} schema: at {where}: {error.message}")
        if len(messages) >= MAX_SCHEMA_MESSAGES:
            break
    return messages or [fast_message]


def _is_float(value) -> bool:
    return isinstance(value, float)


# --- SVBench ------------------------------------------------------------------------------------------


def _chain_item(index: int, chain_ids: list | None) -> str:
    return f"chain {chain_ids[index]}" if chain_ids and index < len(chain_ids) else f"chain #{index}"


def svbench_rules(
    *, dialogue: list, con: list, streaming: list, path: dict, test_style: bool, chain_ids: list | None = None
) -> list[tuple[str, str]]:
    """(item, message) for every SVBench rule the video's four documents break."""
    problems: list[tuple[str, str]] = []
    stamps = []
    for i, element in enumerate(dialogue):
        item = _chain_item(i, chain_ids)
        chain = element.get("chain") or {}
        questions = chain.get("questions") or []
        if not questions:
            problems.append((item, "Dialogue: the chain is empty (no questions); an SVBench chain never is"))
        problems.extend((item, f"Dialogue: {m}") for m in _answers_rule(chain, test_style))
        start, end = element.get("qac_timestamps_start"), element.get("qac_timestamps_end")
        if not (_is_float(start) and _is_float(end)):
            problems.append((item, f"Dialogue: qac timestamps must be floats, not {start!r} and {end!r}"))
        elif start > end:
            problems.append((item, f"Dialogue: the chain starts ({start}) after it ends ({end})"))
        elif stamps and start < stamps[-1][0]:
            problems.append((item, "Dialogue: chains are not in time order"))
        stamps.append((start, end))

    if len(con) != max(0, len(dialogue) - 1):
        problems.append(
            ("video", f"Con has {len(con)} elements; {len(dialogue)} chains make {max(0, len(dialogue) - 1)} pairs")
        )
    for i, element in enumerate(con[: max(0, len(dialogue) - 1)]):
        item = _chain_item(i, chain_ids)
        for key, j in (("chain_1", i), ("chain_2", i + 1)):
            side, ref = element.get(key) or {}, dialogue[j]
            same = (
                side.get("questions") == ref["chain"].get("questions")
                and side.get("answers") == ref["chain"].get("answers")
                and _bit_equal(side.get("qac_timestamps_start"), ref.get("qac_timestamps_start"))
                and _bit_equal(side.get("qac_timestamps_end"), ref.get("qac_timestamps_end"))
            )
            if not same:
                what = "the same chain as" if key == "chain_1" else "the next chain after"
                problems.append(
                    (item, f"Con: {key} of pair {i} is not {what} Dialogue element {i} (text or timestamps)")
                )
        rel = element.get("relationship") or {}
        before, after, labels = rel.get("chainBefore", []), rel.get("chainAfter", []), rel.get("relationship", [])
        if not (len(before) == len(after) == len(labels)):
            problems.append(
                (
                    item,
                    f"Con: relationship lists of pair {i} are not aligned ({len(before)}, {len(after)}, {len(labels)})",
                )
            )
        n1 = len(dialogue[i]["chain"].get("questions") or [])
        n2 = len(dialogue[i + 1]["chain"].get("questions") or [])
        if any(not 0 <= q < n1 for q in before) or any(not 0 <= q < n2 for q in after):
            problems.append((item, f"Con: a linkage of pair {i} points at a question that is not there"))

    paths = path.get("Paths") or []
    if len(paths) != len(streaming):
        problems.append(("video", f"Path has {len(paths)} paths and Streaming {len(streaming)}; they must align"))
    for k, (steps, walk) in enumerate(zip(paths, streaming, strict=False)):
        questions, timestamps = walk.get("questions") or [], walk.get("timestamps") or []
        answers = walk.get("answers")
        if test_style != (answers is None):
            problems.append(("video", f"Streaming path {k}: answers must be {'absent' if test_style else 'present'}"))
        lengths = {len(steps), len(questions), len(timestamps)} | ({len(answers)} if answers is not None else set())
        if len(lengths) != 1:
            problems.append(("video", f"Streaming path {k} and Path {k} differ in length"))
            continue
        previous = None
        for n, step in enumerate(steps):
            c, q = step
            if not (0 <= c < len(dialogue) and 0 <= q < len(dialogue[c]["chain"].get("questions") or [])):
                problems.append(("video", f"Path {k} step {n} points at ({c}, {q}), which is not in Dialogue"))
                break
            ref = dialogue[c]
            ok = questions[n] == ref["chain"]["questions"][q] and (
                answers is None or answers[n] == ref["chain"]["answers"][q]
            )
            stamp = timestamps[n]
            ok = (
                ok
                and _bit_equal(stamp[0], ref["qac_timestamps_start"])
                and _bit_equal(stamp[1], ref["qac_timestamps_end"])
            )
            if not ok:
                problems.append(("video", f"Streaming path {k} step {n} is not Dialogue ({c}, {q})"))
                break
            if previous is not None and (c < previous[0] or (c == previous[0] and q <= previous[1])):
                problems.append(("video", f"Path {k} goes back in time at step {n}"))
                break
            previous = (c, q)
    return problems


def _answers_rule(chain: dict, test_style: bool) -> list[str]:
    answers = chain.get("answers")
    if test_style:
        return ["answers must be absent in a test-style release"] if answers is not None else []
    if answers is None:
        return ["answers are missing"]
    if len(answers) != len(chain.get("questions") or []):
        return [f"{len(chain.get('questions') or [])} questions but {len(answers)} answers"]
    return []


def _bit_equal(a, b) -> bool:
    return type(a) is type(b) and a == b


# --- LongVideoBench -------------------------------------------------------------------------------------


def longvideobench_record_rules(
    record: dict,
    *,
    test_style: bool,
    duration_limit_s: float | None,
    subtitle_exists: bool,
    levels: dict[str, str] | None = None,
) -> list[str]:
    """The LongVideoBench rules for one record: answer present or absent, floats, duration, its subtitle file, level."""
    problems = []
    if test_style and "correct_choice" in record:
        problems.append("correct_choice must be absent in a test-style release")
    if not test_style:
        choice = record.get("correct_choice")
        if not isinstance(choice, int) or isinstance(choice, bool):
            problems.append("correct_choice is missing (the MCQ has no correct option)")
        elif not 0 <= choice < len(record.get("candidates") or []):
            problems.append(
                f"correct_choice {choice} is not one of the {len(record.get('candidates') or [])} candidates"
            )
    for key in ("duration", "starting_timestamp_for_subtitles"):
        if not _is_float(record.get(key)):
            problems.append(f"{key} must be a float, not {record.get(key)!r}")
    duration = record.get("duration")
    if duration_limit_s is None:
        problems.append("the video's duration is unknown (not probed)")
    elif isinstance(duration, int | float) and duration > duration_limit_s:
        problems.append(f"duration {duration} s is longer than the decodable video ({duration_limit_s} s)")
    if isinstance(duration, int | float) and duration < LVB_MIN_DURATION_S:
        problems.append(f"duration {duration} s is under 1 s: the official loader samples no frame from it")
    if not subtitle_exists:
        problems.append(f"subtitle file subtitles/{record.get('subtitle_path')} does not exist")
    if levels is not None:
        code = record.get("question_category")
        if code not in levels:
            problems.append(f"question_category {code!r} is not a LongVideoBench category of this project")
        elif record.get("level") != levels[code]:
            problems.append(f"level {record.get('level')!r} does not match category {code} ({levels[code]})")
    if not str(record.get("id", "")).startswith(f"{record.get('video_id')}_"):
        problems.append("id must be <video_id>_<n>")
    return problems


def longvideobench_subtitle_rules(cues: list) -> list[str]:
    problems = []
    last = None
    for n, cue in enumerate(cues):
        start, end = (cue.get("timestamp") or [None, None])[:2]
        if not (_is_float(start) and _is_float(end)):
            problems.append(f"cue {n}: timestamps must be floats, not {start!r} and {end!r}")
            continue
        if start > end:
            problems.append(f"cue {n}: starts after it ends")
        if last is not None and start < last:
            problems.append(f"cue {n}: not in time order")
        last = start
    return problems


# --- MVPBench and LiViBench -------------------------------------------------------------------------------


def mvpbench_record_rules(record: dict, *, test_style: bool) -> list[str]:
    problems = []
    options = record.get("options") or []
    if test_style:
        if "answer" in record:
            problems.append("answer must be absent in a test-style release")
    elif record.get("answer") not in options:
        problems.append(f"answer {record.get('answer')!r} is not one of the options {options}")
    wanted = 1 + len(record.get("video_options") or [])
    found = str(record.get("query", "")).count(VIDEO_PLACEHOLDER)
    if found != wanted:
        problems.append(f"query has {found} {VIDEO_PLACEHOLDER} placeholders for {wanted} input videos")
    if len(set(options)) != len(options):
        problems.append("options repeat a label")
    return problems


def livibench_record_rules(record: dict, *, test_style: bool, tasks: dict[str, str] | None = None) -> list[str]:
    problems = []
    options = record.get("options") or []
    if test_style:
        if "answer" in record:
            problems.append("answer must be absent in a test-style release")
    else:
        answer = record.get("answer")
        if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(options):
            problems.append(f"answer {answer!r} is not the index of one of the {len(options)} options")
    if tasks is not None:
        task = record.get("task")
        if task not in tasks:
            problems.append(f"task {task!r} is not in the project's LiViBench task list")
        elif record.get("group") != tasks[task]:
            problems.append(f"task {task!r} belongs to group {tasks[task]!r}, not {record.get('group')!r}")
    if not _is_float(record.get("duration")):
        problems.append("duration must be a float")
    return problems
