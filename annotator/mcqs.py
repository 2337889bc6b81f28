"""MCQ services: create, save (one version-checked write of everything the editor holds), submit.

A save checks structure and refuses what can never be right (more options than allowed, a correct
option that does not exist, a referring query outside the question, a category the project does
not know, a moment on a video the question does not use). It accepts what is merely unfinished
(three options so far, no correct one yet): autosave must never lose work in progress. Unfinished
work is what `mcq_submit` refuses, listing every blocker (annotator.mcq_checks).
"""

import math
import re
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _
from simple_history.utils import bulk_create_with_history

from projects.models import Project, ProjectKind
from projects.refusals import Refused
from videos.models import Video
from videos.unusable import unusable_reasons

from . import mcq_checks, versions
from .concurrency import StaleVersion, version_claim
from .lifecycle import EDITABLE, item_transition
from .models import MCQ, ItemStatus, MCQVideo, Origin, ReferredMoment, VideoRole
from .selectors import to_do_q
from .submission import Submitted, item_hand_on
from .versions import MCQ_FIELDS, MCQ_VERSION_TAG

QUESTION_MAX_CHARS = 5000
OPTION_MAX_CHARS = 1000
MAX_MOMENTS = 50
MAX_VIDEOS = 10
LEVEL_MAX_CHARS = 20
# History reasons: rows a save rewrote ("mcq:v7"), and an undo's restored version ("undo:5").
VERSION_TAG = MCQ_VERSION_TAG
UNDO_REASON = re.compile(r"^undo:(\d+)$")


class MCQInvalid(Refused, ValueError):
    """The save was refused; `errors` maps a field to its messages, and nothing was written."""

    status, code = 422, "mcq_invalid"

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__(" ".join(m for messages in errors.values() for m in messages))

    @property
    def details(self) -> dict:
        return {"errors": [{"field": field, "message": m} for field, found in self.errors.items() for m in found]}


class MCQNotEditable(Refused):
    """The item has moved on in the workflow (submitted, under review, accepted)."""

    status, code = 409, "not_editable"


class NothingToUndo(Refused):
    """No earlier version whose content is recorded."""

    status, code = 409, "nothing_to_undo"


class MCQNotReady(Refused):
    """Submit refused: `problems` are the blockers still to fix."""

    status, code = 422, "not_ready"

    def __init__(self, problems: list[mcq_checks.Finding]):
        self.problems = problems
        super().__init__(_("Not ready to submit: ") + " ".join(p.message for p in problems))

    @property
    def details(self) -> dict:
        return {"blockers": [p.as_dict() for p in self.problems]}


@dataclass
class MCQSaved:
    mcq: MCQ
    state: dict
    warnings: list[mcq_checks.Finding]
    blockers: list[mcq_checks.Finding]
    restored_version: int | None = None


# --- the project's vocabulary --------------------------------------------------------------------


def _is_multi_video(roles) -> bool:
    return any(role in (VideoRole.REFERENCE, VideoRole.CANDIDATE) for role in roles)


def category_choices(*, project: Project, multi_video: bool = False) -> list[dict]:
    """The categories an MCQ of this project may carry: `value` stored, with its level or group.

    LongVideoBench codes carry their level; LiViBench tasks and MVPBench subtasks their group.
    """
    if multi_video or project.kind == ProjectKind.MVPBENCH:
        out = []
        for entry in project.taxonomy("mvp_subtasks"):
            if isinstance(entry, str):
                out.append({"value": entry, "label": entry, "level": "", "group": ""})
            else:
                name = entry.get("task") or entry.get("name") or entry.get("code") or ""
                group = entry.get("domain") or entry.get("group") or ""
                if name:
                    out.append({"value": name, "label": name, "level": "", "group": group})
        return out
    if project.kind == ProjectKind.LIVIBENCH:
        return [
            {"value": t["task"], "label": t["task"], "level": "", "group": t.get("group", "")}
            for t in project.taxonomy("tasks")
        ]
    return [
        {"value": c["code"], "label": f"{c['code']} · {c.get('name', '')}", "level": c.get("level", ""), "group": ""}
        for c in project.taxonomy("question_categories")
    ]


