"""The examiner's and the reviser's screens.

/p/<slug>/examine/                           examiner's home: leases, queues with depth, next item (n)
/p/<slug>/examine/next/                      POST: claim the next item to examine and open it
/p/<slug>/examine/<kind>/<id>/               the item beside the player, diffs, judge, checklist; p / f / n
/p/<slug>/examine/<kind>/<id>/verdict/       POST: pass or flag (reviewer.examination.verdict_submit)
/p/<slug>/examine/<kind>/<id>/reopen/        POST (admins): accepted → revising, with a comment
/p/<slug>/revise/                            reviser's list: flagged and reopened items with why; j / k / Enter
/p/<slug>/revise/next/                       POST: the next flagged item, taken into revision, in its editor
/p/<slug>/revise/<kind>/<id>/start/          POST: flagged → revising, then the item's editor

<kind> is qa_chain, chain_pair or mcq, as on the history page. Every view authorises first: a
stranger gets 404, a member without the role 403; the services check the item-level rules again
(never the author). Refusals keep what was typed: the page comes back with the ticks and the comment.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget

from annotator.lifecycle import item_history
from annotator.models import MCQ, ItemKind, ItemStatus, VideoRole
from annotator.selectors import (
    chain_for_editor,
    chain_pair_contents,
    chain_pair_for_editor,
    chain_pairs_for_editor,
)
from annotator.versions import VersionUnknown, item_diff
from llm.prompts import OPTION_LETTERS
from projects.permissions import Action, can, get_project_or_404
from projects.refusals import refusal_redirect
from videos.player_views import clock_label, player_context

from .examination import (
    REASON_OTHER,
    ROUND_ZERO,
    ReopenRefused,
    RevisionRefused,
    VerdictRefused,
    checklist_for,
    examinable_items,
    examine_next_item,
    examiner_lease,
    item_reopen,
    item_round,
    item_verdicts,
    previous_submitted_version,
    reason_labels,
    revise_next_item,
    revision_list,
    revision_start,
    verdict_submit,
)
from .gate_views import item_or_404, item_scores_context
from .history import diff_against_machine_draft, item_label
from .models import Assignment, AssignmentStatus, ExamVerdict, ReviewQueue
from .presence import PRESENCE_BEAT_S, item_presence, presence_label
from .quality_gate import gate_applies
from .queues import DEFAULT_HEARTBEAT_SECONDS, DEFAULT_LEASE_SECONDS, item_path, queue_stats
from .stuck_work import not_scored_note, not_scored_notes

S = ItemStatus
LONGEST_VISIT_S = 24 * 3600  # a page open longer than this says nothing about time spent on the item


# --- loading -------------------------------------------------------------------------------------------


def _item(project, kind: str, item_id: int):
    """The project's item of `kind` with what its page shows loaded; 404 for a wrong kind or another project's."""
    if kind == ItemKind.QA_CHAIN:
        item = chain_for_editor(project=project, chain_id=item_id)
    elif kind == ItemKind.CHAIN_PAIR:
        item = chain_pair_for_editor(project=project, pair_id=item_id)
    else:
        item = item_or_404(project, kind, item_id)  # 404s unknown kinds too
    if item is None:
        raise Http404("No such item in this project.")
    item.project = project
    return item


def examine_url(project, kind: str, item_id: int) -> str:
    return reverse("reviewer:examine_item", args=[project.slug, kind, item_id])


_KIND_OF = {"QAChain": "qa_chain", "ChainPair": "chain_pair", "MCQ": "mcq"}


def _redirect(request, url: str):
    """After a POST: htmx follows a client redirect, a plain form an ordinary one."""
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


# --- what each kind shows beside the player -----------------------------------------------------------------


def _chain_content(chain) -> dict:
    clip = chain.clip
    skills = {s["code"]: s.get("name", "") for s in chain.project.taxonomy("skills")}
    pairs = chain_pairs_for_editor(chain=chain)
    return {
        "video": clip.video,
        "clip": clip,
        "clip_range": f"{clock_label(clip.start_s)} – {clock_label(clip.end_s)}",
        "turns": [{"pair": p, "number": i + 1, "skill_name": skills.get(p.skill, "")} for i, p in enumerate(pairs)],
        "config": {"loops": [{"label": f"Clip {clip.index}", "start": clip.start_s, "end": clip.end_s}]},
    }


def _pair_content(chain_pair) -> dict:
    before, after, relations = chain_pair_contents(chain_pair=chain_pair)
    types = {t["code"]: t for t in chain_pair.project.taxonomy("relation_types")}
    clips = [chain_pair.chain_before.clip, chain_pair.chain_after.clip]
    links = []
    for r in relations:
        t = types.get(r.relation_type, {})
        links.append(
            {
                "relation": r,
                "from_number": r.from_pair.index + 1,
                "to_number": r.to_pair.index + 1,
                "type_label": t.get("label", r.relation_type),
                "guideline": t.get("guideline", ""),
                "rewritten": bool(r.rewritten_question or r.rewritten_answer),
            }
        )
    return {
        "video": chain_pair.video,
        "sides": [
            {
                "clip": clips[0],
                "range": f"{clock_label(clips[0].start_s)} – {clock_label(clips[0].end_s)}",
                "turns": before,
            },
            {
                "clip": clips[1],
                "range": f"{clock_label(clips[1].start_s)} – {clock_label(clips[1].end_s)}",
                "turns": after,
            },
        ],
        "links": links,
        "accepted_links": sum(1 for r in relations if r.decision == "accepted"),
        "config": {
            "loops": [
                {"label": "Both clips", "start": clips[0].start_s, "end": clips[1].end_s},
                {"label": f"Clip {clips[0].index}", "start": clips[0].start_s, "end": clips[0].end_s},
                {"label": f"Clip {clips[1].index}", "start": clips[1].start_s, "end": clips[1].end_s},
            ]
        },
    }


def _mcq_content(mcq: MCQ, wanted_video: str) -> dict:
    links = list(mcq.mcq_videos.select_related("video").defer("video__probe").order_by("order"))
    if not links:
        raise Http404("This MCQ has no video.")
    for link in links:
        link.video.project = mcq.project
    current = next((link.video for link in links if str(link.video_id) == wanted_video), links[0].video)
    moments = list(mcq.moments.order_by("order", "time_s", "pk"))
    q, start, end = mcq.question, mcq.referring_start, mcq.referring_end
    if start is not None and end is not None and 0 <= start < end <= len(q):
        parts = (q[:start], q[start:end], q[end:])
    else:
        parts = (q, "", "")
    return {
        "video": current,
        "video_links": links,
        "multi_video": len(links) > 1 or any(link.role != VideoRole.MAIN for link in links),
        "question_parts": parts,
        "options": [
            {
                "letter": OPTION_LETTERS[i] if i < len(OPTION_LETTERS) else str(i + 1),
                "text": text,
                "correct": i == mcq.correct_index,
            }
            for i, text in enumerate(mcq.options or [])
        ],
        "moments": [
            {"moment": m, "clock": clock_label(m.time_s), "here": m.video_id == current.pk, "number": i + 1}
            for i, m in enumerate(moments)
        ],
        "config": {"loops": []},
    }


# --- the examiner's page --------------------------------------------------------------------------------------


@dataclass
class VerdictForm:
    """The verdict form as sent (or as first shown): kept whole when the service refuses it."""

    decision: str = ""
    ok: frozenset = frozenset()
    comment: str = ""
    version: int | None = None
    opened_at: int | None = None
    then_next: bool = False
    sent: bool = False

    @classmethod
    def from_post(cls, data) -> VerdictForm:
        return cls(
            decision=data.get("decision", ""),
            ok=frozenset(data.getlist("ok")),
            comment=data.get("comment", ""),
            version=_int(data.get("version")),
            opened_at=_int(data.get("opened_at")),
            then_next=data.get("then_next") == "1",
            sent=True,
        )


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _why_no_verdict(user, project, item, kind: str, verdicts) -> str:
    """Why this person cannot give a verdict now ("" when they can)."""
    if not can(user, Action.EXAMINE, project, item):
        return "You wrote this item: someone else examines it."
    if item.status in (S.ACCEPTED, S.FLAGGED):
        return f"This item has been decided: it is {item.get_status_display().lower()}."
    waiting = item.status in (S.SCORED, S.EXAMINING) or (
        item.status == S.SUBMITTED and not gate_applies(project=project, kind=kind)
    )
    if not waiting:
        return f"This item is {item.get_status_display().lower()}, not waiting for an examiner."
    round_start = item_round(item)
    mine = next((v for v in verdicts if v.examiner_id == user.pk and v.round_started_at == round_start), None)
    if mine is not None:
        what = "passed" if mine.passed else "flagged"
        return f"You {what} this version; the item waits for the other examiner(s)."
    return ""


def _examine_context(request, project, kind: str, item, form: VerdictForm | None = None) -> dict:
    user = request.user
    if kind == ItemKind.QA_CHAIN:
        content = _chain_content(item)
    elif kind == ItemKind.CHAIN_PAIR:
        content = _pair_content(item)
    else:
        content = _mcq_content(item, request.GET.get("video", ""))
    video = content["video"]
    video.project = project
    context = player_context(video=video)

    verdicts = item_verdicts(item=item)
    round_start = item_round(item)
    why_not = _why_no_verdict(user, project, item, kind, verdicts)
    lease = examiner_lease(item=item, user=user)
    form = form or VerdictForm(version=item.version, opened_at=int(time.time()), then_next=_advances(request, lease))
    checks = [
        {"number": i + 1, "code": code, "label": label, "ok": (code in form.ok) if form.sent else True}
        for i, (code, label) in enumerate(checklist_for(kind))
    ]

    prev_version = previous_submitted_version(item=item)
    prev_diff = None
    if prev_version is not None and prev_version != item.version:
        try:
            prev_diff = item_diff(item, prev_version, item.version)
        except VersionUnknown:
            prev_diff = None
    since_opened = None
    if form.sent and form.version is not None and form.version != item.version:
        try:
            since_opened = item_diff(item, form.version, item.version)
        except VersionUnknown:
            since_opened = None

    context.update(content)
    context.update(
        {
            "project": project,
            "item": item,
            "kind": kind,
            "kind_label": ItemKind(kind).label,
            "label": item_label(item),
            "editor_url": item_path(kind=kind, item_id=item.pk, slug=project.slug),
            "history_url": reverse("reviewer:item_history", args=[project.slug, kind, item.pk]),
            "verdict_url": reverse("reviewer:examine_verdict", args=[project.slug, kind, item.pk]),
            "checks": checks,
            "other_code": REASON_OTHER,
            "form": form,
            "why_not": why_not,
            "lease": lease,
            "lease_seconds": lease.queue.lease_seconds if lease and lease.queue else DEFAULT_LEASE_SECONDS,
            "heartbeat_seconds": lease.queue.heartbeat_seconds if lease and lease.queue else DEFAULT_HEARTBEAT_SECONDS,
            "verdict_rows": [
                {
                    "verdict": v,
                    "reasons": reason_labels(kind, v.reasons),
                    "this_round": v.round_started_at == round_start,
                }
                for v in verdicts
            ],
            "events": [{"event": e, "reasons": reason_labels(kind, e.reasons)} for e in item_history(item=item)],
            "machine_diff": diff_against_machine_draft(item),
            "prev_version": prev_version,
            "prev_diff": prev_diff,
            "since_opened": since_opened,
            "is_admin": can(user, Action.ADMINISTER, project),
            "not_scored": not_scored_note(item),
            "presence_label": presence_label(item_presence(item=item, user=user)),
            "presence_url": reverse("reviewer:item_presence", args=[project.slug, kind, item.pk]),
            "presence_beat_s": PRESENCE_BEAT_S,
            "examine_config": {"kind": kind, "other": REASON_OTHER, **content["config"]},
            **item_scores_context(item, user=user),
        }
    )
    return context


# The person's last choice of "then open the next item", kept for the session.
_ADVANCE_KEY = "examine_then_next"


def _advances(request, lease: Assignment | None) -> bool:
    """Whether a verdict opens the next item: this person's last choice, else the queue's (off by default).

    Off, the examiner lands on their examining page with the next item one key (n) away, so nobody
    holds a lease on an item they never meant to open.
    """
    chosen = request.session.get(_ADVANCE_KEY)
    if chosen is not None:
        return bool(chosen)
    return bool(lease and lease.queue and lease.queue.auto_advance)


def _examine_page(request, project, kind, item, *, form=None, error: str = "", status: int = 200):
    context = _examine_context(request, project, kind, item, form)
    context["error"] = error
    if request.htmx and error:
        # htmx swaps only 2xx answers: the verdict panel comes back in place, with the message and the input.
        response = render(request, "reviewer/examine.html#verdict_panel", context)
        return reswap(retarget(response, "#verdict-panel"), "outerHTML")
    return render(request, "reviewer/examine.html", context, status=status)


@login_required
@require_safe
@never_cache  # Back shows the item as it is now, never an HTTP-cached copy
def examine_item(request, slug, kind, item_id):
    project = get_project_or_404(request.user, slug, Action.EXAMINE)
    item = _item(project, kind, item_id)
    return _examine_page(request, project, kind, item)


def _seconds_spent(form: VerdictForm, lease: Assignment | None) -> int | None:
    if lease is not None:
        return max(int((timezone.now() - lease.leased_at).total_seconds()), 0)
    if form.opened_at is not None:
        spent = int(time.time()) - form.opened_at
        if 0 <= spent <= LONGEST_VISIT_S:
            return spent
    return None


def _next_or_home(request, project) -> str:
    item, _why = examine_next_item(project=project, user=request.user)
    if item is None:
        messages.info(request, _("Nothing else is waiting for you to examine."))
        return reverse("reviewer:examine_home", args=[project.slug])
    return examine_url(project, _KIND_OF[type(item).__name__], item.pk)


@login_required
@require_POST
def examine_verdict(request, slug, kind, item_id):
    """Pass or flag. The checklist's unticked checks are a flag's reasons; a pass must leave none unticked."""
    project = get_project_or_404(request.user, slug, Action.EXAMINE)
    item = _item(project, kind, item_id)
    form = VerdictForm.from_post(request.POST)
    if not can(request.user, Action.EXAMINE, project, item):
        # Authorise before checking the form: the author hears "not yours", whatever they posted.
        error = "You wrote this item: someone else examines it."
        return _examine_page(request, project, kind, item, form=form, error=error, status=403)
    if form.decision not in ("pass", "flag"):
        return _examine_page(request, project, kind, item, form=form, error="Choose pass (p) or flag (f).", status=422)
    codes = [code for code, _ in checklist_for(kind)]
    checklist = {code: code in form.ok for code in codes}
    passed = form.decision == "pass"
    reasons = [] if passed else [code for code in codes if not checklist[code]]
    lease = examiner_lease(item=item, user=request.user)
    try:
        outcome = verdict_submit(
            item=item,
            examiner=request.user,
            passed=passed,
            reasons=reasons,
            comment=form.comment,
            checklist=checklist,
            expected_version=form.version,
            seconds_spent=_seconds_spent(form, lease),
        )
    except VerdictRefused as exc:
        item = _item(project, kind, item_id)  # as it is now
        message = str(exc)
        if exc.code == "stale":
            message += " Your ticks and comment are kept below."
        return _examine_page(request, project, kind, item, form=form, error=message, status=exc.status)
    messages.success(request, outcome.message)
    request.session[_ADVANCE_KEY] = form.then_next
    if form.then_next:
        return _redirect(request, _next_or_home(request, project))
    return _redirect(request, reverse("reviewer:examine_home", args=[slug]))


@login_required
@require_POST
def examine_next(request, slug):
    """Claim the next item from your examining queues (or, in none, the oldest free one) and open it."""
    project = get_project_or_404(request.user, slug, Action.EXAMINE)
    return _redirect(request, _next_or_home(request, project))


@login_required
@require_POST
def examine_reopen(request, slug, kind, item_id):
    """Admins: send accepted work back to revision, with the reason the reviser will read."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    item = _item(project, kind, item_id)
    back = _redirect(request, examine_url(project, kind, item.pk))
    try:
        item_reopen(item=item, by=request.user, comment=request.POST.get("comment", ""))
    except ReopenRefused as exc:
        return refusal_redirect(request, exc, back)
    messages.success(request, _("Reopened: the item is in revision now, and revisers see it in their list."))
    return back


