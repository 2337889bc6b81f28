"""Writes to QA chains from the annotator's workspace: save, undo, submit; and the proper-name hint.

Every content change goes through `chain_save` (or `chain_undo`, which is a save of older content):
the chain row is locked, the item must be editable, `version_claim` checks the version the editor
started from, and the pairs are replaced in one transaction, so a save is all or nothing.

History: each content version leaves one QAChain history row (simple-history) stamped at the
moment its pairs were written, and every pair write leaves a QAPair history row with that same
stamp. "The content of version N" is therefore the pairs as of the latest chain history row of
version N (annotator.versions rebuilds it); `chain_undo` restores it as a new version. Rows
written outside these services (bulk_create by machine drafts or data loaders) get a baseline
history row on the first save, so the version they belong to can be restored too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext as _

from projects.refusals import Refused

from . import versions
from .concurrency import StaleVersion, version_claim
from .lifecycle import EDITABLE, item_transition
from .models import ItemStatus, Origin, QAChain, QAPair
from .submission import Submitted, item_hand_on

# Generous limits: they stop a runaway paste or script, never a real annotator.
MAX_TURNS = 30
MAX_TEXT_CHARS = 4000
UNDO_REASON = re.compile(r"^undo:(\d+)$")


class ChainInvalid(Refused):
    """The turns sent cannot be saved; `errors` says which turn and field, in words."""

    status, code = 422, "chain_invalid"

    def __init__(self, errors: list[dict]):
        super().__init__("; ".join(e["message"] for e in errors))
        self.errors = errors

    @property
    def details(self) -> dict:
        return {"errors": self.errors}


class ChainNotEditable(Refused):
    """The chain is past the stage where it may be edited (submitted, examining, accepted …)."""

    status, code = 409, "not_editable"


class NothingToUndo(Refused):
    """There is no earlier version whose content is known."""

    status, code = 409, "nothing_to_undo"


@dataclass
class ChainSaved:
    chain: QAChain
    pairs: list[QAPair]
    warnings: list[str] = field(default_factory=list)
    restored_version: int | None = None  # set by chain_undo


def chain_clip_ids(video) -> set[int]:
    """The clips of `video` that carry a chain (videos.clips keeps them when re-planning clips)."""
    return set(QAChain.objects.filter(clip__video=video).values_list("clip_id", flat=True))


# --- validation --------------------------------------------------------------------------------


def _skill_codes(project) -> list[str]:
    return [s["code"] for s in project.taxonomy("skills")]


def _clean_turns(*, chain: QAChain, pairs, existing_ids: set[int]) -> list[dict]:
    """Turn the editor's list into clean rows, or raise ChainInvalid naming every problem."""
    if not isinstance(pairs, list):
        raise ChainInvalid([{"turn": None, "field": "pairs", "message": _("The turns must be sent as a list.")}])
    errors: list[dict] = []
    if len(pairs) > MAX_TURNS:
        errors.append(
            {"turn": None, "field": "pairs", "message": _("A chain holds at most %(max)s turns.") % {"max": MAX_TURNS}}
        )
    skills = set(_skill_codes(chain.project))
    seen: set[int] = set()
    rows = []
    for number, raw in enumerate(pairs, start=1):
        if not isinstance(raw, dict):
            errors.append(
                {"turn": number, "field": "", "message": _("Turn %(n)s is not a question and answer.") % {"n": number}}
            )
            continue
        pair_id = raw.get("id")
        if pair_id in ("", None):
            pair_id = None
        elif isinstance(pair_id, bool) or not isinstance(pair_id, int) or pair_id not in existing_ids:
            errors.append(
                {
                    "turn": number,
                    "field": "id",
                    "message": _("Turn %(n)s refers to a turn that is no longer in this chain; reload to see it.")
                    % {"n": number},
                }
            )
            pair_id = None
        elif pair_id in seen:
            errors.append({"turn": number, "field": "id", "message": _("Turn %(n)s appears twice.") % {"n": number}})
        else:
            seen.add(pair_id)
        row = {"id": pair_id}
        for name, missing, too_long in (
            (
                "question",
                _("Turn %(n)s needs a question."),
                _("Turn %(n)s: the question is longer than %(max)s characters."),
            ),
            (
                "answer",
                _("Turn %(n)s needs an answer."),
                _("Turn %(n)s: the answer is longer than %(max)s characters."),
            ),
        ):
            value = raw.get(name)
            text = value.strip() if isinstance(value, str) else ""
            if not text:
                errors.append({"turn": number, "field": name, "message": missing % {"n": number}})
            elif len(text) > MAX_TEXT_CHARS:
                errors.append(
                    {"turn": number, "field": name, "message": too_long % {"n": number, "max": MAX_TEXT_CHARS}}
                )
            row[name] = text
        skill = raw.get("skill") or ""
        if not isinstance(skill, str) or (skill and skill not in skills):
            errors.append(
                {
                    "turn": number,
                    "field": "skill",
                    "message": _("Turn %(n)s: %(skill)s is not one of this project's skills (%(skills)s).")
                    % {"n": number, "skill": repr(skill), "skills": ", ".join(sorted(skills))},
                }
            )
            skill = ""
        row["skill"] = skill
        rows.append(row)
    if errors:
        raise ChainInvalid(errors)
    return rows


