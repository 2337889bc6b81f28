"""Browser screens for machine drafts (project admins): start draft runs and watch them, and curate
the seed-question library per task by keyboard."""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from jobs.models import BackgroundJob
from jobs.selectors import job_get, jobs_for_project
from jobs.services import JobAlreadyRunning
from llm.endpoints import NoModelEndpoint
from projects.permissions import Action, get_project_or_404
from projects.services import ProjectArchived
from videos.models import CurationStatus, Video

from .drafts import (
    DRAFT_STEPS,
    STEP_BY_KIND,
    draft_coverage,
    draft_run_start,
    draft_tasks,
    draft_videos,
    seed_create,
    seed_update,
)
from .models import SeedQuestion, SeedStatus

JOBS_SHOWN = 20
VIDEO_CHOICES_MAX = 500  # beyond this the "one video" field takes a name instead of a list


def _admin_project(request, slug):
    return get_project_or_404(request.user, slug, Action.ADMINISTER)


def _calls_url(request, project, job: BackgroundJob) -> str:
    """The admin list of exactly the calls a run made (its step, project and id range); staff only."""
    calls = (job.result or {}).get("calls") or {}
    if not request.user.is_staff or not calls.get("count"):
        return ""
    try:
        base = reverse("admin:llm_llmcall_changelist")
    except NoReverseMatch:
        return ""
    query = {
        "project__id__exact": project.pk,
        "step__exact": STEP_BY_KIND[job.kind].llm_step,
        "id__gte": calls["min_id"],
        "id__lte": calls["max_id"],
    }
    return f"{base}?{urlencode(query)}"


def _call_url(request, call_id) -> str:
    if not call_id or not request.user.is_staff:
        return ""
    return reverse("admin:llm_llmcall_change", args=[call_id])


def _job_row(request, project, job: BackgroundJob) -> dict:
    result = job.result or {}
    failed = [{**f, "call_url": _call_url(request, f.get("call"))} for f in result.get("failed", [])]
    return {
        "job": job,
        "step": STEP_BY_KIND[job.kind],
        "result": result,
        "failed": failed,
        "counts": [(name.replace("_", " "), n) for name, n in sorted((result.get("counts") or {}).items())],
        "calls_url": _calls_url(request, project, job),
        "scope": _scope_label(job),
    }


def _scope_label(job: BackgroundJob) -> str:
    params = job.params or {}
    if not STEP_BY_KIND[job.kind].uses_videos:
        tasks = params.get("tasks")
        return f"tasks: {', '.join(tasks)}" if tasks else "every task"
    ids = params.get("video_ids")
    if ids is None:
        return "all videos"
    if job.target_id:
        return "one video"
    return f"{len(ids)} selected videos"


@login_required
@require_safe
def drafts(request, slug):
    """GET /p/<slug>/drafts/: start a draft run; running and finished runs with their summaries."""
    project = _admin_project(request, slug)
    videos = draft_videos(project=project)
    video_count = videos.count()
    jobs = jobs_for_project(project=project, kinds=STEP_BY_KIND)
    return render(
        request,
        "annotator/drafts.html",
        {
            "project": project,
            "steps": list(DRAFT_STEPS.values()),
            "tasks": draft_tasks(project=project),
            "video_count": video_count,
            "video_choices": list(videos.values("pk", "name")) if video_count <= VIDEO_CHOICES_MAX else None,
            "curation_statuses": [(s.value, s.label) for s in CurationStatus if s != CurationStatus.REJECTED],
            "coverage": draft_coverage(project=project),
            "rows": [_job_row(request, project, job) for job in jobs[:JOBS_SHOWN]],
        },
    )


@login_required
@require_safe
def draft_job(request, slug, job_id):
    """One run's row (progress and summary); the htmx fragment polls itself until the run ends."""
    project = _admin_project(request, slug)
    job = job_get(project=project, job_id=job_id, kinds=STEP_BY_KIND)
    if job is None:
        raise Http404("No such draft run in this project.")
    return render(
        request, "annotator/drafts.html#draft_job", {"project": project, "row": _job_row(request, project, job)}
    )


def _back(request, default: str):
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = default
    return redirect(target)


def _int_or_none(raw: str, name: str) -> int | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValidationError(
            _("%(name)s must be a whole number, not “%(raw)s”.") % {"name": name, "raw": raw}
        ) from None


