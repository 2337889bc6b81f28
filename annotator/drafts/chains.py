"""Step 1: a QA chain per clip, from the clip's frames and subtitles."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from llm.client import chat_json
from llm.clip_context import ClipContext
from projects.models import Project
from videos.models import Clip, Video

from ..models import ItemStatus, Origin, QAChain, QAPair
from .base import (
    CREATED,
    FAILED,
    SKIPPED_EXISTING,
    SKIPPED_HUMAN,
    DraftSummary,
    Item,
    ItemResult,
    language_name,
    schema_for,
    schema_part,
)
from .inputs import video_clip_context


class ChainStep:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.skills = [s["code"] for s in project.taxonomy("skills") if s.get("code")]
        self.skill_names = {s.get("name", "").lower(): s["code"] for s in project.taxonomy("skills") if s.get("code")}
        self.schema = schema_for(project, "qa_chain")
        turns = schema_part(self.schema, "properties", "turns")
        if turns is not None and turns.get("type") == "array":
            # The project's turn range and skill codes go into the schema, so the LLM layer's repair
            # round already tells the model what was wrong.
            turns["minItems"], turns["maxItems"] = project.chain_min_turns, project.chain_max_turns
            skill = schema_part(turns, "items", "properties", "skill")
            if skill is not None and self.skills:
                skill["enum"] = list(self.skills)

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[Item]:
        clips = (
            Clip.objects.filter(video__in=videos).select_related("video").order_by("video__name", "video_id", "index")
        )
        chains = {
            c["clip_id"]: c
            for c in QAChain.objects.filter(clip__video__in=videos).values("clip_id", "status", "human_edited")
        }
        items = []
        for clip in clips:
            label, ref = f"{clip.video.name} clip {clip.index}", {"clip": clip.pk}
            chain = chains.get(clip.pk)
            if chain is None:
                items.append(Item(label, ref, clip))
            elif chain["human_edited"] or chain["status"] != ItemStatus.DRAFT:
                summary.record(label, ref, ItemResult(SKIPPED_HUMAN))
            else:
                summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
        return items

    def prepare(self, clip: Clip) -> ClipContext:
        return video_clip_context(video=clip.video, project=self.project, start_s=clip.start_s, end_s=clip.end_s)

    def _skill(self, raw: str) -> str | None:
        text = str(raw or "").strip()
        for code in self.skills:
            if text.upper() == code.upper():
                return code
        return self.skill_names.get(text.lower())

    def draft(self, clip: Clip, prepared: ClipContext) -> ItemResult:
        project = self.project
        result = chat_json(
            project=project,
            step="qa_chain",
            template_key="qa_chain",
            context={
                "clip_start": prepared.start_text,
                "clip_end": prepared.end_text,
                "frame_count": len(prepared.frames),
                "subtitles": prepared.subtitles,
                "min_turns": project.chain_min_turns,
                "max_turns": project.chain_max_turns,
                "language": language_name(project),
                "skills": "; ".join(
                    f"{s['code']} ({s.get('name', s['code'])})" for s in project.taxonomy("skills") if s.get("code")
                ),
            },
            images=prepared.frames,
            schema=self.schema,
        )
        turns = result.parsed.get("turns") if isinstance(result.parsed, dict) else None
        if not isinstance(turns, list):
            return ItemResult(FAILED, reason="the answer has no list of turns", call=result.call)
        if not project.chain_min_turns <= len(turns) <= project.chain_max_turns:
            return ItemResult(
                FAILED,
                reason=f"the model gave {len(turns)} turns; the project asks for "
                f"{project.chain_min_turns}–{project.chain_max_turns}",
                call=result.call,
            )
        pairs, warnings = [], []
        for n, turn in enumerate(turns, start=1):
            question = str((turn or {}).get("question") or "").strip()
            answer = str((turn or {}).get("answer") or "").strip()
            if not question or not answer:
                return ItemResult(FAILED, reason=f"turn {n} has an empty question or answer", call=result.call)
            skill = self._skill(turn.get("skill"))
            if skill is None:
                warnings.append(f"turn {n}: skill {turn.get('skill')!r} is not one of the project's codes; left blank")
                skill = ""
            pairs.append({"question": question, "answer": answer, "skill": skill})
        try:
            with transaction.atomic():
                Clip.objects.select_for_update().filter(pk=clip.pk).first()
                if QAChain.objects.filter(clip_id=clip.pk).exists():
                    return ItemResult(SKIPPED_EXISTING, call=result.call)  # drafted meanwhile by another run
                chain = QAChain.objects.create(
                    project=project,
                    clip=clip,
                    status=ItemStatus.DRAFT,
                    origin=Origin.MACHINE,
                    machine_draft={"pairs": pairs},
                    draft_call=result.call,
                )
                QAPair.objects.bulk_create(QAPair(chain=chain, index=i, **p) for i, p in enumerate(pairs))
        except IntegrityError:
            return ItemResult(SKIPPED_EXISTING, call=result.call)
        return ItemResult(CREATED, rows=1, call=result.call, warnings=warnings)