def chain_warnings(*, chain: QAChain, pairs) -> list[str]:
    """What the annotator should know but may still save: turn count outside the project's range, untagged turns."""
    project = chain.project
    warnings = []
    n = len(pairs)
    low, high = project.chain_min_turns, project.chain_max_turns
    if n < low or n > high:
        wanted = f"{low}" if low == high else f"{low}–{high}"
        warnings.append(
            _("This project asks for %(wanted)s turns per chain; this one has %(n)s.") % {"wanted": wanted, "n": n}
        )
    untagged = [str(i + 1) for i, p in enumerate(pairs) if not _get(p, "skill")]
    if untagged:
        warnings.append(
            ngettext("No skill tagged on turn %(turns)s.", "No skill tagged on turns %(turns)s.", len(untagged))
            % {"turns": ", ".join(untagged)}
        )
    return warnings


def _get(pair, name):
    return pair[name] if isinstance(pair, dict) else getattr(pair, name)


# --- proper-name hint --------------------------------------------------------------------------

# CJK scripts have no capitals and no spaces between words, so a Latin word written against them
# ("视频里Tom在做什么") must end where they begin: they are excluded from a word's letters.
_CJK = "\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
# A word that starts with a capital and goes on in lower case (so "TV" or "II" are not names);
# an optional possessive is split off.
_WORD = re.compile(rf"[^\W\d_{_CJK}][^\W{_CJK}'’-]*(?:['’-][^\W{_CJK}]+)*", re.UNICODE)
# Sentence ends in Latin and CJK punctuation (full-width 。！？：； and corner quotes).
_SENTENCE_END = re.compile(r"[.!?:;\"“”。！？：；「」『』]\s*$")
# Capitalised words that are not names wherever they stand.
_NOT_NAMES = frozenset(
    {
        "I",
        "I'm",
        "I've",
        "I'll",
        "I'd",
        "Mr",
        "Mrs",
        "Ms",
        "Dr",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "English",
        "Chinese",
    }
)
# Common English words a writer capitalises mid-sentence in mixed-language text, where an English
# phrase inside Chinese starts with a capital ("视频里 The man 在做什么？"): never names.
_COMMON_WORDS_TEXT = """
    A An The This That These Those There Here It Its He She His Her Him They Them Their We Us Our You Your
    Me My Who Whom Whose What Which Why How When Where Is Are Was Were Be Been Do Does Did Done Can Could
    Will Would Shall Should May Might Must Have Has Had And Or But Not No Yes If Then So Because After
    Before While During Of In On At To For From With Without By About Into Over Under Up Down Out Off
    All Any Each Every Some Many Much More Most Other Another Both First Last Next Now Later Again Also
    Only Just Very Too One Two Three Man Woman Boy Girl People Person Video Scene Clip Camera Screen Okay OK
"""
_COMMON_WORDS = frozenset(_COMMON_WORDS_TEXT.split())


