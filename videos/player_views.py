"""The player page (video, synced transcript, comments of the moment, clip timeline) and its feeds.

Every later screen embeds this player: annotation editors include `videos/player.html#player`
with `player_context(video=...)` and listen to `VidQA.player` in the browser.
"""

import math

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_safe
from django_htmx.http import HttpResponseClientRefresh

from annotator.models import ItemStatus
from projects.models import ProjectKind
from projects.permissions import Action, can, get_project_or_404

from .comments import comments_density, comments_window
from .models import Clip, Video, VideoStatus
from .subtitles import cue_track, cues_webvtt, file_cue_count

# The comments panel asks for ±5 s around the playhead; the cap keeps one answer small whatever
# a client asks for, and the longest window stops a script from paging the whole table through it.
COMMENTS_DEFAULT_LIMIT = 50
COMMENTS_MAX_LIMIT = 200
COMMENTS_MAX_WINDOW_S = 600.0
DENSITY_BINS = 120

_BUSY = (VideoStatus.UPLOADED, VideoStatus.PROCESSING)


def clock_label(seconds: float | None) -> str:
    """ "mm:ss.fff" (with hours when needed), the same shape player.js writes."""
    if seconds is None:
        return ""
    millis = round(max(0.0, seconds) * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    head = f"{hours}:{minutes:02d}" if hours else f"{minutes:02d}"
    return f"{head}:{secs:02d}.{millis:03d}"


def _video_or_404(request, slug: str, video_id: int) -> Video:
    """Authorise in the view: a stranger, a missing project and a video of another project all 404."""
    project = get_project_or_404(request.user, slug)
    # The raw ffprobe output can be large and the page shows only the parsed fields.
    video = get_object_or_404(Video.objects.defer("probe"), pk=video_id, project=project)
    video.project = project  # already fetched; saves a query whenever the template reads it
    return video


def player_context(*, video: Video) -> dict:
    """Everything the player partial needs, in a fixed number of queries whatever the video holds."""
    clips = list(Clip.objects.filter(video=video).order_by("start_s", "index").only("index", "start_s", "end_s"))
    cues = cue_track(video=video)
    for cue in cues:
        cue.clock = clock_label(cue.start_s)
    density = comments_density(video=video, bins=DENSITY_BINS)
    has_comments = any(density["counts"])
    kind = "proxy" if video.proxy else "original"
    config = {
        "videoId": video.pk,
        "fps": video.fps,
        "duration": video.duration_s,
        "clips": [{"index": c.index, "start": c.start_s, "end": c.end_s} for c in clips],
        "scenes": [[float(s), float(e)] for s, e in (video.scenes or [])],
        "density": density if has_comments else None,
        "commentsUrl": reverse("videos:player_comments", args=[video.project.slug, video.pk]),
    }
    return {
        "video": video,
        "project": video.project,
        "media_url": reverse("videos:media", args=[video.pk, kind]),
        "poster_url": reverse("videos:media", args=[video.pk, "poster"]) if video.poster else "",
        "subtitles_url": reverse("videos:player_subtitles", args=[video.project.slug, video.pk]),
        "cues": cues,
        "duration_label": clock_label(video.duration_s),
        "clip_count": len(clips),
        "has_comments": has_comments,
        "is_busy": video.status in _BUSY,
        "is_failed": video.status == VideoStatus.FAILED,
        "player_config": config,
    }


@login_required
@require_safe
def player(request, slug, video_id):
    """GET /p/<slug>/videos/<id>/: the player page; htmx asks for its fragments."""
    video = _video_or_404(request, slug, video_id)
    if request.htmx and request.htmx.target == "player-status":
        # The processing banner polls here; once the video is done, reload to get its files.
        if video.status not in _BUSY:
            return HttpResponseClientRefresh()
        return render(request, "videos/player.html#status", {"video": video, "project": video.project, "is_busy": True})
    template = "videos/player.html#player" if request.htmx else "videos/player.html"
    context = player_context(video=video)
    context["is_admin"] = can(request.user, Action.ADMINISTER, video.project)
    if video.project.kind == ProjectKind.SVBENCH and video.status == VideoStatus.READY:
        # Each clip with its QA chain, or a way to write one by hand (no model needed).
        context["clip_chains"] = rows = list(
            Clip.objects.filter(video=video)
            .order_by("index")
            .values("pk", "index", "start_s", "end_s", "chain__id", "chain__status")
        )
        for row in rows:
            row["status_label"] = ItemStatus(row["chain__status"]).label if row["chain__status"] else ""
        context["may_annotate"] = can(request.user, Action.ANNOTATE, video.project)
    if context["is_admin"]:
        context["decisions"] = list(video.curation_decisions.order_by("rule"))
        context["file_cues"] = file_cue_count(video=video)
    return render(request, template, context)


@login_required
@require_safe
def subtitles_vtt(request, slug, video_id):
    """GET …/subtitles.vtt: the cue track as WebVTT; a bare "WEBVTT" header when there are none."""
    video = _video_or_404(request, slug, video_id)
    response = HttpResponse(cues_webvtt(video=video), content_type="text/vtt; charset=utf-8")
    # Cues change when subtitles are re-imported: revalidate rather than show stale lines.
    response["Cache-Control"] = "private, no-cache"
    return response


def _bad_request(message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=400)


def _seconds(raw: str | None, name: str) -> float:
    if raw is None or raw.strip() == "":
        raise ValueError(f"Give `{name}` in seconds, e.g. ?start=10&end=20.")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"`{name}` must be a number of seconds, got {raw!r}.") from None
    if not math.isfinite(value):
        raise ValueError(f"`{name}` must be a finite number of seconds, got {raw!r}.")
    return value


@login_required
@require_safe
def comments_json(request, slug, video_id):
    """GET …/comments/?start=&end=[&limit=]: comments in [start, end) in time order, as JSON."""
    video = _video_or_404(request, slug, video_id)
    try:
        start = _seconds(request.GET.get("start"), "start")
        end = _seconds(request.GET.get("end"), "end")
    except ValueError as exc:
        return _bad_request(str(exc))
    limit_raw = request.GET.get("limit") or str(COMMENTS_DEFAULT_LIMIT)
    if not limit_raw.isdecimal():
        return _bad_request(f"`limit` must be a whole number, got {limit_raw!r}.")
    limit = int(limit_raw)
    if end < start:
        return _bad_request(f"`end` ({end:g}) must not be before `start` ({start:g}).")
    if end - start > COMMENTS_MAX_WINDOW_S:
        return _bad_request(f"Ask for at most {COMMENTS_MAX_WINDOW_S:g} s at a time.")
    if not 1 <= limit <= COMMENTS_MAX_LIMIT:
        return _bad_request(f"`limit` must be between 1 and {COMMENTS_MAX_LIMIT}.")
    # One extra row tells the client there is more than it sees, without a COUNT over millions.
    rows = comments_window(video=video, start_s=max(0.0, start), end_s=end, limit=limit + 1)
    return JsonResponse(
        {
            "start": start,
            "end": end,
            "limit": limit,
            "truncated": len(rows) > limit,
            "comments": [{"id": c.id, "time_s": c.time_s, "text": c.text, "user": c.user} for c in rows[:limit]],
        }
    )
