"""What the draft steps (and the quality gate, which judges their output) show the model of a video:
its frames and subtitles over a clip or the whole video, a sample of its comments, its descriptions.

The clip itself is `llm.clip_context.ClipContext`; this module reads the Video's stored file and cues
for it, which llm/ cannot (videos/ imports llm/).
"""

from __future__ import annotations

from llm.clip_context import ClipContext, clip_context_build, timed_lines_text
from llm.frames import FrameSamplingError
from llm.prompts import PROMPT_TEXT_LIMIT, text_excerpt
from projects.models import Project
from videos.models import Comment, SubtitleCue, Video
from videos.storage_files import local_path

from ..models import VideoDescription

TEXT_LIMIT = PROMPT_TEXT_LIMIT
COMMENTS_SAMPLE = 60
CUES_LIMIT = 400


def _cue_rows(video_id: int, start_s: float | None, end_s: float | None):
    cues = SubtitleCue.objects.filter(video_id=video_id)
    if start_s is not None and end_s is not None:
        cues = cues.filter(start_s__lt=end_s, end_s__gt=start_s)
    return cues.order_by("start_s", "id").values_list("start_s", "text")[:CUES_LIMIT]


def subtitles_text(*, video_id: int, start_s: float | None = None, end_s: float | None = None) -> str:
    """The video's cues as timed lines: those overlapping [start_s, end_s], or all when no range is given."""
    return timed_lines_text(_cue_rows(video_id, start_s, end_s))


def comments_text(*, video_id: int) -> str:
    """An even sample of the video's comments: a few million rows must not go into one prompt."""
    comments = Comment.objects.filter(video_id=video_id)
    total = comments.count()
    if not total:
        return ""
    step = max(1, total // COMMENTS_SAMPLE)
    rows = comments.order_by("time_s", "id").values_list("time_s", "text")[: step * COMMENTS_SAMPLE : step]
    return timed_lines_text(rows)


def video_clip_context(
    *, video: Video, project: Project, start_s: float | None = None, end_s: float | None = None
) -> ClipContext:
    """The project's frames and the subtitles of [start_s, end_s] of `video`, or of all of it when no
    range is given. Raises FrameSamplingError when the video has no file or (whole) no known duration.
    """
    whole = start_s is None or end_s is None
    if whole:
        if not video.duration_s:
            raise FrameSamplingError(f"{video.name} has no known duration")
        start_s, end_s = 0.0, video.duration_s
    # The proxy when there is one: clips were planned on it, and it always decodes.
    name = video.proxy.name if video.proxy else video.original.name
    if not name:
        raise FrameSamplingError(f"{video.name} has no stored file to sample frames from")
    with local_path(name) as path:
        return clip_context_build(
            path=path,
            start_s=start_s,
            end_s=end_s,
            # Read lazily, after the frames, as the steps always have.
            cues=_cue_rows(video.pk, None, None) if whole else _cue_rows(video.pk, start_s, end_s),
            frame_count=project.frames_per_clip,
            max_side_px=project.frame_max_side_px,
            duration_s=video.duration_s,
            fps=video.fps,
        )


def descriptions_text(*, video_id: int) -> str:
    """The video's descriptions, every agent role and model, as the MCQ steps read them."""
    rows = (
        VideoDescription.objects.filter(video_id=video_id)
        .order_by("agent_role", "model")
        .values_list("agent_role", "model", "text")
    )
    return text_excerpt((f"[{role} · {model}]\n{text}\n" for role, model, text in rows), limit=TEXT_LIMIT * 2)