def _capitalised_words(text: str) -> list[tuple[str, bool]]:
    """(word, sentence_initial) for each capitalised word, possessives stripped."""
    found = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        for suffix in ("'s", "’s"):
            if word.endswith(suffix):
                word = word[: -len(suffix)]
        if len(word) < 2 or not word[0].isupper() or not word[1:].replace("-", "").islower():
            continue
        before = text[: match.start()]
        initial = not before.strip() or bool(_SENTENCE_END.search(before))
        found.append((word, initial))
    return found


def proper_name_hints(*, turns: list[tuple[str, str]], skill_words: set[str] = frozenset()) -> dict[int, list[str]]:
    """Turns (0-based) whose question repeats a proper name already used in an earlier turn.

    SVBench writes later turns with pronouns ("she", "they") instead of repeating a name, so a
    chain reads as one dialogue. The heuristic, on the questions and answers in order:

    - a *name* is a word that starts with a capital letter and continues in lower case, seen at
      least once somewhere in the chain *not* at the start of a sentence (so "What" or "Why" never
      become names), and is neither a skill word (the project's skill names, e.g. "Inference") nor a
      common capitalised non-name (I, weekdays, months, languages) nor a common English word
      (mixed-language text capitalises "The" or "What" where an English phrase starts mid-sentence);
    - words are Latin-script runs: CJK characters end a word, and CJK punctuation ends a sentence;
    - a later turn gets a hint for each name that already appeared in an earlier turn's question or
      answer and appears again in this turn's *question* (at any position, possessive included).

    Answers may name people freely (they state facts); the hint is about how the question reads.
    It is a hint, never an error: some names (a show, a city) are right to repeat.
    """
    stop = _NOT_NAMES | _COMMON_WORDS | {w for w in skill_words if w[:1].isupper()}
    words = [(_capitalised_words(q), _capitalised_words(a)) for q, a in turns]
    names = {w for q, a in words for w, initial in q + a if not initial and w not in stop}
    seen: set[str] = set()
    hints: dict[int, list[str]] = {}
    for index, (q_words, a_words) in enumerate(words):
        repeated = []
        for word, _offset in q_words:
            if word in names and word in seen and word not in repeated:
                repeated.append(word)
        if repeated:
            hints[index] = repeated
        seen.update(w for w, _ in q_words + a_words if w in names)
    return hints


def skill_words(project) -> set[str]:
    return {word for s in project.taxonomy("skills") for word in re.findall(r"\w+", s.get("name", ""))}


def chain_hints(*, chain: QAChain, pairs) -> dict[int, list[str]]:
    turns = [(_get(p, "question"), _get(p, "answer")) for p in pairs]
    return proper_name_hints(turns=turns, skill_words=skill_words(chain.project))


# --- history ------------------------------------------------------------------------------------


def _history_baseline(*, chain: QAChain, pairs: list[QAPair]) -> None:
    """Give the content as it stands a history entry if it has none (rows made by bulk_create).

    A pair without any history row has not changed since it was created, so its baseline row is
    dated at the chain's creation: it then belongs to every version recorded since, including the
    first. A version without a chain row gets one dated just now, before this save's own rows.
    """
    with_history = set(QAPair.history.filter(id__in=[p.pk for p in pairs]).values_list("id", flat=True).distinct())
    missing = [p for p in pairs if p.pk not in with_history]
    if missing:
        QAPair.history.bulk_history_create(missing, default_date=chain.created_at, default_change_reason="baseline")
    if not QAChain.history.filter(id=chain.pk, version=chain.version).exists():
        stamp = timezone.now() - timedelta(microseconds=1)
        QAChain.history.bulk_history_create([chain], default_date=stamp, default_change_reason="baseline")


