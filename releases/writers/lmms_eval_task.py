"""The document functions of a release's lmms-eval tasks: this file is copied, byte for byte, into every
release built with `filters["lmms_eval"]` as `lmms_eval/utils.py`, beside the task YAMLs that name its
functions (`!function utils.doc_to_text`). docs/evaluation_lmms_eval.md says how to run them.

It runs inside lmms-eval's environment, not ours, so it imports the standard library only, and it
finds the release's files from its own location: the folder above it is the release.

One module serves the three MCQ files a release may hold, told apart by their fields:
- LongVideoBench (`longvideobench/lvb_<split>.json`): `candidates`, `correct_choice`, `video_path`;
- MVPBench (`mvpbench/<split>.jsonl`): `query`, `video_options`, `options` (labels), `answer` (a label);
- LiViBench (`livibench/<split>.jsonl`, `format` vidqa-livibench/1): `options`, `answer` (0-based), `video`.

A reply is read by the same rules VidQA Studio's evaluation uses before it asks an LLM extractor
(llm/answers.py `extract_choice`; tests/releases/test_lmms_eval_task.py holds them to each other):
1. a stated answer: "Answer: B", "the correct answer is (B)", "答案是B", "Option 2";
2. the reply opens with the choice: "B", "(B)", "B.", "B) the red car", "2: ...";
3. the reply is, or holds exactly one of, the options' texts.
A reply the rules cannot read scores as wrong (there is no LLM extractor here), and so does a request
lmms-eval could not make: both are counted (`no_choice`, `failed_requests`), so a run can be judged.
"""

import os
import re
import unicodedata

# The release folder: this file sits in <release>/lmms_eval/.
RELEASE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _release_file(*parts):
    return os.path.join(RELEASE_ROOT, *parts)


# `data_files` of each task, absolute (lmms-eval 0.7.0–0.7.2 hand a relative path to `datasets` as it is,
# which reads it from the working directory; the YAMLs take these by `!function utils.DATA_FILES_…`).
DATA_FILES_LVB_TRAIN = {"train": _release_file("longvideobench", "lvb_train.json")}
DATA_FILES_LVB_EVAL = {"eval": _release_file("longvideobench", "lvb_eval.json")}
DATA_FILES_LVB_TEST = {"test": _release_file("longvideobench", "lvb_test.json")}
DATA_FILES_MVP_TRAIN = {"train": _release_file("mvpbench", "train.jsonl")}
DATA_FILES_MVP_EVAL = {"eval": _release_file("mvpbench", "eval.jsonl")}
DATA_FILES_MVP_TEST = {"test": _release_file("mvpbench", "test.jsonl")}
DATA_FILES_LIVI_TRAIN = {"train": _release_file("livibench", "train.jsonl")}
DATA_FILES_LIVI_EVAL = {"eval": _release_file("livibench", "eval.jsonl")}
DATA_FILES_LIVI_TEST = {"test": _release_file("livibench", "test.jsonl")}

LETTERS = "ABCDEFGHIJ"
# What lmms-eval's OpenAI-compatible models put in place of a reply they could not get.
FAILED_REPLY_PREFIXES = ("[LMMS_EVAL_REQUEST_FAILED", "[LMMS_EVAL_BUDGET_EXCEEDED")
POST_PROMPT_LETTER = "Answer with the option's letter from the given choices directly."
POST_PROMPT_LABEL = "Answer with the option's label from the given choices directly."


# --- one record, whatever its file ---------------------------------------------------------------------


def _field(doc, key, default=None):
    value = doc.get(key, default) if hasattr(doc, "get") else default
    return default if value is None else value


def record(doc):
    """The record as a multiple-choice question: kind, id, video (the cluster), category, question,
    options (texts), labels (None: letters), answer (0-based index or None) and its videos (release paths)."""
    if "candidates" in doc:
        return {
            "kind": "longvideobench",
            "id": _field(doc, "id", ""),
            "video": _field(doc, "video_id", ""),
            "category": _field(doc, "question_category", ""),
            "question": _field(doc, "question", ""),
            "options": [str(o) for o in _field(doc, "candidates", [])],
            "labels": None,
            "answer": _field(doc, "correct_choice"),
            "videos": ["videos/" + _field(doc, "video_path", "")],
        }
    if "video_options" in doc:
        labels = [str(o) for o in _field(doc, "options", [])]
        answer = _field(doc, "answer")
        return {
            "kind": "mvpbench",
            "id": _field(doc, "id", ""),
            "video": _field(doc, "id", ""),
            "category": "",
            "question": _field(doc, "query", ""),
            "options": labels,
            "labels": labels,
            "answer": labels.index(str(answer)) if answer is not None and str(answer) in labels else None,
            "videos": ["videos/" + name for name in [_field(doc, "id", "")] + list(_field(doc, "video_options", []))],
        }
    return {
        "kind": "livibench",
        "id": _field(doc, "id", ""),
        "video": _field(doc, "video", ""),
        "category": _field(doc, "task", ""),
        "question": _field(doc, "question", ""),
        "options": [str(o) for o in _field(doc, "options", [])],
        "labels": None,
        "answer": _field(doc, "answer"),
        "videos": ["videos/" + _field(doc, "video", "")],
    }


def option_labels(count, labels=None):
    if labels:
        return [str(label) for label in labels]
    return list(LETTERS[:count])


# --- lmms-eval's document functions --------------------------------------------------------------------


