"""The rules an MCQ is checked against: pure functions over plain data, no database.

One source of truth for the editor (the save response carries these findings, and
static/js/mcq_editor.js ports them for instant feedback; a browser test holds the two to the same
answers) and for the later automatic checks over a whole project.

Two kinds of finding:
- **blockers** stop a submit (no correct option, too few options, an empty option …);
- **warnings** point at likely flaws that a person may still decide to keep (near-duplicate
  options, the correct option the longest, answer words leaked into the question, moments missing
  or outside their video …).

Lengths and spans count Unicode code points (Python's `len`); the browser converts from UTF-16.
"""

import difflib
import math
import re
from dataclasses import asdict, dataclass, field

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

# Two options this alike (difflib ratio over their normalised text) read as the same answer.
NEAR_DUPLICATE_RATIO = 0.9
# The correct option "stands out as the longest" when it is longer than every distractor by at
# least this factor and this many characters (short options differ by a few letters by chance).
LONGEST_RATIO = 1.2
LONGEST_MIN_EXTRA_CHARS = 4
# Words shorter than this carry no answer on their own ("a", "an", "of"), numbers excepted.
CONTENT_WORD_MIN_CHARS = 3

# Function words that say nothing about the answer; numbers and content words stay.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves one ones does did done get gets got
    """.split()  # noqa: SIM905 - a word list reads better as prose
)

_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_CJK_CHAR = re.compile(f"[{_CJK}]")
# Punctuation that joins clauses: left dangling when the referring query is cut out.
_JOINERS = ",;:，；：、"
_CLOSERS = ",.;:!?，。；：！？、)]）】"
_ENDERS = "?.!？。！"


@dataclass(frozen=True)
class MCQRules:
    """What a well-formed MCQ needs; the project kind and the item's video roles choose them."""

    min_options: int = 4
    max_options: int = 5
    # LongVideoBench: the question carries a referring query pointing at the referred moments.
    referring_query: bool = True
    # Warn when no moment is stamped (LongVideoBench `position`).
    moments: bool = True
    # MVPBench: options are labels ("1", "2", …) of the candidate videos, one per candidate.
    label_options: bool = False
    category_required: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


LONGVIDEOBENCH_RULES = MCQRules()
LIVIBENCH_RULES = MCQRules(referring_query=False, moments=False)
MVPBENCH_RULES = MCQRules(min_options=2, max_options=5, referring_query=False, moments=False, label_options=True)


def rules_for(*, kind: str, multi_video: bool, has_categories: bool) -> MCQRules:
    """The rules of a project kind; a reference-and-candidates item follows MVPBench whatever the kind."""
    if multi_video or kind == "mvpbench":
        base = MVPBENCH_RULES
    elif kind == "livibench":
        base = LIVIBENCH_RULES
    else:  # longvideobench, and MCQs in svbench/generic projects follow LongVideoBench
        base = LONGVIDEOBENCH_RULES
    return MCQRules(**(base.as_dict() | {"category_required": has_categories}))


@dataclass(frozen=True)
class DraftVideo:
    video_id: int
    name: str
    role: str = "main"
    duration_s: float | None = None
    unusable: str = ""  # the reason's label when the video is flagged unusable


@dataclass(frozen=True)
class DraftMoment:
    video_id: int
    time_s: float


@dataclass(frozen=True)
class MCQDraft:
    """An MCQ as the editor holds it, valid or not yet."""

    question: str = ""
    referring_start: int | None = None
    referring_end: int | None = None
    options: tuple[str, ...] = ()
    correct_index: int | None = None
    category: str = ""
    videos: tuple[DraftVideo, ...] = ()
    moments: tuple[DraftMoment, ...] = ()


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    # Which options (0-based) or moments (0-based) it is about, for the editor to highlight.
    options: tuple[int, ...] = field(default=())
    moments: tuple[int, ...] = field(default=())

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "options": list(self.options),
            "moments": list(self.moments),
        }


# --- text helpers (mirrored in mcq_editor.js) ----------------------------------------------------