def chain_content_at(*, chain: QAChain, version: int) -> list[dict]:
    """The turns of `chain` as they were at `version`, in order: [{id, question, answer, skill}]."""
    try:
        turns = versions.item_content_at(chain, version)["turns"]
    except versions.VersionUnknown:
        draft = (chain.machine_draft or {}).get("pairs") if version == 1 else None
        if isinstance(draft, list) and draft:
            # Version 1 of a machine draft is what the machine proposed.
            return [
                {
                    "id": None,
                    "question": p.get("question", ""),
                    "answer": p.get("answer", ""),
                    "skill": p.get("skill", ""),
                }
                for p in draft
                if isinstance(p, dict)
            ]
        raise NothingToUndo(
            _("Version %(version)s of this chain was not recorded, so it cannot be restored.") % {"version": version}
        ) from None
    return [{"id": t["id"], "question": t["question"], "answer": t["answer"], "skill": t["skill"]} for t in turns]


def _undo_target(chain: QAChain) -> int:
    """The version an undo goes back to: one before this one, or before the one it restored."""
    record = (
        QAChain.history.filter(id=chain.pk, version=chain.version, history_change_reason__startswith="undo:")
        .order_by("-history_date", "-history_id")
        .first()
    )
    match = UNDO_REASON.match(record.history_change_reason) if record else None
    base = int(match.group(1)) if match else chain.version
    return base - 1


# --- writes -------------------------------------------------------------------------------------


def _lock(chain: QAChain) -> QAChain:
    locked = QAChain.objects.select_for_update(of=("self",)).select_related("project").get(pk=chain.pk)
    if locked.status not in EDITABLE:
        raise ChainNotEditable(
            _("This chain is %(status)s: it can be edited only while it is a draft, being annotated or being revised.")
            % {"status": locked.get_status_display().lower()}
        )
    return locked


def _apply(*, chain: QAChain, rows: list[dict], user, stamp, reason: str = "") -> list[QAPair]:
    """Make the chain's pairs exactly `rows`, in order; unchanged pairs are left alone."""
    current = {p.pk: p for p in QAPair.objects.filter(chain=chain)}
    keep = {r["id"] for r in rows if r["id"] is not None}
    for pair in current.values():
        if pair.pk not in keep:
            pair._history_date = stamp
            pair._history_user = user
            pair.delete()  # its relations go with it (and are recorded in their history)
    result = []
    for index, row in enumerate(rows):
        pair = current.get(row["id"]) if row["id"] is not None else None
        if pair is None:
            # A new turn, or one an undo brings back: a restored pair keeps its old id.
            pair = QAPair(chain=chain, pk=row["id"], index=index)
            changed = True
        else:
            changed = (pair.index, pair.question, pair.answer, pair.skill) != (
                index,
                row["question"],
                row["answer"],
                row["skill"],
            )
        pair.index, pair.question, pair.answer, pair.skill = index, row["question"], row["answer"], row["skill"]
        if changed:
            pair._history_date = stamp
            pair._history_user = user
            pair._change_reason = reason or None
            pair.save(force_insert=pair.pk not in current)
        result.append(pair)
    chain._history_date = stamp
    chain._history_user = user
    chain._change_reason = reason or None
    chain.save(update_fields=["updated_at"])
    return result


def _write(*, chain: QAChain, expected_version: int, rows_for, user, reason_for=None) -> ChainSaved:
    with transaction.atomic():
        locked = _lock(chain)
        before = list(QAPair.objects.filter(chain=locked).order_by("index", "pk"))
        # Check the version before anything is written, so a stale save changes nothing at all.
        if locked.version != expected_version:
            raise StaleVersion(item=locked, expected=expected_version)
        _history_baseline(chain=locked, pairs=before)
        rows = rows_for(locked)
        reason = reason_for(locked) if reason_for else ""
        version_claim(item=locked, expected=expected_version, user=user)
        if locked.status == ItemStatus.DRAFT:
            item_transition(item=locked, to_status=ItemStatus.ANNOTATING, actor=user, expect_from=ItemStatus.DRAFT)
        pairs = _apply(chain=locked, rows=rows, user=user, stamp=timezone.now(), reason=reason)
    chain.refresh_from_db()
    return ChainSaved(chain=chain, pairs=pairs, warnings=chain_warnings(chain=chain, pairs=pairs))