# --- the examiner's home --------------------------------------------------------------------------------------

_LEASE_RELATED = ("queue", "qa_chain__clip__video", "chain_pair__video", "mcq")
_LEASE_DEFERRED = (
    "qa_chain__clip__video__probe",
    "chain_pair__video__probe",
    "qa_chain__machine_draft",
    "chain_pair__machine_draft",
    "mcq__machine_draft",
)


def _leases(project, user, stage: str) -> list[dict]:
    """This person's live leases at the stage, with their items loaded for labels (one query)."""
    leases = (
        Assignment.objects.filter(
            project=project,
            assignee=user,
            stage=stage,
            status=AssignmentStatus.ACTIVE,
            lease_expires_at__gt=timezone.now(),
        )
        .select_related(*_LEASE_RELATED)
        .defer(*_LEASE_DEFERRED)
        .order_by("lease_expires_at", "pk")
    )
    rows = []
    for lease in leases:
        item = lease.item
        item.project = project
        kind = lease.item_kind
        url = (
            examine_url(project, kind, item.pk)
            if stage == S.EXAMINING
            else item_path(kind=kind, item_id=item.pk, slug=project.slug)
        )
        rows.append({"lease": lease, "item": item, "label": item_label(item), "url": url, "kind": kind})
    return rows