@login_required
@require_POST
def draft_start(request, slug):
    """POST /p/<slug>/drafts/start/: step, scope (all | filtered | video) and the step's options."""
    project = _admin_project(request, slug)
    back = reverse("annotator:drafts", args=[slug])
    step = request.POST.get("step", "")
    scope = request.POST.get("scope", "all")
    info = DRAFT_STEPS.get(step)
    if info is None:
        messages.error(request, _("Choose which draft step to run."))
        return _back(request, back)
    video = None
    video_ids = None
    try:
        if info.uses_videos and scope == "video":
            video_id = _int_or_none(request.POST.get("video", ""), _("The video"))
            name = request.POST.get("video_name", "").strip()
            video = Video.objects.filter(project=project, pk=video_id).first() if video_id else None
            if video is None and name:
                video = Video.objects.filter(project=project, name=name).first()
            if video is None:
                raise ValidationError(_("Choose the video to draft for (no video of this project has that name)."))
        elif info.uses_videos and scope == "filtered":
            chosen = draft_videos(project=project)
            q = request.POST.get("q", "").strip()
            if q:
                chosen = chosen.filter(name__icontains=q)
            if request.POST.get("curation") in CurationStatus.values:
                chosen = chosen.filter(curation_status=request.POST["curation"])
            # The selection is fixed now, so a retry later runs over the same videos.
            video_ids = list(chosen.values_list("pk", flat=True))
            if not video_ids:
                raise ValidationError(_("No video matches these filters; nothing was started."))
        job = draft_run_start(
            project=project,
            step=step,
            user=request.user,
            video=video,
            video_ids=video_ids,
            tasks=[t for t in request.POST.getlist("tasks") if t] or None,
            count=_int_or_none(request.POST.get("count", ""), _("The number per task")),
            distractors=_int_or_none(request.POST.get("distractors", ""), _("The number of distractors")),
            more=request.POST.get("more") == "1",
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _back(request, back)
    except (NoModelEndpoint, ProjectArchived) as exc:
        messages.error(request, exc.message)
        return _back(request, back)
    except JobAlreadyRunning as exc:
        messages.info(
            request,
            _("%(step)s: that run is already %(status)s (job %(job)s).")
            % {"step": info.label, "status": exc.job.get_status_display().lower(), "job": exc.job.pk},
        )
        return _back(request, back)
    if video:
        where = f"“{video.name}”"
    elif video_ids is not None:
        where = _("%(n)s videos") % {"n": len(video_ids)}
    else:
        where = _("the project")
    messages.success(
        request,
        _("Started: %(step)s for %(where)s (job %(job)s).")
        % {"step": info.label.lower(), "where": where, "job": job.pk},
    )
    return _back(request, back)


# --- Seed-question library ------------------------------------------------------------------------


def _slug_id(task: str) -> str:
    """An HTML id for a task name (which may hold spaces or slashes)."""
    return "".join(c if c.isalnum() else "-" for c in task.lower())


def _seed_groups(project) -> list[dict]:
    seeds = list(SeedQuestion.objects.filter(project=project).order_by("task", "id"))
    by_task: dict[str, list] = {}
    for seed in seeds:
        by_task.setdefault(seed.task, []).append(seed)
    tasks = draft_tasks(project=project)
    known = {t["task"] for t in tasks}
    # Seeds of a task since removed from the taxonomy stay visible rather than vanish.
    tasks += [{"task": t, "group": "", "prompt": t, "level": ""} for t in sorted(by_task) if t not in known]
    groups = []
    for task in tasks:
        rows = by_task.get(task["task"], [])
        counts = {s: sum(1 for r in rows if r.status == s) for s in SeedStatus.values}
        groups.append({**task, "seeds": rows, "counts": counts, "dom_id": _slug_id(task["task"])})
    return groups


@login_required
@require_safe
def seeds(request, slug):
    """GET /p/<slug>/drafts/seeds/: the library per task; keep, reject, edit and add by keyboard."""
    project = _admin_project(request, slug)
    return render(
        request,
        "annotator/seeds.html",
        {"project": project, "groups": _seed_groups(project), "statuses": SeedStatus.choices},
    )


_ACTIONS = {"keep": SeedStatus.KEPT, "reject": SeedStatus.REJECTED, "propose": SeedStatus.PROPOSED}


@login_required
@require_POST
def seed_change(request, slug, seed_id):
    """POST action=keep|reject|propose, or action=edit with text; htmx gets the row back."""
    project = _admin_project(request, slug)
    seed = get_object_or_404(SeedQuestion, pk=seed_id, project=project)
    action = request.POST.get("action", "")
    error = ""
    try:
        if action in _ACTIONS:
            seed_update(seed=seed, status=_ACTIONS[action])
        elif action == "edit":
            seed_update(seed=seed, text=request.POST.get("text", ""))
        else:
            raise ValidationError(_("Unknown action."))
    except ValidationError as exc:
        error = " ".join(exc.messages)
        seed.refresh_from_db()
    if request.htmx:
        # Errors come back in the row itself (htmx swaps only 2xx answers), with what was typed.
        return render(
            request,
            "annotator/seeds.html#seed_row",
            {"project": project, "seed": seed, "error": error, "typed": request.POST.get("text", "") if error else ""},
        )
    if error:
        messages.error(request, error)
    return redirect(f"{reverse('annotator:seeds', args=[slug])}#seed-{seed.pk}")


@login_required
@require_POST
def seed_add(request, slug):
    """POST task, text: a curator's own seed, kept at once."""
    project = _admin_project(request, slug)
    task = request.POST.get("task", "")
    try:
        seed = seed_create(project=project, task=task, text=request.POST.get("text", ""), user=request.user)
    except ValidationError as exc:
        error = " ".join(exc.messages)
        if request.htmx:
            response = render(request, "annotator/seeds.html#add_error", {"error": error})
            response["HX-Retarget"] = f"#add-error-{_slug_id(task)}"
            response["HX-Reswap"] = "innerHTML"
            return response
        messages.error(request, error)
        return redirect(reverse("annotator:seeds", args=[slug]))
    if request.htmx:
        return render(request, "annotator/seeds.html#seed_row", {"project": project, "seed": seed})
    messages.success(request, _("Added to %(task)s.") % {"task": task})
    return redirect(f"{reverse('annotator:seeds', args=[slug])}#seed-{seed.pk}")
