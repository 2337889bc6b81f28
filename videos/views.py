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
        messages.success(request, _("Processing %(video)s again.") % {"video": video.name})
    except JobAlreadyRunning:
        messages.info(request, _("%(video)s is already being processed.") % {"video": video.name})
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
        messages.success(request, _("%(step)s for %(video)s.") % {"step": label, "video": video.name})
    except (NoAudioTrack, NoModelEndpoint) as exc:
        messages.error(request, exc.message)
    except JobAlreadyRunning:
        messages.info(request, _("%(step)s for %(video)s is already under way.") % {"step": label, "video": video.name})
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
        request,
        (
            _("%(step)s: %(started)s jobs started, %(skipped)s already under way.")
            if skipped
            else _("%(step)s: %(started)s jobs started.")
        )
        % {"step": label, "started": started, "skipped": skipped},
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
        done = {
            "kept": _("%(video)s kept."),
            "rejected": _("%(video)s rejected."),
            "pending": _("%(video)s returned to the rules."),
        }.get(status, "%(video)s " + status + ".")
        messages.success(request, done % {"video": video.name})
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
        messages.error(request, _("Choose a subtitle file first."))
    elif upload.size > SUBTITLE_MAX_BYTES:
        messages.error(
            request,
            _("%(file)s is larger than %(mb)s MB; is it really subtitles?")
            % {"file": upload.name, "mb": SUBTITLE_MAX_BYTES // 1024 // 1024},
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
            text = _("%(file)s: %(count)s cues imported (%(format)s, %(encoding)s).") % {
                "file": upload.name,
                "count": result.count,
                "format": result.format,
                "encoding": result.encoding,
            }
            if result.problems:
                shown = "; ".join(str(p) for p in result.problems[:10])
                more = _(" and %(n)s more") % {"n": len(result.problems) - 10} if len(result.problems) > 10 else ""
                skipped = _("Skipped %(n)s malformed cues: %(shown)s%(more)s.") % {
                    "n": len(result.problems),
                    "shown": shown,
                    "more": more,
                }
                messages.warning(request, f"{text} {skipped}")
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
        messages.error(request, _("Choose a comments file first."))
        return _back(request, slug, video)
    try:
        job = comments_import_start(video=video, upload=upload, user=request.user)
    except CommentFormatError as exc:
        messages.error(request, f"{upload.name}: {exc}")
        return _back(request, slug, video)
    except JobAlreadyRunning:
        messages.info(request, _("Comments for this video are already being imported."))
        return _back(request, slug, video)
    messages.success(
        request, _("Importing comments from %(file)s (job %(job)s).") % {"file": upload.name, "job": job.pk}
    )
    return _back(request, slug, video)


@login_required
@require_POST
def external_scores_upload(request, slug):
    """CSV with columns video (name), then one column per score, or video,name,value rows."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, _("Choose a CSV file of scores first."))
        return redirect("videos:list", slug=slug)
    try:
        rows = list(score_rows(upload.read()))
    except ValueError as exc:
        messages.error(request, f"{upload.name}: {exc}")
        return redirect("videos:list", slug=slug)
    outcome = external_scores_import(project=project, rows=rows)
    text = _("%(imported)s scores imported for %(videos)s videos.") % {
        "imported": outcome["imported"],
        "videos": outcome["videos"],
    }
    if outcome["unknown_videos"]:
        text += " " + _("Unknown videos skipped: %(names)s.") % {"names": ", ".join(outcome["unknown_videos"][:10])}
    messages.success(request, text)
    return redirect("videos:list", slug=slug)