class ChainExists(Refused):
    """The clip already carries a chain (one per clip): edit that one instead."""

    status, code = 409, "chain_exists"

    def __init__(self, *, chain: QAChain):
        super().__init__(
            gettext("This clip already has a chain (id %(id)s); edit that one instead.") % {"id": chain.pk}
        )
        self.chain_id = chain.pk

    @property
    def details(self) -> dict:
        return {"chain_id": self.chain_id}


def chain_create(*, clip, user, turns: list[dict]) -> ChainSaved:
    """A chain written by hand on `clip`, with `turns` ([{question, answer, skill}] in order).

    It starts as a person's work (human origin, annotating, `user` its author), logged like a
    machine draft picked up. Raises ChainInvalid (nothing created) or ChainExists.
    """
    project = clip.video.project
    with transaction.atomic():
        # One chain per clip: locking the clip makes two creates on it meet here, not at the constraint.
        type(clip).objects.select_for_update().filter(pk=clip.pk).first()
        existing = QAChain.objects.filter(clip=clip).first()
        if existing is not None:
            raise ChainExists(chain=existing)
        author = user if getattr(user, "is_authenticated", False) else None
        chain = QAChain(
            project=project,
            clip=clip,
            status=ItemStatus.DRAFT,
            origin=Origin.HUMAN,
            human_edited=True,
            author=author,
        )
        rows = _clean_turns(chain=chain, pairs=turns, existing_ids=set())
        chain._history_user = author
        chain.save()
        item_transition(item=chain, to_status=ItemStatus.ANNOTATING, actor=user, expect_from=ItemStatus.DRAFT)
        pairs = _apply(chain=chain, rows=rows, user=author, stamp=timezone.now())
    chain.refresh_from_db()
    chain.project = project
    return ChainSaved(chain=chain, pairs=pairs, warnings=chain_warnings(chain=chain, pairs=pairs))


def chain_save(*, chain: QAChain, expected_version: int, pairs: list[dict], user) -> ChainSaved:
    """Replace the chain's turns with `pairs` (add, edit, delete and reorder in one save).

    `pairs` is the whole list in order: [{"id": pair id or None for a new turn, "question",
    "answer", "skill"}]. Raises ChainInvalid (nothing saved), ChainNotEditable, or StaleVersion
    (someone saved after `expected_version`; its `item` is the chain as it is now). A machine draft
    becomes "annotating" on its first human save.
    """

    def rows_for(locked):
        existing = set(QAPair.objects.filter(chain=locked).values_list("pk", flat=True))
        return _clean_turns(chain=locked, pairs=pairs, existing_ids=existing)

    return _write(chain=chain, expected_version=expected_version, rows_for=rows_for, user=user)


def chain_undo(*, chain: QAChain, user, expected_version: int) -> ChainSaved:
    """Bring back the content of the version before the current one, as a new version.

    Undo again walks further back (an undo remembers which version it restored). Turns deleted
    since come back with their old ids; their relations do too when history still has them.
    """
    state: dict = {}

    def rows_for(locked):
        target = _undo_target(locked)
        if target < 1:
            raise NothingToUndo(_("There is no earlier version of this chain to go back to."))
        rows = chain_content_at(chain=locked, version=target)
        current = list(QAPair.objects.filter(chain=locked).order_by("index", "pk"))
        if rows and all(r["id"] is None for r in rows):
            # The machine draft has no pair ids: reuse today's pairs by position, so links survive.
            for row, pair in zip(rows, current, strict=False):
                row["id"] = pair.pk
        state["target"] = target
        state["restored_ids"] = {r["id"] for r in rows if r["id"] is not None} - {p.pk for p in current}
        return rows

    saved = _write(
        chain=chain,
        expected_version=expected_version,
        rows_for=rows_for,
        user=user,
        reason_for=lambda locked: f"undo:{state['target']}",
    )
    if state["restored_ids"]:
        _relations_restore(pair_ids=state["restored_ids"])
    saved.restored_version = state["target"]
    return saved


