"""Browser screens for MCQs (list, editor beside the player, JSON save and submit) and the
"unusable video" flag any workspace page can include.

Thin: authorise here, then call annotator.mcqs / videos.unusable. The editor's save answers with
the state as stored and the findings of annotator.mcq_checks, so the page and the server show the
same warnings; a stale save answers 409 with the stored version beside the one that was sent (the
protocol of every editor, annotator/editor_endpoints).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import trigger_client_event

from projects.models import Project, ProjectKind
from projects.permissions import Action, can, get_project_or_404
from reviewer.workspace import panels_context
from videos.models import Video
from videos.player_views import player_context
from videos.unusable import (
    UnusableRefused,
    unusable_label,
    unusable_reasons,
    video_clear_unusable,
    video_flag_unusable,
)

from . import mcq_checks
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
    kept_message,
    saved,
    saved_by,
    submitted_payload,
)
from .mcqs import (
    MCQInvalid,
    category_choices,
    mcq_create,
    mcq_findings,
    mcq_next,
    mcq_rules,
    mcq_save,
    mcq_state,
    mcq_submit,
    mcq_undo,
)
from .models import MCQ, ItemStatus, MCQVideo, VideoRole

PAGE_SIZE = 50
ANNOTATOR_STATUSES = [ItemStatus.DRAFT, ItemStatus.ANNOTATING]
REVISER_STATUSES = [ItemStatus.REVISING]


# --- who may do what (annotator.edit_rights decides who edits) -----------------------------------


def _workable_statuses(user, project) -> list[str]:
    statuses = []
    if can(user, Action.ANNOTATE, project):
        statuses += ANNOTATOR_STATUSES
    if can(user, Action.REVISE, project):
        statuses += REVISER_STATUSES
    return statuses


def _mcq_or_404(request, slug, mcq_id) -> tuple[Project, MCQ]:
    """The same 404 for a missing project, a stranger, and an MCQ of another project."""
    project = get_project_or_404(request.user, slug)
    mcq = get_object_or_404(MCQ, pk=mcq_id, project=project)
    mcq.project = project
    return project, mcq


def _editable_mcq(request, slug, mcq_id) -> tuple[Project, MCQ]:
    project, mcq = _mcq_or_404(request, slug, mcq_id)
    if not may_edit(request.user, project, mcq):
        raise NotAllowed(why_not_editable(request.user, project, mcq, "MCQ"))
    return project, mcq


def _findings(found: list[mcq_checks.Finding]) -> list[dict]:
    return [f.as_dict() for f in found]


# --- list, new, next -----------------------------------------------------------------------------


@login_required
@require_safe
def mcq_list(request, slug):
    """GET /p/<slug>/mcqs/: MCQs with their videos and moment counts, filtered; a fixed number of queries."""
    project = get_project_or_404(request.user, slug)
    filters = {k: request.GET.get(k, "").strip() for k in ("status", "category")}
    items = MCQ.objects.filter(project=project)
    if filters["status"] in ItemStatus.values:
        items = items.filter(status=filters["status"])
    if filters["category"]:
        items = items.filter(category=filters["category"])
    items = (
        items.annotate(moment_count=Count("moments", distinct=True))
        .select_related("author")
        .only(
            "pk",
            "question",
            "status",
            "category",
            "level",
            "task_group",
            "version",
            "updated_at",
            "author__username",
            "project_id",
        )
        .prefetch_related(
            Prefetch(
                "mcq_videos",
                queryset=MCQVideo.objects.select_related("video").only(
                    "mcq_id", "order", "role", "video__name", "video__unusable_reason"
                ),
            )
        )
        .order_by("pk")
    )
    page = Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))
    may_annotate = can(request.user, Action.ANNOTATE, project)
    multi = project.kind == ProjectKind.MVPBENCH
    context = {
        "project": project,
        "page": page,
        "filters": filters,
        "statuses": ItemStatus.choices,
        "categories": category_choices(project=project, multi_video=multi),
        "may_annotate": may_annotate,
        "multi_video": multi,
        "videos": list(Video.objects.filter(project=project).only("pk", "name").order_by("name"))
        if may_annotate
        else [],
        "has_work": bool(_workable_statuses(request.user, project)),
    }
    template = "annotator/mcq_list.html#rows" if request.htmx else "annotator/mcq_list.html"
    return render(request, template, context)


@login_required
@require_POST
def mcq_new(request, slug):
    """POST /p/<slug>/mcqs/new/ video=<id> (and, for a multi-video item, role=reference)."""
    project = get_project_or_404(request.user, slug, Action.ANNOTATE)
    raw = request.POST.get("video", "")
    video = Video.objects.filter(project=project, pk=int(raw)).first() if raw.isdecimal() else None
    if video is None:
        messages.error(request, _("Choose a video of this project for the new MCQ."))
        return redirect("annotator:mcq_list", slug=slug)
    role = VideoRole.REFERENCE if request.POST.get("role") == VideoRole.REFERENCE else VideoRole.MAIN
    try:
        mcq = mcq_create(project=project, videos=[(video, role)], user=request.user)
    except MCQInvalid as exc:
        messages.error(request, str(exc))
        return redirect("annotator:mcq_list", slug=slug)
    return redirect("annotator:mcq_editor", slug=slug, mcq_id=mcq.pk)


@login_required
@require_safe
def mcq_next_view(request, slug):
    """GET /p/<slug>/mcqs/next/?after=<id>: the next item this person can work on."""
    project = get_project_or_404(request.user, slug)
    statuses = _workable_statuses(request.user, project)
    after = request.GET.get("after", "")
    after_id = int(after) if after.isdecimal() else None
    item = mcq_next(project=project, statuses=statuses, after_id=after_id, user=request.user)
    if not statuses or item is None:
        messages.info(request, _("No MCQ is waiting for you in this project."))
        return redirect("annotator:mcq_list", slug=slug)
    return redirect("annotator:mcq_editor", slug=slug, mcq_id=item.pk)


# --- the editor ----------------------------------------------------------------------------------


def unusable_form_context(*, video: Video, user, project: Project) -> dict:
    """What templates/annotator/mcq_editor.html#unusable_form needs; other editors include it too."""
    return {
        "unusable_video": video,
        "unusable_project": project,
        "unusable_reasons": unusable_reasons(project=project),
        "unusable_current": unusable_label(project=project, code=video.unusable_reason),
        "unusable_may_flag": can(user, Action.ANNOTATE, project),
        "unusable_may_clear": can(user, Action.ADMINISTER, project),
    }