def clock_label(seconds: float) -> str:
    """mm:ss.fff (h:mm:ss.fff past an hour), the player's clock."""
    millis = round(max(0.0, seconds) * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    head = f"{hours}:{minutes:02d}" if hours else f"{minutes:02d}"
    return f"{head}:{secs:02d}.{millis:03d}"


def normalise(text: str) -> str:
    """Lower case, letters and digits only, single spaces: "A red-cube!" → "a red cube"."""
    cleaned = "".join(ch if ch.isalnum() else " " for ch in text.lower())
    return " ".join(cleaned.split())


def similarity(a: str, b: str) -> float:
    # autojunk would treat frequent characters of texts ≥ 200 chars as junk; the JS port has none.
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _is_number(word: str) -> bool:
    return re.fullmatch(r"[0-9]+", word) is not None


def _numbers(text: str) -> list[str]:
    return [word for word in text.split() if _is_number(word)]


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no function words, no one- or two-letter words except numbers."""
    out = []
    for word in normalise(text).split():
        if word in STOPWORDS or word in out:
            continue
        if len(word) >= CONTENT_WORD_MIN_CHARS or _is_number(word) or _CJK_CHAR.search(word):
            out.append(word)
    return out


def _contains_word(normalised_text: str, word: str) -> bool:
    # Chinese and Japanese are written without spaces: a word is found inside a run of characters.
    if _CJK_CHAR.search(word):
        return word in normalised_text
    return word in normalised_text.split()


def _needs_space(left: str, right: str) -> bool:
    if not left or not right or left[-1].isspace() or right[0].isspace():
        return False
    return not (_CJK_CHAR.match(left[-1]) or _CJK_CHAR.match(right[0]))


def question_without_span(question: str, start: int | None, end: int | None) -> str:
    """The question with the referring query cut out and the seams tidied.

    "When the chef lifts the pan, what colour is the sauce?" without its first clause becomes
    "What colour is the sauce?": no dangling comma, no double space, a capital where it now starts.
    """
    if start is None or end is None or not 0 <= start < end <= len(question):
        return question.strip()
    before, after = question[:start], question[end:]
    left, right = before.rstrip(), after.lstrip()
    text = left + (" " if _needs_space(left, right) else "") + right
    text = re.sub(rf"[{re.escape(_JOINERS)}](?:\s*[{re.escape(_JOINERS)}])+", lambda m: m.group(0)[0], text)
    text = re.sub(rf"\s+(?=[{re.escape(_CLOSERS)}])", "", text)
    text = re.sub(rf"[{re.escape(_JOINERS)}]+(?=[{re.escape(_ENDERS)}]|\Z)", "", text)
    text = re.sub(rf"^[\s{re.escape(_JOINERS)}]+", "", text)
    text = re.sub(r"[ \t]{2,}", " ", text).strip()
    opens = not before.strip().strip(_JOINERS).strip()
    if opens and text:
        text = text[0].upper() + text[1:]
    return text


# --- findings ------------------------------------------------------------------------------------


def _n(i: int) -> int:
    return i + 1


def mcq_blockers(draft: MCQDraft, rules: MCQRules) -> list[Finding]:
    """What must be fixed before the item can be submitted."""
    found: list[Finding] = []
    options = [o.strip() for o in draft.options]
    if not draft.question.strip():
        found.append(Finding("question_empty", _("Write the question.")))
    if len(options) < rules.min_options:
        found.append(
            Finding(
                "too_few_options",
                ngettext(
                    "Give at least %(min)s options; there is %(n)s.",
                    "Give at least %(min)s options; there are %(n)s.",
                    len(options),
                )
                % {"min": rules.min_options, "n": len(options)},
            )
        )
    if len(options) > rules.max_options:
        found.append(
            Finding(
                "too_many_options",
                _("Give at most %(max)s options; there are %(n)s.") % {"max": rules.max_options, "n": len(options)},
            )
        )
    empty = tuple(i for i, o in enumerate(options) if not o)
    if empty:
        names = ", ".join(str(_n(i)) for i in empty)
        found.append(
            Finding(
                "empty_option",
                ngettext(
                    "Option %(names)s is empty: fill in or remove.",
                    "Options %(names)s are empty: fill in or remove.",
                    len(empty),
                )
                % {"names": names},
                options=empty,
            )
        )
    if draft.correct_index is None:
        found.append(Finding("no_correct", _("Choose the correct option.")))
    elif not 0 <= draft.correct_index < len(options):
        found.append(
            Finding(
                "correct_out_of_range",
                _("The correct option (%(n)s) is not one of the options.") % {"n": _n(draft.correct_index)},
            )
        )
    if rules.category_required and not draft.category:
        found.append(Finding("no_category", _("Choose a category.")))
    if rules.label_options:
        candidates = [v for v in draft.videos if v.role == "candidate"]
        if not any(v.role == "reference" for v in draft.videos):
            found.append(Finding("no_reference", _("Add the reference video.")))
        if not candidates:
            found.append(Finding("no_candidates", _("Add at least one candidate video.")))
        elif len(options) != len(candidates):
            found.append(
                Finding(
                    "options_not_candidates",
                    _("Give one option label per candidate video: %(candidates)s, %(options)s.")
                    % {
                        "candidates": ngettext("%(n)s candidate", "%(n)s candidates", len(candidates))
                        % {"n": len(candidates)},
                        "options": ngettext("%(n)s option", "%(n)s options", len(options)) % {"n": len(options)},
                    },
                )
            )
    return found


def mcq_warnings(draft: MCQDraft, rules: MCQRules) -> list[Finding]:
    """Likely flaws a person should look at; none of them stops a submit."""
    found: list[Finding] = []
    found += _option_duplicates(draft)
    if not rules.label_options:
        found += _correct_longest(draft)
        found += _answer_leaked(draft)
    found += _referring(draft, rules)
    found += _moments(draft, rules)
    for video in draft.videos:
        if video.unusable:
            found.append(
                Finding(
                    "video_unusable",
                    _("Video %(name)s is flagged unusable (%(reason)s).")
                    % {"name": video.name, "reason": video.unusable},
                )
            )
    return found


def _option_duplicates(draft: MCQDraft) -> list[Finding]:
    found = []
    norms = [normalise(o) for o in draft.options]
    for i in range(len(norms)):
        for j in range(i + 1, len(norms)):
            a, b = norms[i], norms[j]
            if not a or not b:
                continue
            if a == b:
                found.append(
                    Finding(
                        "duplicate_options",
                        _("Options %(a)s and %(b)s are the same once case and punctuation are ignored.")
                        % {"a": _n(i), "b": _n(j)},
                        options=(i, j),
                    )
                )
                continue
            # "15 minutes" and "16 minutes" are distinct answers, however alike the letters.
            if _numbers(a) != _numbers(b):
                continue
            ratio = similarity(a, b)
            if ratio >= NEAR_DUPLICATE_RATIO:
                found.append(
                    Finding(
                        "near_duplicate_options",
                        _("Options %(a)s and %(b)s are nearly the same (%(percent)s%% alike).")
                        % {"a": _n(i), "b": _n(j), "percent": math.floor(ratio * 100)},
                        options=(i, j),
                    )
                )
    return found


def _correct_option(draft: MCQDraft) -> tuple[int, str] | None:
    i = draft.correct_index
    if i is None or not 0 <= i < len(draft.options) or not draft.options[i].strip():
        return None
    return i, draft.options[i].strip()


def _correct_longest(draft: MCQDraft) -> list[Finding]:
    correct = _correct_option(draft)
    distractors = [o.strip() for k, o in enumerate(draft.options) if correct and k != correct[0] and o.strip()]
    if not correct or not distractors:
        return []
    i, text = correct
    longest = max(len(d) for d in distractors)
    if len(text) >= LONGEST_RATIO * longest and len(text) - longest >= LONGEST_MIN_EXTRA_CHARS:
        return [
            Finding(
                "correct_longest",
                _(
                    "The correct option is the longest by far (%(length)s characters, the longest distractor "
                    "%(longest)s): test takers guess the longest. Lengthen a distractor or shorten the answer."
                )
                % {"length": len(text), "longest": longest},
                options=(i,),
            )
        ]
    return []


def _answer_leaked(draft: MCQDraft) -> list[Finding]:
    correct = _correct_option(draft)
    if not correct or not draft.question.strip():
        return []
    i, text = correct
    question = normalise(draft.question)
    distractor_words = set()
    for k, option in enumerate(draft.options):
        if k != i:
            distractor_words.update(content_words(option))
    leaked = [w for w in content_words(text) if w not in distractor_words and _contains_word(question, w)]
    if not leaked:
        return []
    quoted = ", ".join(f'"{w}"' for w in leaked)
    return [
        Finding(
            "answer_leaked",
            ngettext(
                "The question gives the answer away: %(words)s appears in the question and the correct option but "
                "in no distractor.",
                "The question gives the answer away: %(words)s appear in the question and the correct option but "
                "in no distractor.",
                len(leaked),
            )
            % {"words": quoted},
            options=(i,),
        )
    ]


def _referring(draft: MCQDraft, rules: MCQRules) -> list[Finding]:
    start, end = draft.referring_start, draft.referring_end
    if start is None and end is None:
        if rules.referring_query and draft.question.strip():
            return [
                Finding("referring_missing", _("Mark the referring query in the question (select it, then press r)."))
            ]
        return []
    if start is None or end is None or not 0 <= start < end <= len(draft.question):
        return [Finding("referring_outside", _("The referring query is not inside the question: mark it again."))]
    if not draft.question[start:end].strip():
        return [Finding("referring_outside", _("The referring query is empty: mark words of the question."))]
    return []


def _moments(draft: MCQDraft, rules: MCQRules) -> list[Finding]:
    found = []
    if rules.moments and not draft.moments:
        found.append(Finding("no_moment", _("Stamp the referred moment(s) from the player (press s).")))
    videos = {v.video_id: v for v in draft.videos}
    for k, moment in enumerate(draft.moments):
        video = videos.get(moment.video_id)
        if video is None:
            found.append(
                Finding(
                    "moment_foreign_video",
                    _("Moment %(n)s is on a video this question does not use.") % {"n": _n(k)},
                    moments=(k,),
                )
            )
        elif moment.time_s < 0 or (video.duration_s is not None and moment.time_s > video.duration_s):
            found.append(
                Finding(
                    "moment_outside_video",
                    _("Moment %(n)s at %(time)s is outside video %(name)s (0 – %(duration)s).")
                    % {
                        "n": _n(k),
                        "time": clock_label(moment.time_s),
                        "name": video.name,
                        "duration": clock_label(video.duration_s or 0),
                    },
                    moments=(k,),
                )
            )
    return found