def _stage_queues(project, user, stage: str) -> list[tuple]:
    queues = list(
        ReviewQueue.objects.filter(project=project, members=user, stage=stage).order_by("-priority", "name", "pk")
    )
    for queue in queues:
        queue.project = project
    stats = queue_stats(queues=queues) if queues else {}
    return [(queue, stats[queue.pk]) for queue in queues]


@login_required
@require_safe
def examine_home(request, slug):
    project = get_project_or_404(request.user, slug, Action.EXAMINE)
    user = request.user
    queues = _stage_queues(project, user, S.EXAMINING)
    waiting = []
    if not queues:
        for kind, items in examinable_items(project=project, user=user).items():
            waiting += [
                {"item": i, "kind": kind, "label": item_label(i), "url": examine_url(project, kind, i.pk)}
                for i in items
            ]
        # Oldest first across the kinds, as the next-item button takes them.
        waiting.sort(key=lambda row: (row["item"].submitted_at or ROUND_ZERO, row["item"].created_at))
        notes = not_scored_notes([row["item"] for row in waiting])
        for row in waiting:
            row["not_scored"] = notes.get((row["kind"], row["item"].pk))
    recent = [
        {"verdict": v, "item": v.item, "label": item_label(v.item), "url": examine_url(project, v.item_kind, v.item.pk)}
        for v in ExamVerdict.objects.filter(project=project, examiner=user)
        .select_related("qa_chain__clip__video", "chain_pair__video", "mcq")
        .defer(*_LEASE_DEFERRED)
        .order_by("-created_at", "-pk")[:10]
    ]
    return render(
        request,
        "reviewer/examine_home.html",
        {
            "project": project,
            "leases": _leases(project, user, S.EXAMINING),
            "queues": queues,
            "depth": sum(stats.depth for queue, stats in queues if queue.is_active),
            "waiting": waiting,
            "recent": recent,
            "may_revise": can(user, Action.REVISE, project),
            "is_admin": can(user, Action.ADMINISTER, project),
        },
    )


