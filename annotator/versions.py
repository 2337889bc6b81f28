"""Item versions: what an item held at each version, the diff between two versions, and restore.

Each item kind declares its content fields once, here: a QA chain (its turns), the relations of a
chain pair (its links) and an MCQ (its own fields, its videos and moments). The reviewer's history
page and admin revert, the examiner's diffs and the release build all read these declarations.

Every content write bumps the item's `version` (annotator.concurrency.version_claim) and leaves
django-simple-history rows: on the item (QAChain, MCQ, ChainPair) and on its parts (QAPair;
MCQVideo and ReferredMoment; Relation). The content of version N is rebuilt from those rows:

- the item's own fields (MCQs) come from its latest history row of version N or before;
- each part row belongs to a version: the one its change reason names ("mcq:v7", "pair:v3"),
  else the version of the item's latest row at or before it (QA chain writes stamp the chain
  row and its pairs alike); the parts of version N are the rows of versions up to N, replayed;
- parts created without history (bulk_create by machine drafts) count from the item's creation,
  as `annotator.chains` assumes too; a link first recorded by an edit is, before that edit, the
  machine candidate it was created as.

Link writes claim the chain pair's version without a chain pair row, so `link_version_tag`
(a simple-history signal) tags each link row with that version. A version that changed nothing
recorded (a machine step's direct UPDATE) shows up folded into the next one. The current version
is always the live rows. All of an item's versions are rebuilt from a fixed number of queries.

`content_restore` writes an older version's content as a new version; whoever asks for it (an
admin's revert in reviewer.history) decides who may and what to log.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from difflib import SequenceMatcher
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from simple_history.utils import bulk_create_with_history

from llm.prompts import OPTION_LETTERS
from projects.refusals import Refused
from videos.models import Video

from .concurrency import StaleVersion, version_claim
from .models import (
    MCQ,
    ChainPair,
    ItemStatus,
    MCQVideo,
    Origin,
    QAChain,
    QAPair,
    ReferredMoment,
    Relation,
    RelationDecision,
)

# The kinds of versioned item (the values reviewer.models.ItemKind stores).
QA_CHAIN, CHAIN_PAIR, MCQ_KIND = "qa_chain", "chain_pair", "mcq"

# History reasons: a row written for version N of an MCQ's parts ("mcq:v7"); an admin's revert.
MCQ_VERSION_TAG = "mcq:v"
REASON_REVERT = "admin_revert"
BASELINE = "baseline"


# --- what each kind holds: declared once ---------------------------------------------------------------


@dataclass(frozen=True)
class ContentField:
    """One content field of an item kind.

    `label` names it in diffs (no label: diffs show it some other way, or not at all); `text` asks
    for a word-level diff; `diff_as` is the name the diff gives what it shows for it.
    """

    name: str
    label: str = ""
    text: bool = False
    diff_as: str = ""


MCQ_CONTENT = (
    ContentField("question", "Question", text=True),
    ContentField("referring_query", "Referring query", text=True),
    ContentField("referring_start"),
    ContentField("referring_end"),
    ContentField("question_wo_referring_query", "Question without the referring query", text=True),
    ContentField("options"),  # a diff section of its own
    ContentField("correct_index", "Correct option", diff_as="correct"),  # shown as the option's letter and text
    ContentField("category", "Category"),
    ContentField("level", "Level"),
    ContentField("task_group", "Task group"),
    ContentField("question_translation", "Question (translation)", text=True),
)
TURN_CONTENT = (
    ContentField("question", "Question", text=True),
    ContentField("answer", "Answer", text=True),
    ContentField("skill", "Skill"),
    ContentField("question_translation", "Question (translation)", text=True),
    ContentField("answer_translation", "Answer (translation)", text=True),
)
LINK_CONTENT = (
    ContentField("from_pair_id"),
    ContentField("to_pair_id"),
    ContentField("relation_type", "Type"),
    ContentField("decision", "Decision"),
    ContentField("rationale", "Rationale", text=True),
    ContentField("rewritten_question", "Rewritten question", text=True),
    ContentField("rewritten_answer", "Rewritten answer", text=True),
    ContentField("original_question"),
    ContentField("original_answer"),
    ContentField("origin"),
)

MCQ_FIELDS = tuple(f.name for f in MCQ_CONTENT)
TURN_FIELDS = tuple(f.name for f in TURN_CONTENT)
LINK_FIELDS = tuple(f.name for f in LINK_CONTENT)


def _diff_fields(declared: tuple[ContentField, ...]) -> list[tuple[str, str, bool]]:
    return [(f.diff_as or f.name, f.label, f.text) for f in declared if f.label]


class VersionUnknown(Refused):
    """That version of the item left no record, so its content cannot be shown or restored."""

    status, code = 404, "version_unknown"


class RestoreRefused(Refused):
    """The restore cannot be done; the message says why, and nothing was written."""

    status, code = 409, "restore_refused"


# --- what one version holds ----------------------------------------------------------------------------


def _turn(row) -> dict:
    return {"id": row.id, "index": row.index, **{f: getattr(row, f) for f in TURN_FIELDS}}


def _video_link(row) -> dict:
    return {"id": row.id, "video_id": row.video_id, "role": row.role, "order": row.order}


def _moment(row) -> dict:
    return {
        "id": row.id,
        "video_id": row.video_id,
        "time_s": row.time_s,
        "frame_index": row.frame_index,
        "order": row.order,
        "note": row.note,
    }


def _link(row) -> dict:
    return {"id": row.id, **{f: getattr(row, f) for f in LINK_FIELDS}}


def _link_as_created(link: dict) -> dict:
    """A machine link before its first recorded edit: the candidate the draft step made."""
    if link["origin"] != Origin.MACHINE:
        return link
    return {**link, "decision": RelationDecision.CANDIDATE, "rewritten_question": "", "rewritten_answer": ""}


@dataclass(frozen=True)
class _Part:
    name: str
    model: type
    fk: str
    as_dict: Callable[[Any], dict]
    order: Callable[[dict], tuple]
    as_created: Callable[[dict], dict] = lambda d: d


@dataclass(frozen=True)
class _Spec:
    kind: str
    model: type
    parts: tuple[_Part, ...]
    fields: tuple[str, ...] = ()


SPECS = {
    QA_CHAIN: _Spec(QA_CHAIN, QAChain, (_Part("turns", QAPair, "chain_id", _turn, lambda d: (d["index"], d["id"])),)),
    MCQ_KIND: _Spec(
        MCQ_KIND,
        MCQ,
        (
            _Part("videos", MCQVideo, "mcq_id", _video_link, lambda d: (d["order"], d["id"])),
            _Part("moments", ReferredMoment, "mcq_id", _moment, lambda d: (d["order"], d["time_s"], d["id"])),
        ),
        MCQ_FIELDS,
    ),
    CHAIN_PAIR: _Spec(
        CHAIN_PAIR,
        ChainPair,
        (_Part("links", Relation, "chain_pair_id", _link, lambda d: (d["id"],), _link_as_created),),
    ),
}
_SPEC_OF_MODEL = {spec.model: spec for spec in SPECS.values()}


def item_kind(item) -> str:
    """Which kind of versioned item this is: "qa_chain", "chain_pair" or "mcq"."""
    return _SPEC_OF_MODEL[type(item)].kind


def _content(kind: str, fields_from, parts: dict[str, list[dict]]) -> dict:
    """One version's content in the shape diffs and reverts use; list order is the display order."""
    spec = SPECS[kind]
    content: dict[str, Any] = {f: _copy(getattr(fields_from, f)) for f in spec.fields}
    for part in spec.parts:
        rows = sorted(parts.get(part.name, []), key=part.order)
        if part.name == "turns":
            rows = [{k: v for k, v in r.items() if k != "index"} for r in rows]
        elif part.name in ("videos", "moments"):
            # Recreated on every save: their ids and order numbers carry no meaning, their position does.
            rows = [{k: v for k, v in r.items() if k not in ("id", "order")} for r in rows]
        content[part.name] = rows
    return content