def doc_to_visual(doc):
    """The record's video files, absolute, in input order (MVPBench: the reference first)."""
    paths = []
    for relative in record(doc)["videos"]:
        path = _release_file(*relative.split("/"))
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{path} is missing: the release was built without its media (include_media false); "
                "put the video files under its videos/ folder"
            )
        paths.append(path)
    return paths


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """The question, then one option per line ("A. text"; MVPBench: its labels), then the instruction."""
    kwargs = lmms_eval_specific_kwargs or {}
    item = record(doc)
    if item["labels"]:
        options = "Options: " + ", ".join(item["labels"])
        post = kwargs.get("post_prompt") or POST_PROMPT_LABEL
    else:
        options = "\n".join(
            f"{label}. {text}" for label, text in zip(option_labels(len(item["options"])), item["options"], strict=True)
        )
        post = kwargs.get("post_prompt") or POST_PROMPT_LETTER
    pre = kwargs.get("pre_prompt") or ""
    return f"{pre}{item['question']}\n{options}\n{post}"


def doc_to_target(doc):
    """The correct option's label ("B"; MVPBench "2"), or "" when the record has no answer."""
    item = record(doc)
    answer = item["answer"]
    if answer is None or not 0 <= int(answer) < len(item["options"]):
        return ""
    return option_labels(len(item["options"]), item["labels"])[int(answer)]


def process_results(doc, results):
    """Score one reply. Every metric is a dict with `score` (0/1) and `video`, the task's `cluster_key`,
    so lmms-eval also reports standard errors clustered by video (`<metric>_stderr_clustered`)."""
    reply = results[0] if results else ""
    reply = reply if isinstance(reply, str) else ""
    item = record(doc)
    failed = reply.strip().startswith(FAILED_REPLY_PREFIXES)
    if failed:
        index, rule = None, "request failed"
    else:
        index, rule = extract_choice(reply, item["options"], labels=item["labels"])
    answer = item["answer"]
    correct = index is not None and answer is not None and index == int(answer)
    shown = option_labels(len(item["options"]), item["labels"])
    common = {"video": item["video"], "id": item["id"]}
    return {
        "accuracy": {
            "score": 1 if correct else 0,
            **common,
            "category": item["category"],
            "choice": shown[index] if index is not None else None,
            "target": doc_to_target(doc) or None,
            "rule": rule,
        },
        "failed_requests": {"score": 1 if failed else 0, **common},
        "no_choice": {"score": 1 if index is None and not failed else 0, **common},
    }


def mean_score(items):
    """The mean of the items' scores (lmms-eval aggregation for the metrics above)."""
    scores = [item["score"] if isinstance(item, dict) else item for item in items]
    return sum(scores) / len(scores) if scores else 0.0


# --- reading the chosen option (the rules of llm/answers.py `extract_choice`, kept identical) --------------

_CHOICE_AFTER = (
    r"\s*(?:is|would be|should be|:|：|是|为|应该是|应为)?\s*[:：]?\s*"
    r"[\(\[（【]?\s*(?P<choice>[A-Za-z0-9]{1,3})\s*[\)\]）】]?(?![A-Za-z0-9])"
)
# "The answer is (C) because option A is wrong": an "answer" statement outranks an "option" mention.
_STATED_TIERS = (
    re.compile(r"(?:answer|choice|答案)" + _CHOICE_AFTER, re.IGNORECASE),
    re.compile(r"(?:option|选项|选择)" + _CHOICE_AFTER, re.IGNORECASE),
)
_LEADING = re.compile(r"^[\(\[（【]?\s*(?P<choice>[A-Za-z0-9]{1,3})\s*(?:[\)\]）】.:：,，、]|$|\s*$)")
_MARKUP = re.compile(r"[*_`#>]+")
_SPACE = re.compile(r"\s+")


def _plain(text):
    text = unicodedata.normalize("NFKC", text or "")
    return _SPACE.sub(" ", _MARKUP.sub("", text)).strip()


def _folded(text):
    return _plain(text).casefold().strip(" .。!！?？\"'“”‘’")


def _choice_index(token, count, labels):
    token = token.strip()
    if labels:
        for i, label in enumerate(labels):
            if token.casefold() == str(label).strip().casefold():
                return i
        return None
    if len(token) == 1 and token.upper() in LETTERS[:count] and token.isalpha():
        return LETTERS.index(token.upper())
    if token.isdigit() and 1 <= int(token) <= count:
        return int(token) - 1
    return None


def extract_choice(text, options, labels=None):
    """(0-based index or None, the rule that read it: stated, leading, text or none)."""
    count = len(options)
    plain = _plain(text)
    if not plain or count == 0:
        return None, "none"

    for tier in _STATED_TIERS:
        stated = set()
        for match in tier.finditer(plain):
            token = match.group("choice")
            if not labels and token.isalpha() and token.islower() and len(token) == 1:
                continue  # "the answer is a bit unclear": a lower-case article, not a choice
            index = _choice_index(token, count, labels)
            if index is not None:
                stated.add(index)
        if len(stated) == 1:
            return stated.pop(), "stated"
        if len(stated) > 1:
            return None, "none"

    leading = _LEADING.match(plain)
    if leading:
        token = leading.group("choice")
        whole = plain.strip(" .。)）") == token.strip()
        if labels or token.isupper() or token.isdigit() or whole:
            index = _choice_index(token, count, labels)
            if index is not None:
                return index, "leading"

    folded = _folded(plain)
    texts = [_folded(option) for option in options]
    exact = [i for i, option in enumerate(texts) if option and option == folded]
    if len(exact) == 1:
        return exact[0], "text"
    quoted = [i for i, option in enumerate(texts) if option and option in folded]
    # An option contained in another (e.g. "red" and "red car") is not a second quote.
    quoted = [i for i in quoted if not any(j != i and texts[i] in texts[j] and texts[j] in folded for j in quoted)]
    if len(quoted) == 1:
        return quoted[0], "text"
    return None, "none"