def _relations_restore(*, pair_ids: set[int]) -> None:
    """Recreate relations that went with pairs an undo brought back, as history last saw them."""
    from django.db.models import Q

    from .models import ChainPair, Relation

    records = Relation.history.filter(Q(from_pair_id__in=pair_ids) | Q(to_pair_id__in=pair_ids))
    latest = {}
    for record in records.order_by("history_date", "history_id"):
        latest[record.id] = record
    gone = [r for r in latest.values() if r.history_type == "-"]
    if not gone:
        return
    alive_pairs = set(
        QAPair.objects.filter(pk__in={r.from_pair_id for r in gone} | {r.to_pair_id for r in gone}).values_list(
            "pk", flat=True
        )
    )
    chain_pairs = set(ChainPair.objects.filter(pk__in={r.chain_pair_id for r in gone}).values_list("pk", flat=True))
    taken = set(
        Relation.objects.filter(chain_pair_id__in=chain_pairs).values_list(
            "chain_pair_id", "from_pair_id", "to_pair_id"
        )
    )
    for record in gone:
        key = (record.chain_pair_id, record.from_pair_id, record.to_pair_id)
        # Both ends and the chain pair must exist again, and no newer link may have taken the place.
        if record.chain_pair_id not in chain_pairs or not {record.from_pair_id, record.to_pair_id} <= alive_pairs:
            continue
        if key in taken or Relation.objects.filter(pk=record.id).exists():
            continue
        record.instance.save(force_insert=True)
        taken.add(key)


def chain_turn_rewrite(*, pair_id: int, question: str, answer: str, user, reason: str = "") -> QAPair:
    """Change one turn's text as a new version of its chain: the relation editor's rewrite of a later QA.

    No editability check: relations are rewritten once chains are annotated, so the chain may be
    submitted or accepted by then. The chain's version still moves on, so a chain editor open on
    the old text gets a conflict instead of silently writing it back. Call inside the caller's
    transaction, after locking the chain pair (locks: chain pair, then chain).
    """
    pair = QAPair.objects.select_related("chain").get(pk=pair_id)
    chain = QAChain.objects.select_for_update(of=("self",)).select_related("project").get(pk=pair.chain_id)
    _history_baseline(chain=chain, pairs=list(QAPair.objects.filter(chain=chain)))
    version_claim(item=chain, expected=chain.version, user=None)
    stamp = timezone.now()
    pair = QAPair.objects.get(pk=pair_id)
    if (pair.question, pair.answer) != (question, answer):
        pair.question, pair.answer = question, answer
        pair._history_date = stamp
        pair._history_user = user
        pair._change_reason = reason or None
        pair.save(update_fields=["question", "answer"])
    chain._history_date = stamp
    chain._history_user = user
    chain._change_reason = reason or None
    chain.save(update_fields=["updated_at"])
    return pair


def chain_submit(*, chain: QAChain, user, expected_version: int) -> Submitted:
    """Hand the chain on, as it is at `expected_version` (the editor flushes its last save first):
    to the LLM judge when the project's gate covers chains, else to examiners (annotator.submission)."""
    with transaction.atomic():
        locked = _lock(chain)
        if locked.version != expected_version:
            raise StaleVersion(item=locked, expected=expected_version)
        pairs = list(QAPair.objects.filter(chain=locked).order_by("index"))
        if not pairs:
            raise ChainInvalid([{"turn": None, "field": "pairs", "message": "A chain needs at least one turn."}])
        # Rows saved by other paths are checked the same way before they leave the annotator.
        _clean_turns(
            chain=locked,
            pairs=[{"id": p.pk, "question": p.question, "answer": p.answer, "skill": p.skill} for p in pairs],
            existing_ids={p.pk for p in pairs},
        )
        if locked.author_id is None and getattr(user, "is_authenticated", False):
            # Submitting a machine draft as it stands vouches for it: the submitter is its author
            # (so they do not examine it themselves).
            QAChain.objects.filter(pk=locked.pk).update(author=user)
        result = item_hand_on(item=locked, user=user)
    chain.refresh_from_db()
    return result