def _copy(value):
    return list(value) if isinstance(value, list) else value


# --- the timeline ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContentVersion:
    """One content version of an item: what it held, who made it and when."""

    version: int
    at: datetime | None
    user: Any
    status: str
    reasons: tuple[str, ...]
    content: dict
    current: bool = False

    @property
    def status_label(self) -> str:
        return ItemStatus(self.status).label if self.status in ItemStatus.values else self.status

    @property
    def reason_labels(self) -> list[str]:
        return [_reason_label(r) for r in self.reasons]


def _reason_label(reason: str) -> str:
    kind, _sep, rest = reason.partition(":")
    labels = {
        "undo": f"undo to version {rest}",
        REASON_REVERT: f"admin revert to version {rest}",
        "rewrite": f"relation rewrite ({rest})",
        "unrewrite": f"relation rewrite withdrawn ({rest})",
    }
    return labels.get(kind, reason)


@dataclass
class ItemTimeline:
    """Every recorded content version of one item, by version number."""

    item: Any
    kind: str
    versions: dict[int, ContentVersion] = field(default_factory=dict)

    def get(self, version: int) -> ContentVersion:
        try:
            return self.versions[version]
        except KeyError:
            raise VersionUnknown(
                _("Version %(version)s of this item left no record, so it cannot be shown or restored.")
                % {"version": version}
            ) from None


