"""LiViBench's complexity filter: an LLM rates a video 1–10 from sampled frames, speech and comments."""

from django.db import transaction

from llm.client import chat_json
from llm.frames import sample_frames
from llm.prompts import text_excerpt

from .curation import video_curate
from .models import Comment, SubtitleCue, Video
from .storage_files import local_path

COMMENTS_SAMPLE = 60


def video_score_complexity(*, video: Video) -> int:
    """Ask the model, store the score and its reason, and re-run curation (rule: score ≥ minimum)."""
    project = video.project
    cues = SubtitleCue.objects.filter(video=video).order_by("start_s").values_list("start_s", "text")[:400]
    total = Comment.objects.filter(video=video).count()
    step = max(1, total // COMMENTS_SAMPLE)
    comments = (
        Comment.objects.filter(video=video)
        .order_by("time_s")
        .values_list("time_s", "text")[: step * COMMENTS_SAMPLE : step]
        if total
        else []
    )
    with local_path(video.original.name) as path:
        frames = sample_frames(
            path, 0.0, video.duration_s or 0.0, count=project.frames_per_clip, max_side_px=project.frame_max_side_px
        )
    result = chat_json(
        project=project,
        step="complexity",
        template_key="complexity",
        context={
            "title": video.name,
            "duration": f"{video.duration_s or 0:.0f}",
            "frame_count": len(frames),
            "subtitles": text_excerpt([f"[{t:.0f}s] {text}" for t, text in cues]),
            "comments": text_excerpt([f"[{t:.0f}s] {text}" for t, text in comments]),
        },
        images=frames,
    )
    score = int(result.parsed["score"])
    with transaction.atomic():
        video = Video.objects.select_for_update().get(pk=video.pk)
        video.complexity_score = score
        # The reason and the call that gave it, so the number on screen can be traced to its source.
        video.metadata = {
            **video.metadata,
            "complexity": {"reason": result.parsed.get("reason", ""), "llm_call": result.call.pk},
        }
        video.save(update_fields=["complexity_score", "metadata", "updated_at"])
    video_curate(video=video)
    return score
