"""Browser screens for importing and curating a project's videos."""

from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch, Q
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from jobs.selectors import job_latest_for, jobs_latest_for
from jobs.services import JobAlreadyRunning
from llm.endpoints import NoModelEndpoint
from projects.permissions import Action, can, get_project_or_404

from .curation import RULES, external_scores_import, video_curation_override
from .ingest import DuplicateVideo, ImportRefused, video_import, video_process_start
from .model_steps import MODEL_STEPS, NoAudioTrack, video_step_start, videos_step_start
from .models import CurationDecision, CurationStatus, Video, VideoStatus
from .score_files import score_rows
from .subtitles import SUBTITLE_MAX_BYTES

PAGE_SIZE = 50


def _video_rows(project, params):
    videos = Video.objects.filter(project=project)
    if params.get("status") in VideoStatus.values:
        videos = videos.filter(status=params["status"])
    if params.get("curation") in CurationStatus.values:
        videos = videos.filter(curation_status=params["curation"])
    if params.get("failed_rule"):
        videos = videos.filter(curation_decisions__rule=params["failed_rule"], curation_decisions__passed=False)
    if params.get("q"):
        q = params["q"].strip()
        videos = videos.filter(Q(name__icontains=q) | Q(original_filename__icontains=q) | Q(status_reason__icontains=q))
    return (
        videos.annotate(clip_count=Count("clips", distinct=True))
        .prefetch_related(
            Prefetch(
                "curation_decisions",
                queryset=CurationDecision.objects.filter(passed=False).order_by("rule"),
                to_attr="failed_decisions",
            )
        )
        .order_by("name", "pk")
    )


@login_required
def video_list(request, slug):
    project = get_project_or_404(request.user, slug)
    page = Paginator(_video_rows(project, request.GET), PAGE_SIZE).get_page(request.GET.get("page"))
    jobs = jobs_latest_for(project=project, targets=page.object_list)
    rows = [(video, jobs.get(video.pk)) for video in page.object_list]
    context = {
        "project": project,
        "page": page,
        "rows": rows,
        "is_admin": can(request.user, Action.ADMINISTER, project),
        "statuses": VideoStatus.choices,
        "curation_statuses": CurationStatus.choices,
        "rules": [(code, label) for code, (label, _) in RULES.items()],
        "filters": {k: request.GET.get(k, "") for k in ("status", "curation", "failed_rule", "q")},
        "rows_query": _rows_query(request.GET),
    }
    template = (
        "videos/video_list.html#rows"
        if request.htmx and request.GET.get("partial") == "rows"
        else "videos/video_list.html"
    )
    return render(request, template, context)


def _rows_query(params) -> str:
    """This list's filters and page, asking for the rows alone: the rows refresh themselves with it."""
    query = params.copy()
    query["partial"] = "rows"
    return query.urlencode()


@login_required
@require_POST
def video_upload(request, slug):
    """One file per request, so the browser shows progress and an outcome per file."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    upload = request.FILES.get("file")
    if upload is None:
        return JsonResponse({"ok": False, "error": "No file was received."}, status=400)
    path = getattr(upload, "temporary_file_path", None)
    try:
        if path is not None:
            video = video_import(
                project=project,
                source=Path(upload.temporary_file_path()),
                filename=upload.name,
                user=request.user,
                sha256=getattr(upload, "sha256", None),
            )
        else:  # small files stay in memory: give ffprobe a real file
            import tempfile

            with tempfile.NamedTemporaryFile(suffix=Path(upload.name).suffix) as tmp:
                for chunk in upload.chunks():
                    tmp.write(chunk)
                tmp.flush()
                video = video_import(project=project, source=Path(tmp.name), filename=upload.name, user=request.user)
    except DuplicateVideo as exc:
        return JsonResponse(
            {"ok": False, "error": str(exc), "existing": reverse("videos:player", args=[slug, exc.existing.pk])},
            status=409,
        )
    except ImportRefused as exc:
        return JsonResponse({"ok": False, "error": str(exc)}, status=422)
    job = job_latest_for(target=video)
    return JsonResponse(
        {
            "ok": True,
            "video": {"id": video.pk, "name": video.name, "url": reverse("videos:player", args=[slug, video.pk])},
            "job": {"id": job.pk, "url": reverse("studio:job_status", args=[slug, job.pk])} if job else None,
            "message": f"{video.name}: {video.duration_s:.1f} s, {video.width}×{video.height}; processing started.",
        },
        status=201,
    )


def _video_for(request, slug, video_id, action):
    project = get_project_or_404(request.user, slug, action)
    video = get_object_or_404(Video, pk=video_id, project=project)
    video.project = project  # already fetched: spares a query wherever a service reads it
    return project, video


def _back(request, slug, video):
    """Back to the page the form was on (the list or the player); never to another site."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("videos:list", args=[slug])
    return redirect(target)


@login_required
@require_POST
def video_reprocess(request, slug, video_id):
    project, video = _video_for(request, slug, video_id, Action.ADMINISTER)
    try:
        video_process_start(video=video, user=request.user)
        messages.success(request, f"Processing {video.name} again.")
    except JobAlreadyRunning:
        messages.info(request, f"{video.name} is already being processed.")
    return _back(request, slug, video)