def mcq_rules(*, project: Project, multi_video: bool) -> mcq_checks.MCQRules:
    return mcq_checks.rules_for(
        kind=project.kind,
        multi_video=multi_video,
        has_categories=bool(category_choices(project=project, multi_video=multi_video)),
    )


# --- state: what the editor holds, as JSON ---------------------------------------------------------


def mcq_state(*, mcq: MCQ, links: list[MCQVideo] | None = None, moments: list[ReferredMoment] | None = None) -> dict:
    """The item as the editor and the conflict view show it. Pass prefetched links and moments to
    save queries; their videos must be loaded (select_related)."""
    if links is None:
        links = list(mcq.mcq_videos.select_related("video").order_by("order"))
    if moments is None:
        moments = list(mcq.moments.order_by("order", "time_s", "pk"))
    reasons = {r["code"]: r["name"] for r in unusable_reasons(project=mcq.project)}
    return {
        "id": mcq.pk,
        "version": mcq.version,
        "status": mcq.status,
        "status_label": mcq.get_status_display(),
        "question": mcq.question,
        "referring_start": mcq.referring_start,
        "referring_end": mcq.referring_end,
        "referring_query": mcq.referring_query,
        "question_wo_referring_query": mcq.question_wo_referring_query,
        "options": list(mcq.options or []),
        "correct_index": mcq.correct_index,
        "category": mcq.category,
        "level": mcq.level,
        "task_group": mcq.task_group,
        "videos": [
            {
                "video_id": link.video_id,
                "name": link.video.name,
                "role": link.role,
                "order": link.order,
                "duration_s": link.video.duration_s,
                "fps": link.video.fps,
                "unusable": reasons.get(link.video.unusable_reason, link.video.unusable_reason),
            }
            for link in links
        ],
        "moments": [{"video_id": m.video_id, "time_s": m.time_s, "frame_index": m.frame_index} for m in moments],
    }


def draft_from_state(state: dict) -> mcq_checks.MCQDraft:
    return mcq_checks.MCQDraft(
        question=state["question"],
        referring_start=state["referring_start"],
        referring_end=state["referring_end"],
        options=tuple(state["options"]),
        correct_index=state["correct_index"],
        category=state["category"],
        videos=tuple(
            mcq_checks.DraftVideo(
                video_id=v["video_id"],
                name=v["name"],
                role=v["role"],
                duration_s=v["duration_s"],
                unusable=v["unusable"],
            )
            for v in state["videos"]
        ),
        moments=tuple(mcq_checks.DraftMoment(video_id=m["video_id"], time_s=m["time_s"]) for m in state["moments"]),
    )


def mcq_findings(*, mcq: MCQ, state: dict | None = None) -> tuple[list, list]:
    """(warnings, blockers) of the item as stored."""
    state = state or mcq_state(mcq=mcq)
    draft = draft_from_state(state)
    rules = mcq_rules(project=mcq.project, multi_video=_is_multi_video(v["role"] for v in state["videos"]))
    return mcq_checks.mcq_warnings(draft, rules), mcq_checks.mcq_blockers(draft, rules)