# A part's history row may name the version of its item it was written for ("mcq:v7": MCQ saves tag
# their videos and moments; "pair:v3": links, tagged by `link_version_tag` below).
_VERSION_TAG = re.compile(r"^(?:mcq|pair):v(\d+)$")
PAIR_TAG = "pair:v"


def _attributed_versions(part_rows: list, item_rows: list) -> list[int]:
    """The item version each part row belongs to: its tag, else the item's latest row at or before it.

    Writers that stamp the item row and its parts alike (QA chains) fall out exactly; a part row older
    than the item's first row (a baseline dated at creation) belongs to version 1.
    """
    dates = [r.history_date for r in item_rows]
    versions = [r.version for r in item_rows]
    out = []
    for row in part_rows:
        tag = _VERSION_TAG.match(row.history_change_reason or "")
        if tag:
            out.append(int(tag.group(1)))
            continue
        k = bisect_right(dates, row.history_date) - 1
        out.append(versions[k] if k >= 0 else 1)
    return out


def item_timeline(item) -> ItemTimeline:
    """All of the item's content versions, rebuilt from its history rows (a fixed number of queries)."""
    kind = item_kind(item)
    spec = SPECS[kind]
    item_rows = list(
        spec.model.history.filter(id=item.pk).select_related("history_user").order_by("history_date", "history_id")
    )
    part_rows: dict[str, list[tuple[int, Any]]] = {}
    for p in spec.parts:
        rows = list(
            p.model.history.filter(**{p.fk: item.pk})
            .select_related("history_user")
            .order_by("history_date", "history_id")
        )
        part_rows[p.name] = list(zip(_attributed_versions(rows, item_rows), rows, strict=True))
    live = {p.name: [p.as_dict(obj) for obj in p.model.objects.filter(**{p.fk: item.pk})] for p in spec.parts}
    recorded = {name: {r.id for _, r in rows} for name, rows in part_rows.items()}
    unrecorded = {name: [d for d in live[name] if d["id"] not in recorded[name]] for name in live}

    own: dict[int, list] = defaultdict(list)
    for row in item_rows:
        own[row.version].append(row)
    touched: dict[int, list] = defaultdict(list)
    for rows in part_rows.values():
        for version, row in rows:
            if row.history_change_reason != BASELINE:
                touched[version].append(row)

    timeline = ItemTimeline(item=item, kind=kind)
    latest_row = None
    for version in sorted(v for v in {*own, *touched, item.version} if v <= item.version):
        rows_of_version = own.get(version, [])
        if rows_of_version:
            latest_row = rows_of_version[-1]
        current = version == item.version
        if current:
            content = _content(kind, item, live)
        else:
            parts = {p.name: _parts_at(part_rows[p.name], version, p) + unrecorded[p.name] for p in spec.parts}
            content = _content(kind, latest_row if latest_row is not None else item, parts)
        changes = sorted(rows_of_version + touched.get(version, []), key=lambda r: r.history_date)
        user = next((r.history_user for r in rows_of_version if r.history_user_id), None)
        if user is None:
            user = next((r.history_user for r in changes if r.history_user_id), None)
        reasons = tuple(
            dict.fromkeys(
                r.history_change_reason for r in rows_of_version if r.history_change_reason not in (None, "", BASELINE)
            )
        )
        timeline.versions[version] = ContentVersion(
            version=version,
            at=changes[0].history_date if changes else item.updated_at,
            user=user,
            status=item.status if current or latest_row is None else latest_row.status,
            reasons=reasons,
            content=content,
            current=current,
        )
    return timeline