@login_required
@require_POST
def video_run_step(request, slug, video_id, step):
    project, video = _video_for(request, slug, video_id, Action.ADMINISTER)
    if step not in MODEL_STEPS:
        raise Http404("No such step.")
    label = MODEL_STEPS[step].label
    try:
        video_step_start(video=video, step=step, user=request.user)
        messages.success(request, f"{label} for {video.name}.")
    except (NoAudioTrack, NoModelEndpoint) as exc:
        messages.error(request, exc.message)
    except JobAlreadyRunning:
        messages.info(request, f"{label} for {video.name} is already under way.")
    return _back(request, slug, video)


@login_required
@require_POST
def videos_run_step(request, slug, step):
    """The step for every ready video that lacks its result (no cues / no score) among the filtered ones."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    if step not in MODEL_STEPS:
        raise Http404("No such step.")
    label = MODEL_STEPS[step].label
    try:
        started, skipped = videos_step_start(
            project=project, videos=_video_rows(project, request.POST), step=step, user=request.user
        )
    except NoModelEndpoint as exc:
        messages.error(request, exc.message)
        return redirect("videos:list", slug=slug)
    messages.success(
        request, f"{label}: {started} jobs started" + (f", {skipped} already under way." if skipped else ".")
    )
    return redirect("videos:list", slug=slug)


@login_required
@require_POST
def video_curation(request, slug, video_id):
    project, video = _video_for(request, slug, video_id, Action.ADMINISTER)
    status = request.POST.get("status", "")
    try:
        video_curation_override(video=video, user=request.user, status=status, note=request.POST.get("note", ""))
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        verb = {"kept": "kept", "rejected": "rejected", "pending": "returned to the rules"}.get(status, status)
        messages.success(request, f"{video.name} {verb}.")
    return _back(request, slug, video)


@login_required
@require_POST
def video_subtitles_upload(request, slug, video_id):
    from .subtitle_formats import SubtitleFormatError, parse_subtitles
    from .subtitles import file_cue_count, subtitles_import

    project, video = _video_for(request, slug, video_id, Action.ADMINISTER)
    upload = request.FILES.get("file")
    existing = file_cue_count(video=video)
    if upload is None:
        messages.error(request, "Choose a subtitle file first.")
    elif upload.size > SUBTITLE_MAX_BYTES:
        messages.error(
            request, f"{upload.name} is larger than {SUBTITLE_MAX_BYTES // 1024 // 1024} MB; is it really subtitles?"
        )
    else:
        data = upload.read()
        try:
            if existing and request.POST.get("replace") != "1":
                # The form asks first (a required box and a confirmation); a request without the answer
                # changes nothing. The file is read all the same, so a bad one says what is wrong with it.
                parse_subtitles(data, upload.name, video_duration_s=video.duration_s)
                messages.error(
                    request,
                    _(
                        "%(file)s: this video already has %(n)d subtitle cues from a file; "
                        "tick “Replace them” to import over them."
                    )
                    % {"file": upload.name, "n": existing},
                )
                return _back(request, slug, video)
            result = subtitles_import(
                video=video, data=data, filename=upload.name, language=request.POST.get("language", "")
            )
        except SubtitleFormatError as exc:
            details = "; ".join(str(p) for p in exc.problems[:5])
            messages.error(request, f"{upload.name}: {exc}" + (f" ({details})" if details else ""))
        else:
            text = f"{upload.name}: {result.count} cues imported ({result.format}, {result.encoding})."
            if result.problems:
                shown = "; ".join(str(p) for p in result.problems[:10])
                more = f" and {len(result.problems) - 10} more" if len(result.problems) > 10 else ""
                messages.warning(request, f"{text} Skipped {len(result.problems)} malformed cues: {shown}{more}.")
            else:
                messages.success(request, text)
    return _back(request, slug, video)


@login_required
@require_POST
def video_comments_upload(request, slug, video_id):
    """Stage the file in storage and import it in the background (millions of rows)."""
    from .comment_formats import CommentFormatError
    from .comments import comments_import_start

    project, video = _video_for(request, slug, video_id, Action.ADMINISTER)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a comments file first.")
        return _back(request, slug, video)
    try:
        job = comments_import_start(video=video, upload=upload, user=request.user)
    except CommentFormatError as exc:
        messages.error(request, f"{upload.name}: {exc}")
        return _back(request, slug, video)
    except JobAlreadyRunning:
        messages.info(request, "Comments for this video are already being imported.")
        return _back(request, slug, video)
    messages.success(request, f"Importing comments from {upload.name} (job {job.pk}).")
    return _back(request, slug, video)


@login_required
@require_POST
def external_scores_upload(request, slug):
    """CSV with columns video (name), then one column per score, or video,name,value rows."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a CSV file of scores first.")
        return redirect("videos:list", slug=slug)
    try:
        rows = list(score_rows(upload.read()))
    except ValueError as exc:
        messages.error(request, f"{upload.name}: {exc}")
        return redirect("videos:list", slug=slug)
    outcome = external_scores_import(project=project, rows=rows)
    text = f"{outcome['imported']} scores imported for {outcome['videos']} videos."
    if outcome["unknown_videos"]:
        text += f" Unknown videos skipped: {', '.join(outcome['unknown_videos'][:10])}."
    messages.success(request, text)
    return redirect("videos:list", slug=slug)
