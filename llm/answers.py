"""Which option a model's free-text answer chose: by rules first, then by an LLM extractor.

One module for every place that reads a model's multiple-choice answer (shortcut probes, evaluation
runs), so a probe and an evaluation never disagree about what "B" means. The rules, in order:

1. a stated answer: "Answer: B", "the correct answer is (B)", "答案是B", "Option 2";
2. the reply opens with the choice: "B", "(B)", "B.", "B) the red car", "2: ...";
3. the reply is, or holds exactly one of, the options' texts.

A letter counts only when it names an option (A–D for four options); numbers are 1-based, unless
the options carry labels of their own (MVPBench's "1", "2", "3"), which are then matched instead. A
reply naming two different choices in the same way is ambiguous: the rules give up rather than
guess, and the LLM extractor (template `answer_extract`) is asked; its call is recorded like every
model call, and its verdict may still be "none".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

LETTERS = "ABCDEFGHIJ"


class Method:
    """How a choice was read; stored beside every extracted answer."""

    STATED = "stated"  # "Answer: B"
    LEADING = "leading"  # the reply opens with the choice
    TEXT = "text"  # the reply quotes an option
    LLM = "llm"  # the LLM extractor read it
    NONE = "none"  # nothing usable


@dataclass(frozen=True)
class Extraction:
    """The option a reply chose (0-based `index`, None when none could be read) and how it was read."""

    index: int | None
    method: str
    detail: str = ""
    call_id: int | None = None

    @property
    def found(self) -> bool:
        return self.index is not None


def option_labels(count: int, labels: Sequence[str] | None = None) -> list[str]:
    """The labels a prompt shows for `count` options: the given ones, else A, B, C …"""
    if labels:
        return [str(label) for label in labels]
    return list(LETTERS[:count])


def options_block(options: Sequence[str], labels: Sequence[str] | None = None) -> str:
    """Options as a prompt lists them: one "A. text" line each."""
    return "\n".join(
        f"{label}. {text}" for label, text in zip(option_labels(len(options), labels), options, strict=True)
    )


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


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    return _SPACE.sub(" ", _MARKUP.sub("", text)).strip()


def _folded(text: str) -> str:
    return _plain(text).casefold().strip(" .。!！?？\"'“”‘’")


def _choice_index(token: str, count: int, labels: Sequence[str] | None) -> int | None:
    """The option a token names, or None: a label of the options, else a letter in range, else 1-based number."""
    token = token.strip()
    if labels:
        for i, label in enumerate(labels):
            if token.casefold() == str(label).strip().casefold():
                return i
        return None
    if len(token) == 1 and token.upper() in LETTERS[:count] and token.isalpha():
        # A lower-case single letter counts only as a whole reply ("b"), checked by the caller.
        return LETTERS.index(token.upper())
    if token.isdigit() and 1 <= int(token) <= count:
        return int(token) - 1
    return None


def extract_choice(text: str, options: Sequence[str], *, labels: Sequence[str] | None = None) -> Extraction:
    """The option `text` chose by the rules alone (no model call)."""
    count = len(options)
    plain = _plain(text)
    if not plain or count == 0:
        return Extraction(None, Method.NONE, "empty reply")

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
            index = stated.pop()
            return Extraction(index, Method.STATED, f"stated answer {option_labels(count, labels)[index]}")
        if len(stated) > 1:
            names = ", ".join(option_labels(count, labels)[i] for i in sorted(stated))
            return Extraction(None, Method.NONE, f"states more than one answer ({names})")

    leading = _LEADING.match(plain)
    if leading:
        token = leading.group("choice")
        whole = plain.strip(" .。)）") == token.strip()
        if labels or token.isupper() or token.isdigit() or whole:
            index = _choice_index(token, count, labels)
            if index is not None:
                return Extraction(index, Method.LEADING, f"opens with {option_labels(count, labels)[index]}")

    folded = _folded(plain)
    texts = [_folded(option) for option in options]
    exact = [i for i, option in enumerate(texts) if option and option == folded]
    if len(exact) == 1:
        return Extraction(exact[0], Method.TEXT, "repeats an option's text")
    quoted = [i for i, option in enumerate(texts) if option and option in folded]
    # An option contained in another (e.g. "red" and "red car") is not a second quote.
    quoted = [i for i in quoted if not any(j != i and texts[i] in texts[j] and texts[j] in folded for j in quoted)]
    if len(quoted) == 1:
        return Extraction(quoted[0], Method.TEXT, "quotes an option's text")
    if len(quoted) > 1:
        return Extraction(None, Method.NONE, "quotes more than one option")
    return Extraction(None, Method.NONE, "names no option")


EXTRACT_TEMPLATE_KEY = "answer_extract"


def extract_choice_llm(
    *,
    project,
    text: str,
    question: str,
    options: Sequence[str],
    labels: Sequence[str] | None = None,
    step: str = EXTRACT_TEMPLATE_KEY,
) -> Extraction:
    """Ask the project's extractor model which option `text` chose. Raises llm.client.LLMError on failure."""
    from .client import chat_json  # the client imports this module's helpers; import it at call time

    shown = option_labels(len(options), labels)
    schema = {
        "type": "object",
        "required": ["choice"],
        "properties": {"choice": {"type": "string", "enum": [*shown, "none"]}},
    }
    result = chat_json(
        project=project,
        step=step,
        template_key=EXTRACT_TEMPLATE_KEY,
        context={"question": question, "options": options_block(options, labels), "reply": text},
        schema=schema,
        params={"temperature": 0},
    )
    choice = result.parsed["choice"]
    if choice == "none":
        return Extraction(None, Method.LLM, "the extractor found no option", call_id=result.call.pk)
    index = shown.index(choice)
    return Extraction(index, Method.LLM, f"the extractor read {choice}", call_id=result.call.pk)


def answer_choice(
    *,
    project,
    text: str,
    question: str,
    options: Sequence[str],
    labels: Sequence[str] | None = None,
    use_llm: bool = True,
) -> tuple[Extraction, list[Extraction]]:
    """The chosen option, by rules then (when they fail and `use_llm`) by the extractor; with every step tried.

    The LLM step's failure (no endpoint, retries exhausted) is not a choice: it ends as an
    Extraction with index None whose detail says why, and the call it made is on record.
    """
    steps = [extract_choice(text, options, labels=labels)]
    if steps[0].found or not use_llm:
        return steps[0], steps
    from .client import LLMError

    try:
        steps.append(extract_choice_llm(project=project, text=text, question=question, options=options, labels=labels))
    except LLMError as exc:
        steps.append(
            Extraction(
                None, Method.NONE, f"the extractor failed: {exc.message}", call_id=exc.call.pk if exc.call else None
            )
        )
    return steps[-1], steps