def _parts_at(rows: list[tuple[int, Any]], version: int, part: _Part) -> list[dict]:
    """The parts that existed at `version`, each as its latest history row of that version or before."""
    by_id: dict[int, list[tuple[int, Any]]] = defaultdict(list)
    for attributed, row in rows:
        by_id[row.id].append((attributed, row))
    alive = []
    for history in by_id.values():
        before = [row for attributed, row in history if attributed <= version]
        if before:
            if before[-1].history_type != "-":
                alive.append(part.as_dict(before[-1]))
        elif history[0][1].history_type != "+":
            # Created without history and first recorded later (edited or deleted): it existed already.
            alive.append(part.as_created(part.as_dict(history[0][1])))
    return alive


def link_version_tag(sender, instance, history_instance, **kwargs) -> None:
    """Tag each history row of a link with its chain pair's version (simple-history signal).

    Link writes claim the chain pair's version but leave no chain pair row, so without the tag a
    link change could not be told apart from the next one. Connected in AnnotatorConfig.ready.
    """
    if history_instance.history_change_reason:
        return
    version = ChainPair.objects.filter(pk=instance.chain_pair_id).values_list("version", flat=True).first()
    if version is not None:
        history_instance.history_change_reason = f"{PAIR_TAG}{version}"


def item_versions(item) -> list[ContentVersion]:
    """The item's content versions, oldest first; the last one is the current content."""
    return [v for _, v in sorted(item_timeline(item).versions.items())]


def item_content_at(item, version: int) -> dict:
    return item_timeline(item).get(version).content


# --- diffs -------------------------------------------------------------------------------------------------

# A token is a word (a CJK character is one: SVBench and LiViBench were written in Chinese) or a
# punctuation mark, with the spaces before it, so an inserted or changed word reads as one change.
_TOKEN = re.compile(r"\s*(?:[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]|\w+|[^\w\s])|\s+")


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """[(op, text)] with op "equal", "delete" or "insert", word by word; joins back to either text."""
    a, b = _TOKEN.findall(old or ""), _TOKEN.findall(new or "")
    ops: list[tuple[str, str]] = []

    def push(op: str, text: str) -> None:
        if not text:
            return
        if ops and ops[-1][0] == op:
            ops[-1] = (op, ops[-1][1] + text)
        else:
            ops.append((op, text))

    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            push("equal", "".join(a[i1:i2]))
        else:
            push("delete", "".join(a[i1:i2]))
            push("insert", "".join(b[j1:j2]))
    return ops


@dataclass(frozen=True)
class FieldDiff:
    name: str
    label: str
    old: Any
    new: Any
    words: tuple[tuple[str, str], ...] = ()  # for text: the word-level diff

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def as_dict(self) -> dict:
        return {"field": self.name, "old": self.old, "new": self.new, "words": [list(w) for w in self.words]}


@dataclass(frozen=True)
class EntryDiff:
    """One turn, option, video, moment or link: added, removed, changed or unchanged (and maybe moved)."""

    label: str
    change: str
    moved: bool
    old_position: int | None
    new_position: int | None
    fields: tuple[FieldDiff, ...]

    @property
    def changed(self) -> bool:
        return self.change != "unchanged" or self.moved

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "change": self.change,
            "moved": self.moved,
            "old_position": self.old_position,
            "new_position": self.new_position,
            "fields": [f.as_dict() for f in self.fields],
        }


@dataclass(frozen=True)
class DiffSection:
    name: str
    title: str
    entries: tuple[EntryDiff, ...]

    def count(self, change: str) -> int:
        return sum(1 for e in self.entries if e.change == change)

    @property
    def moved(self) -> int:
        return sum(1 for e in self.entries if e.moved)


@dataclass(frozen=True)
class ItemDiff:
    kind: str
    old_label: str
    new_label: str
    fields: tuple[FieldDiff, ...]  # the item's own fields that changed
    sections: tuple[DiffSection, ...]

    @property
    def changed(self) -> bool:
        return bool(self.fields) or any(e.changed for s in self.sections for e in s.entries)

    @property
    def summary(self) -> str:
        bits = [f"{f.label.lower()} changed" for f in self.fields]
        for section in self.sections:
            noun = section.title.lower()
            for change in ("changed", "added", "removed"):
                n = section.count(change)
                if n:
                    bits.append(f"{n} {noun[:-1] if n == 1 else noun} {change}")
            if section.moved:
                n = section.moved
                bits.append(f"{n} {noun[:-1] if n == 1 else noun} moved")
        return "; ".join(bits) or "no change"

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "from": self.old_label,
            "to": self.new_label,
            "summary": self.summary,
            "fields": [f.as_dict() for f in self.fields],
            "sections": {s.name: [e.as_dict() for e in s.entries] for s in self.sections},
        }


