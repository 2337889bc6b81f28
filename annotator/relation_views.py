"""The relation editor: two adjacent chains side by side and the links between their turns.

The page, and JSON endpoints to accept, reject, retype, add and remove links, rewrite the later QA
and submit. The protocol of every editor (annotator/editor_endpoints): each answer carries the chain
pair's whole state; a stale version gets 409 with `theirs`.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from projects.permissions import Action, get_project_or_404
from reviewer.workspace import panels_context
from videos.player_views import clock_label, player_context

from .concurrency import StaleVersion
from .edit_rights import may_edit, why_not_editable
from .editor_endpoints import (
    BadRequest,
    NotAllowed,
    conflict,
    editor_endpoint,
    error,
    expected_version,
    json_body,
    next_url,
    saved,
    saved_by,
    submitted_payload,
)
from .lifecycle import EDITABLE
from .models import ChainPair, QAChain, Relation, RelationDecision
from .relations import (
    NoNextChain,
    chain_pair_create,
    chain_pair_submit,
    relation_add,
    relation_decide,
    relation_remove,
    relation_retype,
    relation_rewrite,
    relation_types,
)
from .selectors import chain_pair_contents, chain_pair_for_editor


def _pair_or_404(request, slug, pair_id) -> ChainPair:
    project = get_project_or_404(request.user, slug)
    chain_pair = chain_pair_for_editor(project=project, pair_id=pair_id)
    if chain_pair is None:
        raise Http404("No such chain pair in this project.")
    return chain_pair


@login_required
@require_POST
def pair_new(request, slug):
    """POST /p/<slug>/pairs/new/ chain=<id>: the chain pair of that chain and the next clip's, opened to link by hand.

    The relation-draft step makes chain pairs with a model; this one needs none. An existing pair
    is opened as it is.
    """
    project = get_project_or_404(request.user, slug, Action.ANNOTATE)
    raw = request.POST.get("chain", "")
    chain = None
    if raw.isdecimal():
        chain = QAChain.objects.filter(pk=int(raw), project=project).select_related("clip").first()
    if chain is None:
        messages.error(request, gettext("Choose a QA chain of this project to link with the next clip's."))
        return redirect("annotator:work", slug=project.slug)
    try:
        chain_pair = chain_pair_create(chain_before=chain, user=request.user)
    except NoNextChain as exc:
        messages.error(request, str(exc))
        return redirect("annotator:chain_editor", slug=project.slug, chain_id=chain.pk)
    return redirect("annotator:pair_editor", slug=project.slug, pair_id=chain_pair.pk)


def _turns(chain, pairs) -> dict:
    return {
        "chainId": chain.pk,
        "clipIndex": chain.clip.index,
        "start": chain.clip.start_s,
        "end": chain.clip.end_s,
        "range": f"{clock_label(chain.clip.start_s)} – {clock_label(chain.clip.end_s)}",
        "pairs": [{"id": p.pk, "question": p.question, "answer": p.answer, "skill": p.skill} for p in pairs],
    }


def chain_pair_state(*, chain_pair: ChainPair, editable: bool) -> dict:
    before, after, relations = chain_pair_contents(chain_pair=chain_pair)
    types = relation_types(chain_pair.project)
    return {
        "id": chain_pair.pk,
        "version": chain_pair.version,
        "status": chain_pair.status,
        "statusLabel": chain_pair.get_status_display(),
        "editable": editable,
        "before": _turns(chain_pair.chain_before, before),
        "after": _turns(chain_pair.chain_after, after),
        "relations": [
            {
                "id": r.pk,
                "from": r.from_pair_id,
                "to": r.to_pair_id,
                "fromNumber": r.from_pair.index + 1,
                "toNumber": r.to_pair.index + 1,
                "type": r.relation_type,
                "typeLabel": types.get(r.relation_type, {}).get("label", r.relation_type),
                "origin": r.origin,
                "decision": r.decision,
                "rationale": r.rationale,
                "originalQuestion": r.original_question,
                "originalAnswer": r.original_answer,
                "rewrittenQuestion": r.rewritten_question,
                "rewrittenAnswer": r.rewritten_answer,
                # The later turn reads as this rewrite now.
                "applied": bool(r.rewritten_question)
                and (r.to_pair.question, r.to_pair.answer) == (r.rewritten_question, r.rewritten_answer),
            }
            for r in relations
        ],
        "openCandidates": sum(1 for r in relations if r.decision == RelationDecision.CANDIDATE),
    }


def _state_for(chain_pair: ChainPair, user) -> dict:
    fresh = chain_pair_for_editor(project=chain_pair.project, pair_id=chain_pair.pk)
    editable = fresh.status in EDITABLE and may_edit(user, fresh.project, fresh)
    return chain_pair_state(chain_pair=fresh, editable=editable)


@login_required
@require_safe
@never_cache  # Back shows the item as it is now, never an HTTP-cached copy
def pair_editor(request, slug, pair_id):
    """GET /p/<slug>/pairs/<id>/: the links between chains i and i+1, with the rewrite guideline at hand."""
    chain_pair = _pair_or_404(request, slug, pair_id)
    project = chain_pair.project
    editable = chain_pair.status in EDITABLE and may_edit(request.user, project, chain_pair)
    state = chain_pair_state(chain_pair=chain_pair, editable=editable)
    types = list(relation_types(project).values())
    # The client puts a link's id in place of the 0 and adds the action ("decide/", "rewrite/" …).
    link_base = reverse("annotator:pair_link_decide", args=[project.slug, chain_pair.pk, 0]).removesuffix("decide/")
    context = player_context(video=chain_pair.video)
    context.update(
        {
            "project": project,
            "chain_pair": chain_pair,
            "state": state,
            "types": types,
            "editable": editable,
            "readonly_reason": "" if editable else why_not_editable(request.user, project, chain_pair, "set of links"),
            "next_url": next_url(project, "pair", chain_pair.pk),
            "editor_config": {
                "pairId": chain_pair.pk,
                "span": {"start": chain_pair.chain_before.clip.start_s, "end": chain_pair.chain_after.clip.end_s},
                "types": [{"code": t["code"], "label": t["label"], "guideline": t.get("guideline", "")} for t in types],
                "urls": {
                    "add": reverse("annotator:pair_link_add", args=[project.slug, chain_pair.pk]),
                    "link": link_base,
                    "submit": reverse("annotator:pair_submit", args=[project.slug, chain_pair.pk]),
                    "next": next_url(project, "pair", chain_pair.pk),
                    "chainBefore": reverse("annotator:chain_editor", args=[project.slug, chain_pair.chain_before_id]),
                    "chainAfter": reverse("annotator:chain_editor", args=[project.slug, chain_pair.chain_after_id]),
                },
                "state": state,
            },
        }
    )
    context.update(panels_context(item=chain_pair, user=request.user))
    return render(request, "annotator/relation_editor.html", context)


def _endpoint(action):
    """An editor endpoint (editor_endpoints) on a chain pair, and on one of its links when the URL names one."""

    @editor_endpoint
    def view(request, slug, pair_id, link_id=None):
        chain_pair = _pair_or_404(request, slug, pair_id)
        if not may_edit(request.user, chain_pair.project, chain_pair):
            raise NotAllowed(why_not_editable(request.user, chain_pair.project, chain_pair, "set of links"))
        body = json_body(request)
        version = expected_version(body)
        relation = None
        if link_id is not None:
            relation = Relation.objects.filter(pk=link_id, chain_pair=chain_pair).first()
            if relation is None:
                return error("That link is no longer there (its turn may have been deleted); reload.", 404)
            relation.chain_pair = chain_pair
        try:
            extra = action(request, chain_pair, relation, body, version) or {}
        except StaleVersion as exc:
            theirs = {**_state_for(chain_pair, request.user), "savedBy": saved_by(chain_pair)}
            message = (
                f"These links were changed by someone else (now version {theirs['version']}) after you opened "
                f"version {exc.expected}. Nothing of yours was applied; look again and redo it."
            )
            return conflict(theirs=theirs, yours=body, message=message)
        return saved(_state_for(chain_pair, request.user), **extra)

    view.__name__ = action.__name__
    view.__doc__ = action.__doc__
    return view


def _id(body, name) -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"`{name}` must be the id of a turn.")
    return value


def _str(body, name) -> str:
    value = body.get(name, "")
    if not isinstance(value, str):
        raise BadRequest(f"`{name}` must be text.")
    return value


@_endpoint
def pair_link_add(request, chain_pair, relation, body, version):
    """POST …/links/ {version, from, to, type, rationale}: a link drawn by hand (accepted)."""
    created = relation_add(
        chain_pair=chain_pair,
        from_pair_id=_id(body, "from"),
        to_pair_id=_id(body, "to"),
        relation_type=_str(body, "type"),
        rationale=_str(body, "rationale"),
        expected_version=version,
        user=request.user,
    )
    return {"created": created.pk}


@_endpoint
def pair_link_decide(request, chain_pair, relation, body, version):
    """POST …/links/<id>/decide/ {version, decision: accepted | rejected | candidate}."""
    relation_decide(relation=relation, decision=_str(body, "decision"), expected_version=version, user=request.user)


@_endpoint
def pair_link_type(request, chain_pair, relation, body, version):
    """POST …/links/<id>/type/ {version, type}."""
    relation_retype(relation=relation, relation_type=_str(body, "type"), expected_version=version, user=request.user)


@_endpoint
def pair_link_rewrite(request, chain_pair, relation, body, version):
    """POST …/links/<id>/rewrite/ {version, question, answer}: both empty drops the rewrite."""
    relation_rewrite(
        relation=relation,
        question=_str(body, "question"),
        answer=_str(body, "answer"),
        expected_version=version,
        user=request.user,
    )


@_endpoint
def pair_link_remove(request, chain_pair, relation, body, version):
    """POST …/links/<id>/remove/ {version}: only links a person added."""
    relation_remove(relation=relation, expected_version=version, user=request.user)


@_endpoint
def pair_submit(request, chain_pair, relation, body, version):
    """POST …/submit/ {version}: hand the links on once every candidate is decided."""
    submitted = chain_pair_submit(chain_pair=chain_pair, user=request.user, expected_version=version)
    # The editor stays on the submitted links and says it there; no message is kept for the next page.
    next_page = next_url(chain_pair.project, "pair", chain_pair.pk)
    return submitted_payload(request, submitted, noun="Links", next_page=next_page, keep_message=False)