@login_required
@require_safe
@never_cache  # Back shows the item as it is now, never an HTTP-cached copy
def mcq_editor(request, slug, mcq_id):
    """GET /p/<slug>/mcqs/<id>/[?video=<id>]: the editor beside the player of one of its videos."""
    project, mcq = _mcq_or_404(request, slug, mcq_id)
    links = list(mcq.mcq_videos.select_related("video", "video__unusable_by").defer("video__probe").order_by("order"))
    moments = list(mcq.moments.order_by("order", "time_s", "pk"))
    for link in links:
        link.video.project = project
    if not links:
        raise Http404("This MCQ has no video.")
    wanted = request.GET.get("video", "")
    current = next((link.video for link in links if str(link.video_id) == wanted), links[0].video)

    state = mcq_state(mcq=mcq, links=links, moments=moments)
    multi = any(link.role != VideoRole.MAIN for link in links) or project.kind == ProjectKind.MVPBENCH
    rules = mcq_rules(project=project, multi_video=multi)
    warnings, blockers = mcq_findings(mcq=mcq, state=state)
    editable = may_edit(request.user, project, mcq)
    config = {
        "state": state,
        "rules": rules.as_dict(),
        "checks": {
            "nearDuplicateRatio": mcq_checks.NEAR_DUPLICATE_RATIO,
            "longestRatio": mcq_checks.LONGEST_RATIO,
            "longestMinExtraChars": mcq_checks.LONGEST_MIN_EXTRA_CHARS,
            "contentWordMinChars": mcq_checks.CONTENT_WORD_MIN_CHARS,
            "stopwords": sorted(mcq_checks.STOPWORDS),
        },
        "categories": category_choices(project=project, multi_video=multi),
        "currentVideoId": current.pk,
        "editable": editable,
        "multiVideo": multi,
        "urls": {
            "save": reverse("annotator:mcq_save", args=[slug, mcq.pk]),
            "submit": reverse("annotator:mcq_submit", args=[slug, mcq.pk]),
            "undo": reverse("annotator:mcq_undo", args=[slug, mcq.pk]),
            "next": reverse("annotator:mcq_next", args=[slug]) + f"?after={mcq.pk}",
            "editor": reverse("annotator:mcq_editor", args=[slug, mcq.pk]),
        },
    }
    context = player_context(video=current)
    context.update(
        {
            "project": project,
            "mcq": mcq,
            "links": links,
            "current_video": current,
            "state": state,
            "warnings": warnings,
            "blockers": blockers,
            "categories": config["categories"],
            "editable": editable,
            "readonly_reason": "" if editable else why_not_editable(request.user, project, mcq, "MCQ"),
            "multi_video": multi,
            "mcq_config": config,
            "project_videos": list(Video.objects.filter(project=project).only("pk", "name").order_by("name"))
            if editable and multi
            else [],
            "roles": VideoRole.choices,
        }
    )
    context.update(unusable_form_context(video=current, user=request.user, project=project))
    context.update(panels_context(item=mcq, user=request.user))
    return render(request, "annotator/mcq_editor.html", context)


