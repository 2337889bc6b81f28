"""Step 3: multi-agent descriptions, one per video, agent role and model."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from llm.client import chat_json
from llm.clip_context import seconds_text
from llm.endpoints import model_for_use
from llm.models import ModelUse
from projects.models import Project
from videos.models import Video

from ..models import VideoDescription
from .base import CREATED, FAILED, SKIPPED_EXISTING, DraftSummary, Item, ItemResult, language_name
from .inputs import comments_text, video_clip_context
from .pipeline import Memo


def description_models(*, project: Project) -> list[str]:
    """The models that describe every video: `models_per_step["description"]` (a name or a list), else one."""
    chosen = (project.models_per_step or {}).get("description")
    if isinstance(chosen, list | tuple):
        names = [str(m).strip() for m in chosen if str(m).strip()]
        if names:
            return list(dict.fromkeys(names))
    elif chosen and str(chosen).strip():
        return [str(chosen).strip()]
    return [model_for_use(project=project, use=ModelUse.VISION)]


class DescriptionStep:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.roles = [r for r in project.taxonomy("agent_roles") if r.get("role")]
        self.models = description_models(project=project)
        self.inputs = Memo()

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[Item]:
        have = set(VideoDescription.objects.filter(video__in=videos).values_list("video_id", "agent_role", "model"))
        items = []
        for video in videos:
            for role in self.roles:
                for model in self.models:
                    label = f"{video.name} · {role['role']} · {model}"
                    ref = {"video": video.pk, "role": role["role"], "model": model}
                    if (video.pk, role["role"], model) in have:
                        summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
                    else:
                        items.append(Item(label, ref, (video, role, model)))
        return items

    def prepare(self, obj) -> dict:
        video = obj[0]
        # Every role and model of a video is shown the same frames, sampled once (no duration: fails).
        return self.inputs.get(
            video.pk,
            lambda: {
                "clip": video_clip_context(video=video, project=self.project),
                "comments": comments_text(video_id=video.pk),
            },
        )

    def draft(self, obj, prepared: dict) -> ItemResult:
        video, role, model = obj
        result = chat_json(
            project=self.project,
            step="description",
            template_key="description",
            model=model,
            context={
                "role": role["role"],
                "role_instruction": role.get("instruction", ""),
                "duration": seconds_text(video.duration_s),
                "frame_count": len(prepared["clip"].frames),
                "subtitles": prepared["clip"].subtitles,
                "comments": prepared["comments"],
                "language": language_name(self.project),
            },
            images=prepared["clip"].frames,
        )
        parsed = result.parsed if isinstance(result.parsed, dict) else {}
        text = str(parsed.get("description") or "").strip()
        if not text:
            return ItemResult(FAILED, reason="the description is empty", call=result.call)
        moments = [m for m in parsed.get("moments") or [] if isinstance(m, dict) and str(m.get("text") or "").strip()]
        if moments:
            # Times stay in the text: the MCQ step reads descriptions as its picture of the video.
            text += "\n\nMoments:\n" + "\n".join(
                f"[{seconds_text(float(m.get('time') or 0))} s] {str(m['text']).strip()}" for m in moments
            )
        try:
            with transaction.atomic():
                VideoDescription.objects.create(
                    video=video, agent_role=role["role"], model=model, text=text, draft_call=result.call
                )
        except IntegrityError:
            return ItemResult(SKIPPED_EXISTING, call=result.call)
        return ItemResult(CREATED, rows=1, call=result.call)
