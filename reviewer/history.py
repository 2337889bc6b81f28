"""Content history of reviewable items as reviewers see it: versions with their diffs, the machine draft, admin revert.

The versions themselves (what an item held at each one, the diff between two, restoring one) are
annotator.versions; this module adds the history page's view of them and the admin's revert.

`item_revert` (admins only) writes an older version's content as a new version, logs it as a
ReviewEvent with reasons ["admin_revert"] and leaves the status as it is (accepted work stays
accepted; the event says what happened).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils.translation import gettext as _

from annotator.models import ItemKind, ItemRef, QAPair, RelationDecision, ReviewEvent
from annotator.versions import (
    REASON_REVERT,
    TURN_FIELDS,
    ContentVersion,
    ItemDiff,
    RestoreRefused,
    content_diff,
    content_restore,
    diff_names,
    item_timeline,
    item_versions,
)
from projects.permissions import Action, can
from projects.refusals import Refused


class RevertRefused(Refused):
    """The revert cannot be done; the message says why, and nothing was written."""

    status, code = 409, "revert_refused"


def item_kind_of(item) -> ItemKind:
    return ItemRef.ref_for(item)["item_kind"]


@dataclass(frozen=True)
class VersionEntry:
    """A version as the history page lists it: with its diff against the version before it."""

    version: ContentVersion
    diff: ItemDiff | None  # None for the first version


def item_history_versions(item, *, limit: int | None = None) -> list[VersionEntry]:
    """Newest first, each with its diff against the previous recorded version."""
    versions = item_versions(item)
    names = diff_names(item, [v.content for v in versions])
    kind = item_kind_of(item)
    entries = []
    for k, v in enumerate(versions):
        diff = None
        if k:
            prev = versions[k - 1]
            diff = content_diff(
                kind,
                prev.content,
                v.content,
                old_label=f"version {prev.version}",
                new_label=f"version {v.version}",
                names=names,
            )
        entries.append(VersionEntry(v, diff))
    entries.reverse()
    return entries[:limit] if limit else entries


def machine_draft_content(item) -> dict | None:
    """The item's machine draft in the content shape, or None when a person started it."""
    draft = item.machine_draft
    if not isinstance(draft, dict):
        return None
    kind = item_kind_of(item)
    if kind == ItemKind.QA_CHAIN:
        turns = [
            {"id": None, **{f: str(t.get(f) or "") for f in TURN_FIELDS}}
            for t in draft.get("pairs") or []
            if isinstance(t, dict)
        ]
        return {"turns": turns}
    if kind == ItemKind.MCQ:
        options = [str(o) for o in draft.get("options") or []]
        return {
            "question": str(draft.get("question") or ""),
            "referring_query": str(draft.get("referring_query") or ""),
            "question_wo_referring_query": str(draft.get("question_without_referring_query") or ""),
            "options": options,
            "correct_index": draft.get("correct_index") if options else None,
            "answer": str(draft.get("answer") or ""),
            "moments": [
                {"video_id": None, "time_s": float(t), "frame_index": None, "note": ""}
                for t in draft.get("moments") or []
                if isinstance(t, int | float) and not isinstance(t, bool)
            ],
        }
    links = []
    for link in draft.get("relations") or []:
        if isinstance(link, dict):
            links.append(
                {
                    "id": None,
                    "from_index": link.get("from"),
                    "to_index": link.get("to"),
                    "relation_type": link.get("type", ""),
                    "decision": RelationDecision.CANDIDATE,
                    "rationale": link.get("rationale", ""),
                    "rewritten_question": "",
                    "rewritten_answer": "",
                }
            )
    return {"links": links}


def diff_against_machine_draft(item) -> ItemDiff | None:
    """What people changed in the machine's draft (None when the item did not start as one)."""
    draft = machine_draft_content(item)
    if draft is None:
        return None
    timeline = item_timeline(item)
    current = timeline.versions[item.version].content
    kind = timeline.kind
    if kind == ItemKind.QA_CHAIN:
        first = timeline.versions.get(min(timeline.versions))
        turns = first.content["turns"] if first else []
        # The draft's turns became the first version's pairs, in order: lend them their ids.
        if len(turns) == len(draft["turns"]) and all(
            t["question"] == d["question"] for t, d in zip(turns, draft["turns"], strict=True)
        ):
            for d, t in zip(draft["turns"], turns, strict=True):
                d["id"] = t["id"]
    elif kind == ItemKind.MCQ:
        draft["videos"] = current.get("videos", [])
        # Moments were drafted as times on the main video only.
        main = current["videos"][0]["video_id"] if current.get("videos") else None
        for m in draft["moments"]:
            m["video_id"] = main
        current = {**current, "moments": [{**m, "frame_index": None} for m in current.get("moments", [])]}
    else:
        by_index = {}
        for pk, chain_id, index in QAPair.objects.filter(
            chain_id__in=[item.chain_before_id, item.chain_after_id]
        ).values_list("pk", "chain_id", "index"):
            by_index[(chain_id, index)] = pk
        for link in draft["links"]:
            link["from_pair_id"] = by_index.get((item.chain_before_id, link.pop("from_index")))
            link["to_pair_id"] = by_index.get((item.chain_after_id, link.pop("to_index")))
        # Machine links keep their rows (rejected, never deleted): match them to the draft by their ends.
        current = {"links": [{**link, "id": None} for link in current["links"]]}
    return content_diff(
        kind,
        draft,
        current,
        old_label="machine draft",
        new_label=f"version {item.version}",
        names=diff_names(item, [draft, current]),
    )


@dataclass(frozen=True)
class Reverted:
    item: Any
    restored_version: int
    version: int
    event: ReviewEvent
    warnings: list[str]


def item_revert(*, item, to_version: int, user, expected_version: int | None = None) -> Reverted:
    """Restore the content of `to_version` as a new version (project admins only), and log it.

    `expected_version` is the version the admin was looking at: a revert based on a stale page is
    refused (StaleVersion) rather than throwing away a save it never showed.
    """
    if not can(user, Action.ADMINISTER, item.project):
        raise PermissionDenied(_("Only a project admin can revert an item to an earlier version."))
    with transaction.atomic():
        try:
            restored = content_restore(
                item=item,
                to_version=to_version,
                user=user,
                reason=f"{REASON_REVERT}:{to_version}",
                expected_version=expected_version,
            )
        except RestoreRefused as exc:
            raise RevertRefused(str(exc)) from None
        locked = restored.item
        event = ReviewEvent.objects.create(
            project_id=locked.project_id,
            actor=user,
            from_status=locked.status,
            to_status=locked.status,
            reasons=[REASON_REVERT],
            comment=f"Reverted to the content of version {to_version} (was version {restored.previous_version}).",
            item_version=locked.version,
            **ItemRef.ref_for(locked),
        )
    item.refresh_from_db()
    return Reverted(
        item=item, restored_version=to_version, version=item.version, event=event, warnings=restored.warnings
    )


# --- labels --------------------------------------------------------------------------------------------------


def item_label(item) -> str:
    """A short name for an item in lists and headings (expects clip/video loaded for speed)."""
    kind = item_kind_of(item)
    if kind == ItemKind.QA_CHAIN:
        return f"{item.clip.video.name} · clip {item.clip.index}"
    if kind == ItemKind.CHAIN_PAIR:
        return f"{item.video.name} · chains {item.before_index}→{item.before_index + 1}"
    text = item.question.strip()
    return f"MCQ {item.pk}: {text[:70]}{'…' if len(text) > 70 else ''}" if text else f"MCQ {item.pk}"