# --- validation ----------------------------------------------------------------------------------


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clean_videos(*, project: Project, videos: list, errors: dict) -> list[tuple[Video, str]]:
    """[(video, role)] in their order, or [] with messages in errors["videos"]."""
    bad = errors.setdefault("videos", [])
    if not isinstance(videos, list) or not videos:
        bad.append("An MCQ needs at least one video.")
        return []
    if len(videos) > MAX_VIDEOS:
        bad.append(f"An MCQ takes at most {MAX_VIDEOS} videos.")
        return []
    rows = []
    for position, entry in enumerate(videos):
        if isinstance(entry, dict):
            video_id, role, order = (
                entry.get("video_id"),
                entry.get("role", VideoRole.MAIN),
                entry.get("order", position),
            )
        else:
            bad.append(f"Video entry {position + 1} must be an object with video_id, role and order.")
            continue
        if not _is_int(video_id) or not _is_int(order):
            bad.append(f"Video entry {position + 1}: video_id and order must be whole numbers.")
            continue
        if role not in VideoRole.values:
            bad.append(f'Video entry {position + 1}: role "{role}" is not one of {", ".join(VideoRole.values)}.')
            continue
        rows.append((order, position, video_id, role))
    if bad:
        return []
    rows.sort()
    ids = [video_id for _, _, video_id, _ in rows]
    if len(set(ids)) != len(ids):
        bad.append("A video appears twice in this MCQ.")
        return []
    found = {v.pk: v for v in Video.objects.filter(project=project, pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        bad.append(f"No video {', '.join(map(str, missing))} in this project.")
        return []
    roles = [role for _, _, _, role in rows]
    if _is_multi_video(roles):
        if VideoRole.MAIN in roles:
            bad.append("A multi-video MCQ has one reference and candidates, no main video.")
        elif roles.count(VideoRole.REFERENCE) != 1:
            bad.append("A multi-video MCQ has exactly one reference video.")
        elif roles[0] != VideoRole.REFERENCE:
            bad.append("The reference video comes first, before the candidates.")
    elif len(roles) != 1:
        bad.append("An MCQ over one video has exactly one main video; for several, use a reference and candidates.")
    if bad:
        return []
    errors.pop("videos")
    return [(found[video_id], role) for _, _, video_id, role in rows]


def _clean_text(value, *, field: str, label: str, limit: int, errors: dict) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        errors.setdefault(field, []).append(f"The {label} must be text.")
        return ""
    if len(value) > limit:
        errors.setdefault(field, []).append(f"The {label} is too long ({len(value)} characters; at most {limit}).")
    return value


def _clean_span(*, question: str, start, end, errors: dict) -> tuple[int | None, int | None]:
    if start is None and end is None:
        return None, None
    if not _is_int(start) or not _is_int(end):
        errors.setdefault("referring", []).append(
            "The referring query needs both a start and an end (character positions in the question)."
        )
        return None, None
    if not 0 <= start < end <= len(question):
        errors.setdefault("referring", []).append(
            f"The referring query (characters {start}–{end}) is not inside the question "
            f"({len(question)} characters): mark it again."
        )
        return None, None
    # A selection often takes a space at either edge; the query itself does not.
    while start < end and question[start].isspace():
        start += 1
    while end > start and question[end - 1].isspace():
        end -= 1
    if start == end:
        errors.setdefault("referring", []).append("The referring query is empty: mark words of the question.")
        return None, None
    return start, end


def _clean_options(*, options, correct_index, rules: mcq_checks.MCQRules, errors: dict) -> tuple[list[str], int | None]:
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        errors.setdefault("options", []).append("Options must be a list of texts.")
        return [], None
    if len(options) > rules.max_options:
        errors.setdefault("options", []).append(
            f"An MCQ here has at most {rules.max_options} options; remove {len(options) - rules.max_options}."
        )
    for i, option in enumerate(options):
        if len(option) > OPTION_MAX_CHARS:
            errors.setdefault("options", []).append(
                f"Option {i + 1} is too long ({len(option)} characters; at most {OPTION_MAX_CHARS})."
            )
    cleaned = [o.strip() for o in options]
    if correct_index is not None and (not _is_int(correct_index) or not 0 <= correct_index < len(cleaned)):
        errors.setdefault("correct_index", []).append(
            f"The correct option must be one of options 1–{len(cleaned)}; got {correct_index!r}."
            if cleaned
            else "Add options before choosing the correct one."
        )
        correct_index = None
    return cleaned, correct_index


def _clean_category(*, project: Project, mcq: MCQ, category, level, multi_video: bool, errors: dict) -> tuple:
    """(category, level, task_group); the level follows a LongVideoBench code, the group a task."""
    if category in (None, ""):
        return "", "", ""
    if not isinstance(category, str):
        errors.setdefault("category", []).append("The category must be text.")
        return "", "", ""
    choices = {c["value"]: c for c in category_choices(project=project, multi_video=multi_video)}
    choice = choices.get(category)
    if choice is None:
        if category == mcq.category:
            # Kept from before (the taxonomy changed since): not the annotator's doing, keep it.
            return mcq.category, mcq.level, mcq.task_group
        errors.setdefault("category", []).append(
            f'"{category}" is not a category of this project; choose one from the list.'
        )
        return "", "", ""
    if choice["level"]:
        return category, choice["level"], choice["group"]
    free_level = level if isinstance(level, str) else ""
    if len(free_level) > LEVEL_MAX_CHARS:
        errors.setdefault("category", []).append(f"The level is at most {LEVEL_MAX_CHARS} characters.")
        free_level = ""
    return category, free_level, choice["group"]


def _clean_moments(*, moments, videos: dict[int, Video], errors: dict) -> list[tuple[Video, float, int]]:
    """[(video, time_s, frame_index)]: the frame is recomputed from the time and the video's fps."""
    bad = errors.setdefault("moments", [])
    if not isinstance(moments, list):
        bad.append("Moments must be a list.")
        return []
    if len(moments) > MAX_MOMENTS:
        bad.append(f"At most {MAX_MOMENTS} moments per question.")
        return []
    out, seen = [], set()
    for k, entry in enumerate(moments):
        if not isinstance(entry, dict):
            bad.append(f"Moment {k + 1} must be an object with video_id and time_s.")
            continue
        video_id, time_s = entry.get("video_id"), entry.get("time_s")
        if not _is_int(video_id) or video_id not in videos:
            bad.append(f"Moment {k + 1} is on a video this question does not use; remove it or add its video.")
            continue
        if isinstance(time_s, bool) or not isinstance(time_s, int | float) or not math.isfinite(time_s) or time_s < 0:
            bad.append(f"Moment {k + 1}: the time must be a number of seconds from 0 on, got {time_s!r}.")
            continue
        video = videos[video_id]
        # The browser's frame number is a hint at most: the video's own frame rate decides.
        frame = video.frame_index(float(time_s))
        if (video_id, frame) in seen:
            continue  # the same frame stamped twice says nothing new
        seen.add((video_id, frame))
        out.append((video, float(time_s), frame))
    if not bad:
        errors.pop("moments")
    return out


# --- writes --------------------------------------------------------------------------------------


def _history_user(user):
    return user if getattr(user, "is_authenticated", False) else None


def _delete_tagged(rows, *, tag: str, user) -> None:
    # One by one (a handful per item) so each deletion's history record carries the version.
    for row in rows:
        row._change_reason = tag
        row._history_user = _history_user(user)
        row.delete()


def mcq_create(*, project: Project, videos: list[tuple[Video, str]], user) -> MCQ:
    """A new, empty MCQ over `videos` ([(video, role)] in order), started by `user`."""
    errors: dict = {}
    entries = [{"video_id": v.pk, "role": role, "order": i} for i, (v, role) in enumerate(videos)]
    cleaned = _clean_videos(project=project, videos=entries, errors=errors)
    if errors:
        raise MCQInvalid(errors)
    multi = _is_multi_video(role for _, role in cleaned)
    rules = mcq_rules(project=project, multi_video=multi)
    if rules.label_options:
        # MVPBench: the answer is the label of a candidate video, "1" for the first.
        candidates = sum(1 for _, role in cleaned if role == VideoRole.CANDIDATE)
        options = [str(n) for n in range(1, candidates + 1)]
    else:
        options = [""] * rules.min_options
    with transaction.atomic():
        mcq = MCQ.objects.create(
            project=project,
            question="",
            options=options,
            status=ItemStatus.DRAFT,
            origin=Origin.HUMAN,
            human_edited=True,
            author=user if getattr(user, "is_authenticated", False) else None,
        )
        bulk_create_with_history(
            [MCQVideo(mcq=mcq, video=video, role=role, order=i) for i, (video, role) in enumerate(cleaned)],
            MCQVideo,
            default_user=_history_user(user),
        )
        # A person started it: the log shows who, the same path a machine draft takes when picked up.
        item_transition(item=mcq, to_status=ItemStatus.ANNOTATING, actor=user)
    mcq.refresh_from_db()
    return mcq


def mcq_save(
    *,
    mcq: MCQ,
    expected_version: int,
    user,
    question: str,
    referring_start: int | None = None,
    referring_end: int | None = None,
    question_wo_referring_query: str | None = None,
    options: list[str],
    correct_index: int | None = None,
    category: str = "",
    level: str | None = None,
    videos: list[dict] | None = None,
    moments: list[dict] | None = None,
    reason: str = "",
) -> MCQSaved:
    """Save everything the editor holds in one version-checked write.

    `videos` ([{video_id, role, order}]) and `moments` ([{video_id, time_s, frame_index}]) replace
    what is stored; None keeps it. A blank `question_wo_referring_query` is derived from the
    question and the span. `reason` goes into the history record (undo marks what it restored).
    Raises StaleVersion (someone saved since `expected_version`),
    MCQNotEditable or MCQInvalid; writes nothing then.
    """
    project = mcq.project
    with transaction.atomic():
        locked = MCQ.objects.select_for_update().get(pk=mcq.pk)
        locked.project = project
        if locked.status not in EDITABLE:
            raise MCQNotEditable(
                _("This MCQ is %(get_status_display)s: it can no longer be edited here.")
                % {"get_status_display": locked.get_status_display().lower()}
            )
        if locked.version != expected_version:
            raise StaleVersion(item=locked, expected=expected_version)

        errors: dict[str, list[str]] = {}
        links = list(locked.mcq_videos.select_related("video").order_by("order"))
        if videos is None:
            new_videos = [(link.video, link.role) for link in links]
        else:
            new_videos = _clean_videos(project=project, videos=videos, errors=errors)
        multi = _is_multi_video(role for _, role in new_videos)
        rules = mcq_rules(project=project, multi_video=multi)

        question = _clean_text(question, field="question", label="question", limit=QUESTION_MAX_CHARS, errors=errors)
        start, end = _clean_span(question=question, start=referring_start, end=referring_end, errors=errors)
        wo = _clean_text(
            question_wo_referring_query,
            field="question_wo_referring_query",
            label="question without the referring query",
            limit=QUESTION_MAX_CHARS,
            errors=errors,
        ).strip()
        if not wo:
            wo = mcq_checks.question_without_span(question, start, end)
        cleaned_options, correct = _clean_options(
            options=options, correct_index=correct_index, rules=rules, errors=errors
        )
        category, level, group = _clean_category(
            project=project, mcq=locked, category=category, level=level, multi_video=multi, errors=errors
        )
        by_id = {video.pk: video for video, _ in new_videos}
        if moments is None:
            current = list(locked.moments.order_by("order", "time_s", "pk"))
            stray = [m for m in current if m.video_id not in by_id]
            if stray and new_videos:
                errors.setdefault("moments", []).append(
                    f"{len(stray)} moment(s) are on a video removed from this question: remove them first."
                )
            new_moments = [(by_id.get(m.video_id), m.time_s, m.frame_index) for m in current]
        else:
            new_moments = _clean_moments(moments=moments, videos=by_id, errors=errors)
        if errors:
            raise MCQInvalid(errors)

        version_claim(item=locked, expected=expected_version, user=user)
        locked.question = question
        locked.referring_start, locked.referring_end = start, end
        locked.referring_query = question[start:end] if start is not None else ""
        locked.question_wo_referring_query = wo
        locked.options = cleaned_options
        locked.correct_index = correct
        locked.category, locked.level, locked.task_group = category, level, group
        # Rows rewritten by this save carry its version in their history, so undo can replay them.
        tag = f"{VERSION_TAG}{locked.version}"
        old_videos = [(link.video_id, link.role) for link in links]
        if videos is not None and old_videos != [(v.pk, role) for v, role in new_videos]:
            # Deleted first: (mcq, order) and (mcq, video) are unique, and the new order may swap them.
            _delete_tagged(links, tag=tag, user=user)
            bulk_create_with_history(
                [MCQVideo(mcq=locked, video=v, role=role, order=i) for i, (v, role) in enumerate(new_videos)],
                MCQVideo,
                default_user=_history_user(user),
                default_change_reason=tag,
            )
        if moments is not None:
            current = list(locked.moments.order_by("order", "time_s", "pk"))
            if [(m.video_id, m.time_s, m.frame_index) for m in current] != [(v.pk, t, f) for v, t, f in new_moments]:
                _delete_tagged(current, tag=tag, user=user)
                bulk_create_with_history(
                    [
                        ReferredMoment(mcq=locked, video=v, time_s=t, frame_index=f, order=k)
                        for k, (v, t, f) in enumerate(new_moments)
                    ],
                    ReferredMoment,
                    default_user=_history_user(user),
                    default_change_reason=tag,
                )
        if reason:
            locked._change_reason = reason
        locked._history_user = _history_user(user)
        locked.save(update_fields=[*MCQ_FIELDS, "updated_at"])
        if locked.status == ItemStatus.DRAFT:
            # The first human save takes a machine draft into annotation.
            item_transition(item=locked, to_status=ItemStatus.ANNOTATING, actor=user)

    locked.refresh_from_db()
    locked.project = project
    state = mcq_state(mcq=locked)
    warnings, blockers = mcq_findings(mcq=locked, state=state)
    for name in ("version", "status", "human_edited", "author_id", "updated_at"):
        setattr(mcq, name, getattr(locked, name))
    return MCQSaved(mcq=locked, state=state, warnings=warnings, blockers=blockers)


def _undo_target(mcq: MCQ) -> int:
    """One version back, or one before the version the latest undo restored."""
    record = (
        MCQ.history.filter(id=mcq.pk, version=mcq.version, history_change_reason__startswith="undo:")
        .order_by("-history_date", "-history_id")
        .first()
    )
    match = UNDO_REASON.match(record.history_change_reason) if record else None
    return (int(match.group(1)) if match else mcq.version) - 1


def mcq_undo(*, mcq: MCQ, user, expected_version: int) -> MCQSaved:
    """Bring back the content of the version before this one, as a new version (undo again walks
    further back). Raises NothingToUndo, or what mcq_save raises."""
    current = MCQ.objects.get(pk=mcq.pk)
    target = _undo_target(current)
    try:
        content = versions.item_content_at(current, target) if target >= 1 else None
    except versions.VersionUnknown:
        content = None
    if content is None:
        raise NothingToUndo(_("There is no earlier version of this MCQ to go back to."))
    saved = mcq_save(
        mcq=mcq,
        expected_version=expected_version,
        user=user,
        question=content["question"],
        referring_start=content["referring_start"],
        referring_end=content["referring_end"],
        question_wo_referring_query=content["question_wo_referring_query"],
        options=list(content["options"] or []),
        correct_index=content["correct_index"],
        category=content["category"],
        level=content["level"],
        # A version whose videos history never saw (rows older than history) keeps today's.
        videos=[{"video_id": v["video_id"], "role": v["role"], "order": i} for i, v in enumerate(content["videos"])]
        or None,
        moments=[{"video_id": m["video_id"], "time_s": m["time_s"]} for m in content["moments"]],
        reason=f"undo:{target}",
    )
    saved.restored_version = target
    return saved


def mcq_submit(*, mcq: MCQ, user, expected_version: int | None = None) -> Submitted:
    """Hand the MCQ on through the quality gate, unless a blocker remains (raises MCQNotReady listing them all).

    With `expected_version`, refuses (StaleVersion) when someone saved after the version the
    person submitting has seen: they would otherwise submit words they never read.
    """
    with transaction.atomic():
        locked = MCQ.objects.select_for_update().get(pk=mcq.pk)
        locked.project = mcq.project
        if expected_version is not None and locked.version != expected_version:
            raise StaleVersion(item=locked, expected=expected_version)
        if locked.status not in EDITABLE:
            raise MCQNotEditable(
                _("This MCQ is already %(get_status_display)s.")
                % {"get_status_display": locked.get_status_display().lower()}
            )
        _warnings, blockers = mcq_findings(mcq=locked)
        if blockers:
            raise MCQNotReady(blockers)
        result = item_hand_on(item=locked, user=user)
    mcq.status = locked.status
    mcq.submitted_at = result.item.submitted_at
    return result


# --- reads ---------------------------------------------------------------------------------------


def mcq_next(*, project: Project, statuses, after_id: int | None = None, user=None) -> MCQ | None:
    """The next MCQ in these statuses after `after_id` (wrapping round), skipping unusable videos.

    With `user`, only what that person edits (annotator.selectors.to_do_q): their judge-returned
    MCQs too when they annotate, and never their own work to revise.
    """
    wanted = to_do_q("mcq", user=user, statuses=statuses) if user is not None else Q(status__in=list(statuses))
    items = (
        MCQ.objects.filter(wanted, project=project)
        .exclude(mcq_videos__video__unusable_reason__gt="")
        .only("pk")
        .order_by("pk")
    )
    if after_id is not None:
        following = items.filter(pk__gt=after_id).first()
        if following is not None:
            return following
        return items.exclude(pk=after_id).first()
    return items.first()
