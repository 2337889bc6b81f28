"""The QA chain editor: the page, and JSON endpoints for autosave, undo and submit.

Every endpoint fetches and authorises here: a stranger or a missing chain is a 404, a member whose
role may not edit the chain at its stage gets 403. The JSON protocol is annotator/editor_endpoints':
200 with the new state, 409 with `theirs` (the chain as it is now) on a stale version, 422 with
`errors` for content that cannot be saved, 400 for a malformed request.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from projects.permissions import Action, can, get_project_or_404
from reviewer.workspace import panels_context
from videos.models import Clip
from videos.player_views import clock_label, player_context

from .chains import ChainExists, chain_create, chain_hints, chain_save, chain_submit, chain_undo, chain_warnings
from .concurrency import StaleVersion
from .edit_rights import may_edit, why_not_editable
from .editor_endpoints import (
    NotAllowed,
    conflict,
    editor_endpoint,
    expected_version,
    json_body,
    kept_message,
    next_url,
    saved,
    saved_by,
    submitted_payload,
)
from .lifecycle import EDITABLE
from .models import QAChain
from .selectors import chain_for_editor, chain_pairs_for_editor, neighbour_pair


def _chain_or_404(request, slug, chain_id) -> QAChain:
    project = get_project_or_404(request.user, slug)
    chain = chain_for_editor(project=project, chain_id=chain_id)
    if chain is None:
        raise Http404("No such chain in this project.")
    return chain


def chain_state(*, chain: QAChain, pairs, user=None, editable: bool | None = None) -> dict:
    """The chain as the editor holds it (the JSON every endpoint answers with)."""
    hints = chain_hints(chain=chain, pairs=pairs)
    if editable is None:
        editable = user is not None and chain.status in EDITABLE and may_edit(user, chain.project, chain)
    return {
        "id": chain.pk,
        "version": chain.version,
        "status": chain.status,
        "statusLabel": chain.get_status_display(),
        "editable": editable,
        "pairs": [
            {
                "id": p.pk,
                "question": p.question,
                "answer": p.answer,
                "skill": p.skill,
                "links": getattr(p, "links", 0),
                "hints": hints.get(i, []),
            }
            for i, p in enumerate(pairs)
        ],
        "warnings": chain_warnings(chain=chain, pairs=pairs),
    }


def _current_state(chain: QAChain, user) -> dict:
    fresh = chain_for_editor(project=chain.project, chain_id=chain.pk)
    return chain_state(chain=fresh, pairs=chain_pairs_for_editor(chain=fresh), user=user)


def _conflict(exc: StaleVersion, chain: QAChain, user, yours):
    theirs = {**_current_state(chain, user), "savedBy": saved_by(chain)}
    return conflict(theirs=theirs, yours=yours, message=kept_message(exc, noun="chain", theirs=theirs))


@login_required
@require_POST
def chain_new(request, slug):
    """POST /p/<slug>/chains/new/ clip=<id>: a chain written by hand on a clip that has none; opens its editor.

    No model is needed: the chain starts empty, as the annotator's own work. A clip that already has
    a chain opens that one instead.
    """
    project = get_project_or_404(request.user, slug, Action.ANNOTATE)
    raw = request.POST.get("clip", "")
    clip = None
    if raw.isdecimal():
        clip = Clip.objects.filter(pk=int(raw), video__project=project).select_related("video").first()
    if clip is None:
        messages.error(request, gettext("Choose a clip of this project for the new QA chain."))
        return redirect("annotator:work", slug=project.slug)
    clip.video.project = project
    try:
        created = chain_create(clip=clip, user=request.user, turns=[])
    except ChainExists as exc:
        messages.info(request, str(exc))
        return redirect("annotator:chain_editor", slug=project.slug, chain_id=exc.chain_id)
    return redirect("annotator:chain_editor", slug=project.slug, chain_id=created.chain.pk)


@login_required
@require_safe
@never_cache  # Back shows the item as it is now, never an HTTP-cached copy
def chain_editor(request, slug, chain_id):
    """GET /p/<slug>/chains/<id>/: the clip playing in a loop beside its turns, edited with the keyboard."""
    chain = _chain_or_404(request, slug, chain_id)
    project, clip, video = chain.project, chain.clip, chain.clip.video
    pairs = chain_pairs_for_editor(chain=chain)
    editable = chain.status in EDITABLE and may_edit(request.user, project, chain)
    pair_before, pair_after = neighbour_pair(chain, "pair_as_after"), neighbour_pair(chain, "pair_as_before")
    # Where no chain pair joins this chain to a neighbour that has a chain, links can be drawn by hand.
    may_link = can(request.user, Action.ANNOTATE, project)
    skills = project.taxonomy("skills")
    context = player_context(video=video)
    context.update(
        {
            "project": project,
            "chain": chain,
            "clip": clip,
            "clip_range": f"{clock_label(clip.start_s)} – {clock_label(clip.end_s)}",
            "pairs": pairs,
            "skills": [{"number": i + 1, **s} for i, s in enumerate(skills)],
            "editable": editable,
            "readonly_reason": "" if editable else why_not_editable(request.user, project, chain, "chain"),
            "pair_before": pair_before,
            "pair_after": pair_after,
            "link_prev_chain": chain.prev_chain_id if may_link and pair_before is None else None,
            "link_next_chain": chain.next_chain_id if may_link and pair_after is None else None,
            "next_url": next_url(project, "chain", chain.pk),
            "editor_config": {
                "chainId": chain.pk,
                "clip": {"index": clip.index, "start": clip.start_s, "end": clip.end_s},
                "skills": [s["code"] for s in skills],
                "urls": {
                    "save": reverse("annotator:chain_save", args=[project.slug, chain.pk]),
                    "undo": reverse("annotator:chain_undo", args=[project.slug, chain.pk]),
                    "submit": reverse("annotator:chain_submit", args=[project.slug, chain.pk]),
                    "next": next_url(project, "chain", chain.pk),
                },
                "state": chain_state(chain=chain, pairs=pairs, editable=editable),
            },
        }
    )
    context.update(panels_context(item=chain, user=request.user))
    return render(request, "annotator/chain_editor.html", context)


def _editable_chain(request, slug, chain_id) -> QAChain:
    chain = _chain_or_404(request, slug, chain_id)
    if not may_edit(request.user, chain.project, chain):
        raise NotAllowed(why_not_editable(request.user, chain.project, chain, "chain"))
    return chain


def _endpoint(action):
    """An editor endpoint (editor_endpoints) that fetches and authorises the chain, then reads the body."""

    @editor_endpoint
    def view(request, slug, chain_id):
        chain = _editable_chain(request, slug, chain_id)
        return action(request, chain, json_body(request))

    view.__name__ = action.__name__
    view.__doc__ = action.__doc__
    return view


def _saved_response(request, saved_item, **extra):
    pairs = chain_pairs_for_editor(chain=saved_item.chain)
    return saved(chain_state(chain=saved_item.chain, pairs=pairs, user=request.user), **extra)


@_endpoint
def chain_save_view(request, chain, body):
    """POST …/save/ {version, pairs: [{id|null, question, answer, skill}]}: the whole list, in order."""
    version = expected_version(body)
    pairs = body.get("pairs")
    try:
        result = chain_save(chain=chain, expected_version=version, pairs=pairs, user=request.user)
    except StaleVersion as exc:
        return _conflict(exc, chain, request.user, {"version": version, "pairs": pairs})
    return _saved_response(request, result)


@_endpoint
def chain_undo_view(request, chain, body):
    """POST …/undo/ {version}: the content of the previous version comes back as a new version."""
    version = expected_version(body)
    try:
        result = chain_undo(chain=chain, user=request.user, expected_version=version)
    except StaleVersion as exc:
        return _conflict(exc, chain, request.user, {"version": version})
    return _saved_response(request, result, restoredVersion=result.restored_version)


@_endpoint
def chain_submit_view(request, chain, body):
    """POST …/submit/ {version}: hand the chain on as it is at that version."""
    version = expected_version(body)
    try:
        submitted = chain_submit(chain=chain, user=request.user, expected_version=version)
    except StaleVersion as exc:
        return _conflict(exc, chain, request.user, {"version": version})
    next_page = next_url(chain.project, "chain", chain.pk)
    # The editor stays on the submitted chain and says it there; no message is kept for the next page.
    return saved(
        _current_state(chain, request.user),
        **submitted_payload(request, submitted, noun="Chain", next_page=next_page, keep_message=False),
    )