@editor_endpoint
def mcq_save_view(request, slug, mcq_id):
    """POST JSON {version, question, referring_start, …}: the protocol of annotator/editor_endpoints.

    200 with the stored state and findings; 409 on a stale version with `theirs` (stored) and
    `yours` (sent), so the editor can show both; 422 with per-field `errors` for content that cannot
    be saved; 400 for a malformed request; 403 when the item is not this person's to edit.
    """
    project, mcq = _editable_mcq(request, slug, mcq_id)
    body = json_body(request)
    data = body.get("data", body)
    version = expected_version(body, missing="Say which version you edited (`version`).")
    if not isinstance(data, dict):
        raise BadRequest("`data` must be a JSON object.")
    try:
        result = mcq_save(
            mcq=mcq,
            expected_version=version,
            user=request.user,
            question=data.get("question", ""),
            referring_start=data.get("referring_start"),
            referring_end=data.get("referring_end"),
            question_wo_referring_query=data.get("question_wo_referring_query"),
            options=data.get("options", []),
            correct_index=data.get("correct_index"),
            category=data.get("category", ""),
            level=data.get("level"),
            videos=data.get("videos"),
            moments=data.get("moments"),
        )
    except StaleVersion as exc:
        return _conflict(exc, project=project, yours={"version": version, **data})
    return saved(result.state, warnings=_findings(result.warnings), blockers=_findings(result.blockers))


def _conflict(exc: StaleVersion, *, project, yours: dict):
    current = exc.item
    current.project = project
    theirs = {**mcq_state(mcq=current), "savedBy": saved_by(current)}
    return conflict(theirs=theirs, yours=yours, message=kept_message(exc, noun="MCQ", theirs=theirs))


@editor_endpoint
def mcq_undo_view(request, slug, mcq_id):
    """POST JSON {version}: the content of the version before comes back as a new version."""
    project, mcq = _editable_mcq(request, slug, mcq_id)
    version = expected_version(json_body(request), missing="Say which version you are undoing (`version`).")
    try:
        result = mcq_undo(mcq=mcq, user=request.user, expected_version=version)
    except StaleVersion as exc:
        return _conflict(exc, project=project, yours={"version": version})
    except MCQInvalid as exc:
        return error(f"That version cannot come back: {exc}", exc.status, **exc.details)
    return saved(
        result.state,
        warnings=_findings(result.warnings),
        blockers=_findings(result.blockers),
        restoredVersion=result.restored_version,
    )


@editor_endpoint
def mcq_submit_view(request, slug, mcq_id):
    """POST JSON {version}: 200 the submitted state with the next item's URL; 422 with `blockers`;
    409 stale (with `theirs`)."""
    project, mcq = _editable_mcq(request, slug, mcq_id)
    version = expected_version(json_body(request), missing="`version` must be a whole number.", optional=True)
    try:
        submitted = mcq_submit(mcq=mcq, user=request.user, expected_version=version)
    except StaleVersion as exc:
        return _conflict(exc, project=project, yours={"version": version})
    next_page = reverse("annotator:mcq_next", args=[slug]) + f"?after={mcq.pk}"
    # The editor stays on the page and says it there; no message is kept for the next page.
    return saved(
        mcq_state(mcq=mcq),
        **submitted_payload(request, submitted, noun="MCQ", next_page=next_page, keep_message=False),
    )


# --- unusable videos -----------------------------------------------------------------------------


def _back(request, fallback: str):
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = fallback
    return redirect(target)


@login_required
@require_POST
def video_unusable(request, slug, video_id):
    """POST action=flag reason=… note=… (annotators) or action=clear (admins). htmx gets the form back."""
    project = get_project_or_404(request.user, slug)
    video = get_object_or_404(Video.objects.defer("probe"), pk=video_id, project=project)
    video.project = project
    action = request.POST.get("action", "flag")
    error = ""
    if action == "clear":
        if not can(request.user, Action.ADMINISTER, project):
            raise PermissionDenied(_("Only a project admin can clear the unusable flag."))
        video_clear_unusable(video=video)
        done = _("%(video)s is usable again.") % {"video": video.name}
    else:
        if not can(request.user, Action.ANNOTATE, project):
            raise PermissionDenied(_("Your role in this project does not allow flagging videos."))
        try:
            video_flag_unusable(
                video=video,
                reason=request.POST.get("reason", ""),
                note=request.POST.get("note", ""),
                user=request.user,
            )
            done = _("%(video)s is flagged unusable (%(reason)s).") % {
                "video": video.name,
                "reason": unusable_label(project=project, code=video.unusable_reason),
            }
        except UnusableRefused as exc:
            error, done = str(exc), ""
    if request.htmx:
        context = unusable_form_context(video=video, user=request.user, project=project)
        context.update(
            {
                "unusable_error": error,
                "unusable_done": done,
                "unusable_note_value": request.POST.get("note", ""),
                # The page the form sits on, not this endpoint: a later plain submit returns there.
                "unusable_next": request.POST.get("next", ""),
            }
        )
        # 200 either way: htmx swaps only successful answers, and the fragment shows the refusal.
        response = render(request, "annotator/mcq_editor.html#unusable_form", context)
        if not error:
            trigger_client_event(
                response,
                "vidqa:unusable-changed",
                {"videoId": video.pk, "label": context["unusable_current"]},
            )
        return response
    if error:
        messages.error(request, error)
    else:
        messages.success(request, done)
    return _back(request, reverse("videos:player", args=[slug, video.pk]))