# --- the reviser's list -----------------------------------------------------------------------------------------


@login_required
@require_safe
def revise_list(request, slug):
    project = get_project_or_404(request.user, slug, Action.REVISE)
    user = request.user
    listing = revision_list(project=project, user=user)
    queues = _stage_queues(project, user, S.REVISING)
    return render(
        request,
        "reviewer/revise.html",
        {
            "project": project,
            "rows": listing.rows,
            "truncated": listing.truncated,
            "queues": queues,
            "leases": _leases(project, user, S.REVISING),
            "may_examine": can(user, Action.EXAMINE, project),
            "is_admin": can(user, Action.ADMINISTER, project),
        },
    )


def start_revising_and_open(request, project, kind: str, item):
    """Take a flagged item into revision (\"Start revising\", and a claim from a revising queue) and open its editor."""
    try:
        started = revision_start(item=item, reviser=request.user)
    except RevisionRefused as exc:  # not_allowed: 403
        return refusal_redirect(request, exc, _redirect(request, reverse("reviewer:revise_list", args=[project.slug])))
    if started.already:
        messages.info(request, _("This item is already in revision: carry on in its editor."))
    else:
        messages.success(request, _("You are revising this item: fix what was flagged, then submit it again."))
    return _redirect(request, item_path(kind=kind, item_id=item.pk, slug=project.slug))


@login_required
@require_POST
def revise_start(request, slug, kind, item_id):
    project = get_project_or_404(request.user, slug, Action.REVISE)
    item = _item(project, kind, item_id)
    return start_revising_and_open(request, project, kind, item)


@login_required
@require_POST
def revise_next(request, slug):
    """The next flagged item from your revising queues (or, in none, the oldest flagged one), in its editor."""
    project = get_project_or_404(request.user, slug, Action.REVISE)
    item, _why = revise_next_item(project=project, user=request.user)
    if item is None:
        messages.info(request, _("Nothing is waiting for you to revise."))
        return _redirect(request, reverse("reviewer:revise_list", args=[slug]))
    item.project = project
    kind = _KIND_OF[type(item).__name__]
    if item.status == S.FLAGGED:
        return start_revising_and_open(request, project, kind, item)
    return _redirect(request, item_path(kind=kind, item_id=item.pk, slug=slug))
