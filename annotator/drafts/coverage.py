"""How far each draft step has got over a project's draftable videos."""

from __future__ import annotations

from django.db.models import Count, Q

from projects.models import Project
from videos.models import Clip

from ..models import MCQ, ChainPair, ItemStatus, QAChain, SeedQuestion, SeedStatus, VideoDescription, VideoRole
from .base import draft_videos
from .descriptions import description_models


def draft_coverage(*, project: Project) -> list[dict]:
    """How far each step has got over the draftable videos: what exists against what could."""
    videos = draft_videos(project=project)
    clips = Clip.objects.filter(video__in=videos)
    clip_count = clips.count()
    chains = QAChain.objects.filter(clip__in=clips).aggregate(
        total=Count("id"), machine=Count("id", filter=Q(status=ItemStatus.DRAFT, human_edited=False))
    )
    video_count = videos.count()
    # Clips are numbered 0..n-1 per video, so a video with n clips has n-1 adjacent pairs.
    adjacent = clip_count - clips.values("video_id").distinct().count()
    pairs = ChainPair.objects.filter(video__in=videos).count()
    descriptions = VideoDescription.objects.filter(video__in=videos).count()
    roles, models = len(project.taxonomy("agent_roles")), len(description_models(project=project))
    seeds = SeedQuestion.objects.filter(project=project).aggregate(
        kept=Count("id", filter=Q(status=SeedStatus.KEPT)), proposed=Count("id", filter=Q(status=SeedStatus.PROPOSED))
    )
    mcqs = MCQ.objects.filter(project=project, mcq_videos__role=VideoRole.MAIN, mcq_videos__video__in=videos).aggregate(
        total=Count("id", distinct=True), no_options=Count("id", filter=Q(options=[]), distinct=True)
    )
    return [
        {"step": "chains", "have": chains["total"], "of": clip_count, "note": f"{chains['machine']} untouched drafts"},
        {"step": "relations", "have": pairs, "of": adjacent, "note": "chain pairs"},
        {
            "step": "descriptions",
            "have": descriptions,
            "of": video_count * roles * models,
            "note": f"{roles} roles × {models} models",
        },
        {"step": "seeds", "have": seeds["kept"], "of": None, "note": f"kept; {seeds['proposed']} proposed to curate"},
        {"step": "mcqs", "have": mcqs["total"], "of": None, "note": "MCQs on these videos"},
        {
            "step": "options",
            "have": mcqs["total"] - mcqs["no_options"],
            "of": mcqs["total"],
            "note": "MCQs with options",
        },
    ]