def _field(name: str, label: str, old, new, *, text: bool) -> FieldDiff:
    if text:
        return FieldDiff(name, label, old or "", new or "", tuple(word_diff(old or "", new or "")))
    return FieldDiff(name, label, old, new)


def _longest_increasing(values: list[int]) -> set[int]:
    """Indexes (into `values`) of one longest strictly increasing run: the entries that kept their order."""
    n = len(values)
    length, previous = [1] * n, [-1] * n
    for i in range(n):
        for j in range(i):
            if values[j] < values[i] and length[j] + 1 > length[i]:
                length[i], previous[i] = length[j] + 1, j
    keep: set[int] = set()
    i = max(range(n), key=lambda k: length[k]) if n else -1
    while i != -1:
        keep.add(i)
        i = previous[i]
    return keep


def _list_diff(
    old: list[dict],
    new: list[dict],
    *,
    fields: list[tuple[str, str, bool]],
    label: Callable[[dict, int], str],
    key: Callable[[dict], Any] | None = None,
    align: Callable[[dict], Any] = lambda d: repr(sorted(d.items())),
) -> tuple[EntryDiff, ...]:
    """Entries matched by `key` (ids), the rest aligned by `align` (text); then compared field by field."""
    match: dict[int, int] = {}
    if key is not None:
        new_by_key = {key(n): j for j, n in enumerate(new) if key(n) is not None}
        for i, o in enumerate(old):
            j = new_by_key.get(key(o))
            if key(o) is not None and j is not None:
                match[i] = j
    rest_old = [i for i in range(len(old)) if i not in match]
    taken = set(match.values())
    rest_new = [j for j in range(len(new)) if j not in taken]
    keyless = key is None or any(key(old[i]) is None for i in rest_old) or any(key(new[j]) is None for j in rest_new)
    if keyless and rest_old and rest_new:
        matcher = SequenceMatcher(
            None, [align(old[i]) for i in rest_old], [align(new[j]) for j in rest_new], autojunk=False
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag in ("equal", "replace"):
                for x, y in zip(range(i1, i2), range(j1, j2), strict=False):
                    match[rest_old[x]] = rest_new[y]

    by_new = sorted(match.items(), key=lambda ij: ij[1])
    in_order = _longest_increasing([i for i, _ in by_new])
    moved = {by_new[k][0] for k in range(len(by_new)) if k not in in_order}

    placed: list[tuple[tuple, EntryDiff]] = []
    matched_new = {j: i for i, j in match.items()}
    for j, entry in enumerate(new):
        i = matched_new.get(j)
        if i is None:
            diffs = tuple(
                _field(n, lbl, None, entry.get(n), text=t) for n, lbl, t in fields if entry.get(n) not in ("", None)
            )
            placed.append(((j, 0, 0), EntryDiff(label(entry, j), "added", False, None, j + 1, diffs)))
            continue
        before = old[i]
        diffs = tuple(_field(n, lbl, before.get(n), entry.get(n), text=t) for n, lbl, t in fields)
        changed = any(d.changed for d in diffs)
        placed.append(
            (
                (j, 0, 0),
                EntryDiff(label(entry, j), "changed" if changed else "unchanged", i in moved, i + 1, j + 1, diffs),
            )
        )
    for i, entry in enumerate(old):
        if i in match:
            continue
        # Shown where it stood: right after the surviving entry that came before it.
        preceding = [match[k] for k in range(i) if k in match]
        spot = max(preceding) if preceding else -1
        diffs = tuple(
            _field(n, lbl, entry.get(n), None, text=t) for n, lbl, t in fields if entry.get(n) not in ("", None)
        )
        placed.append(((spot, 1, i), EntryDiff(label(entry, i), "removed", False, i + 1, None, diffs)))
    return tuple(e for _, e in sorted(placed, key=lambda p: p[0]))


def _letter(i: int) -> str:
    return OPTION_LETTERS[i] if 0 <= i < len(OPTION_LETTERS) else str(i + 1)


def _correct(content: dict) -> str:
    options, index = content.get("options") or [], content.get("correct_index")
    if index is not None and 0 <= index < len(options):
        return f"{_letter(index)}: {options[index]}"
    answer = content.get("answer")  # a machine draft's proposed answer, before options existed
    return f"(answer) {answer}" if answer else ""


def _seconds(t) -> str:
    return "?" if t is None else f"{t:.3f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class DiffNames:
    """Display names the diff needs: video names and turn numbers of linked pairs."""

    videos: dict[int, str] = field(default_factory=dict)
    turns: dict[int, tuple[int, int]] = field(default_factory=dict)  # pair id → (which chain 0/1, turn number)


def content_diff(kind: str, old: dict, new: dict, *, old_label: str = "", new_label: str = "", names=None) -> ItemDiff:
    """Compare two contents of one item kind (pure: no queries)."""
    names = names or DiffNames()
    kind = getattr(kind, "value", kind)
    if kind not in SPECS:
        raise ValueError(f"{kind!r} is not a kind of versioned item.")
    fields: tuple[FieldDiff, ...] = ()
    sections: list[DiffSection] = []
    if kind == QA_CHAIN:
        entries = _list_diff(
            old.get("turns", []),
            new.get("turns", []),
            fields=_diff_fields(TURN_CONTENT),
            label=lambda d, i: f"Turn {i + 1}",
            key=lambda d: d.get("id"),
            align=lambda d: d.get("question", ""),
        )
        sections.append(DiffSection("turns", "Turns", entries))
    elif kind == MCQ_KIND:
        o, n = {**old, "correct": _correct(old)}, {**new, "correct": _correct(new)}
        fields = tuple(
            d
            for d in (_field(f, lbl, o.get(f), n.get(f), text=t) for f, lbl, t in _diff_fields(MCQ_CONTENT))
            if d.changed
        )
        options = _list_diff(
            [{"text": t} for t in old.get("options") or []],
            [{"text": t} for t in new.get("options") or []],
            fields=[("text", "Text", True)],
            label=lambda d, i: f"Option {_letter(i)}",
            align=lambda d: d["text"],
        )
        sections.append(DiffSection("options", "Options", options))
        if "videos" in old and "videos" in new:
            videos = _list_diff(
                old["videos"],
                new["videos"],
                fields=[("role", "Role", False)],
                label=lambda d, i: names.videos.get(d["video_id"], f"video {d['video_id']}"),
                key=lambda d: d["video_id"],
            )
            sections.append(DiffSection("videos", "Videos", videos))

        def moment_label(d, i):
            frame = f" · frame {d['frame_index']}" if d.get("frame_index") is not None else ""
            return f"{_seconds(d.get('time_s'))} s{frame}"

        moments = _list_diff(
            old.get("moments", []),
            new.get("moments", []),
            fields=[("time_s", "Time (s)", False), ("frame_index", "Frame", False), ("note", "Note", True)],
            label=moment_label,
            align=lambda d: round(d.get("time_s") or 0.0, 3),
        )
        sections.append(DiffSection("moments", "Moments", moments))
    else:

        def link_label(d, i):
            before = names.turns.get(d.get("from_pair_id"), (0, "?"))[1]
            after = names.turns.get(d.get("to_pair_id"), (1, "?"))[1]
            return f"earlier turn {before} → later turn {after}"

        entries = _list_diff(
            old.get("links", []),
            new.get("links", []),
            fields=_diff_fields(LINK_CONTENT),
            label=link_label,
            key=lambda d: d.get("id"),
            align=lambda d: (d.get("from_pair_id"), d.get("to_pair_id")),
        )
        sections.append(DiffSection("links", "Links", entries))
    return ItemDiff(kind, old_label, new_label, fields, tuple(sections))


def diff_names(item, contents: list[dict]) -> DiffNames:
    kind = item_kind(item)
    if kind == MCQ_KIND:
        ids = {v["video_id"] for c in contents for v in c.get("videos", [])}
        return DiffNames(videos=dict(Video.objects.filter(pk__in=ids).values_list("pk", "name")) if ids else {})
    if kind == CHAIN_PAIR:
        return DiffNames(turns=_turn_numbers(item))
    return DiffNames()


def _turn_numbers(chain_pair: ChainPair) -> dict[int, tuple[int, int]]:
    """Pair id → (0 earlier / 1 later chain, turn number), for pairs alive now or deleted since."""
    side = {chain_pair.chain_before_id: 0, chain_pair.chain_after_id: 1}
    numbers: dict[int, tuple[int, int]] = {}
    for row in (
        QAPair.history.filter(chain_id__in=side).order_by("history_date", "history_id").only("id", "chain_id", "index")
    ):
        numbers[row.id] = (side[row.chain_id], row.index + 1)
    for pk, chain_id, index in QAPair.objects.filter(chain_id__in=side).values_list("pk", "chain_id", "index"):
        numbers[pk] = (side[chain_id], index + 1)
    return numbers


def item_diff(item, from_version: int, to_version: int) -> ItemDiff:
    """What changed between two versions of the item (either order)."""
    timeline = item_timeline(item)
    old, new = timeline.get(from_version), timeline.get(to_version)
    return content_diff(
        timeline.kind,
        old.content,
        new.content,
        old_label=f"version {from_version}",
        new_label=f"version {to_version}",
        names=diff_names(item, [old.content, new.content]),
    )


# --- restore ------------------------------------------------------------------------------------------------


def _baseline(item, kind: str) -> None:
    """Give what has no history row one now, so the versions before this write stay rebuildable."""
    spec = SPECS[kind]
    for part in spec.parts:
        live = list(part.model.objects.filter(**{part.fk: item.pk}))
        known = set(part.model.history.filter(id__in=[o.pk for o in live]).values_list("id", flat=True).distinct())
        missing = [o for o in live if o.pk not in known]
        if missing:
            part.model.history.bulk_history_create(
                missing, default_date=item.created_at, default_change_reason=BASELINE
            )
    if not spec.model.history.filter(id=item.pk, version=item.version).exists():
        stamp = timezone.now() - timedelta(microseconds=1)
        spec.model.history.bulk_history_create([item], default_date=stamp, default_change_reason=BASELINE)


def _mark(obj, *, user, stamp, reason: str) -> None:
    obj._history_date = stamp
    obj._history_user = user
    obj._change_reason = reason


def _delete_each(rows, *, user, stamp, reason: str) -> None:
    for row in rows:
        _mark(row, user=user, stamp=stamp, reason=reason)
        row.delete()


def _write_turns(chain: QAChain, content: dict, *, user, stamp, reason: str) -> list[str]:
    rows = content["turns"]
    current = {p.pk: p for p in QAPair.objects.filter(chain=chain)}
    wanted = {r["id"] for r in rows}
    for pair in current.values():
        if pair.pk not in wanted:
            _mark(pair, user=user, stamp=stamp, reason=reason)
            pair.delete()  # its links go with it, as in any edit that deletes a turn
    for index, row in enumerate(rows):
        pair = current.get(row["id"])
        new = pair is None
        if new:
            pair = QAPair(chain=chain, pk=row["id"])  # a turn deleted since comes back with its id
        values = {"index": index, **{f: row[f] for f in TURN_FIELDS}}
        if new or any(getattr(pair, f) != v for f, v in values.items()):
            for f, v in values.items():
                setattr(pair, f, v)
            _mark(pair, user=user, stamp=stamp, reason=reason)
            pair.save(force_insert=new)
    return []


def _write_mcq(mcq: MCQ, content: dict, *, user, stamp, reason: str) -> list[str]:
    for f in MCQ_FIELDS:
        setattr(mcq, f, _copy(content[f]))
    wanted_videos = [(v["video_id"], v["role"]) for v in content["videos"]]
    wanted_moments = [(m["video_id"], m["time_s"], m["frame_index"], m["note"]) for m in content["moments"]]
    needed = {v for v, _ in wanted_videos} | {m[0] for m in wanted_moments}
    gone = needed - set(Video.objects.filter(pk__in=needed).values_list("pk", flat=True))
    if gone:
        raise RestoreRefused(
            _("Version content uses videos that no longer exist (%(value)s).")
            % {"value": ", ".join(map(str, sorted(gone)))}
        )
    history_user = user if getattr(user, "is_authenticated", False) else None
    # Part rows carry the version they belong to, as mcq_save writes them (its undo replays by it).
    tag = f"{MCQ_VERSION_TAG}{mcq.version}"
    links = list(mcq.mcq_videos.order_by("order"))
    if [(v.video_id, v.role) for v in links] != wanted_videos:
        _delete_each(links, user=user, stamp=stamp, reason=tag)
        bulk_create_with_history(
            [MCQVideo(mcq=mcq, video_id=v, role=role, order=i) for i, (v, role) in enumerate(wanted_videos)],
            MCQVideo,
            default_user=history_user,
            default_change_reason=tag,
            default_date=stamp,
        )
    moments = list(mcq.moments.order_by("order", "time_s", "pk"))
    if [(m.video_id, m.time_s, m.frame_index, m.note) for m in moments] != wanted_moments:
        _delete_each(moments, user=user, stamp=stamp, reason=tag)
        bulk_create_with_history(
            [
                ReferredMoment(mcq=mcq, video_id=v, time_s=t, frame_index=f, note=note, order=k)
                for k, (v, t, f, note) in enumerate(wanted_moments)
            ],
            ReferredMoment,
            default_user=history_user,
            default_change_reason=tag,
            default_date=stamp,
        )
    return []


def _write_links(chain_pair: ChainPair, content: dict, *, user, stamp, reason: str) -> list[str]:
    warnings = []
    current = {r.pk: r for r in Relation.objects.filter(chain_pair=chain_pair)}
    wanted = {r["id"]: r for r in content["links"]}
    for relation in current.values():
        if relation.pk not in wanted:
            _mark(relation, user=user, stamp=stamp, reason="")  # no reason: link_version_tag names the version
            relation.delete()
    pairs = set(
        QAPair.objects.filter(chain_id__in=[chain_pair.chain_before_id, chain_pair.chain_after_id]).values_list(
            "pk", flat=True
        )
    )
    for pk, row in wanted.items():
        relation = current.get(pk)
        new = relation is None
        if new:
            if not {row["from_pair_id"], row["to_pair_id"]} <= pairs:
                warnings.append(f"A link of version content could not come back: one of its turns is gone (link {pk}).")
                continue
            relation = Relation(pk=pk, chain_pair=chain_pair)
        if new or any(getattr(relation, f) != row[f] for f in LINK_FIELDS):
            for f in LINK_FIELDS:
                setattr(relation, f, row[f])
            _mark(relation, user=user, stamp=stamp, reason="")
            relation.save(force_insert=new)
    return warnings


_WRITERS = {QA_CHAIN: _write_turns, MCQ_KIND: _write_mcq, CHAIN_PAIR: _write_links}


def _same(kind: str, a: dict, b: dict) -> bool:
    return not content_diff(kind, a, b).changed


@dataclass(frozen=True)
class Restored:
    item: Any  # the item as locked and written, at its new version
    restored_version: int
    previous_version: int
    warnings: list[str]


def content_restore(*, item, to_version: int, user, reason: str, expected_version: int | None = None) -> Restored:
    """Write the content of `to_version` as a new version of the item; `reason` goes into its history rows.

    Locks the item; run it inside the caller's transaction when something else must be written
    with it. `expected_version` is the version the person was looking at: a restore based on a
    stale page is refused (StaleVersion) rather than throwing away a save it never showed. Raises
    RestoreRefused when there is nothing to restore or the content cannot come back.
    """
    kind = item_kind(item)
    spec = SPECS[kind]
    with transaction.atomic():
        locked = spec.model.objects.select_for_update(of=("self",)).select_related("project").get(pk=item.pk)
        if expected_version is not None and locked.version != expected_version:
            raise StaleVersion(item=locked, expected=expected_version)
        if to_version == locked.version:
            raise RestoreRefused(
                _("Version %(to_version)s is the current version; there is nothing to revert.")
                % {"to_version": to_version}
            )
        timeline = item_timeline(locked)
        try:
            target = timeline.get(to_version)
        except VersionUnknown as exc:
            raise RestoreRefused(str(exc)) from None
        if _same(kind, target.content, timeline.versions[locked.version].content):
            raise RestoreRefused(
                _("Version %(to_version)s holds the same content as the current version; there is nothing to revert.")
                % {"to_version": to_version}
            )
        _baseline(locked, kind)
        old_version = locked.version
        version_claim(item=locked, expected=old_version, user=user)
        stamp = timezone.now()
        warnings = _WRITERS[kind](locked, target.content, user=user, stamp=stamp, reason=reason)
        _mark(locked, user=user, stamp=stamp, reason=reason)
        locked.save(update_fields=[*spec.fields, "updated_at"])
    return Restored(item=locked, restored_version=to_version, previous_version=old_version, warnings=warnings)
