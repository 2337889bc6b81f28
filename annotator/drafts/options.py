"""Step 6: the answer and distractors of MCQs that have no options yet."""

from __future__ import annotations

import hashlib
import random

from django.db import transaction
from django.db.models import F

from llm.client import chat_json
from projects.models import Project
from videos.models import Video

from ..models import MCQ, MCQVideo, VideoRole
from .base import (
    CREATED,
    FAILED,
    SKIPPED,
    SKIPPED_EXISTING,
    SKIPPED_HUMAN,
    DraftSummary,
    Item,
    ItemResult,
    language_name,
    norm,
    untouched,
)
from .inputs import descriptions_text

DEFAULT_DISTRACTORS = 3


def options_shuffle(*, mcq_id: int, correct: str, distractors: list[str]) -> tuple[list[str], int]:
    """The options in an order fixed by the item (the same on every run), and where the answer landed."""
    options = [correct, *distractors]
    seed = int(hashlib.sha256(f"vidqa-options:{mcq_id}".encode()).hexdigest()[:16], 16)
    random.Random(seed).shuffle(options)  # noqa: S311 - an order, not a secret
    return options, options.index(correct)


class OptionStep:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.distractors = min(4, max(3, int(params.get("distractors") or DEFAULT_DISTRACTORS)))

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[Item]:
        links = (
            MCQVideo.objects.filter(role=VideoRole.MAIN, video__in=videos, mcq__project=self.project, mcq__options=[])
            .select_related("mcq")
            .order_by("mcq_id", "order")
        )
        items, seen = [], set()
        for link in links:
            mcq = link.mcq
            if mcq.pk in seen:
                continue
            seen.add(mcq.pk)
            mcq.main_video_id = link.video_id
            label, ref = f"MCQ {mcq.pk}", {"mcq": mcq.pk}
            if not untouched(mcq):
                summary.record(label, ref, ItemResult(SKIPPED_HUMAN))
            elif not mcq.question.strip():
                summary.record(label, ref, ItemResult(SKIPPED, reason="the MCQ has no question yet"))
            else:
                items.append(Item(label, ref, mcq))
        return items

    def prepare(self, mcq: MCQ) -> str:
        return descriptions_text(video_id=mcq.main_video_id)

    def draft(self, mcq: MCQ, descriptions: str) -> ItemResult:
        proposed = (mcq.machine_draft or {}).get("answer") if isinstance(mcq.machine_draft, dict) else ""
        result = chat_json(
            project=self.project,
            step="distractors",
            template_key="distractors",
            context={
                "question": mcq.question,
                "correct_answer": str(proposed or ""),
                "descriptions": descriptions or "(none)",
                "distractor_count": self.distractors,
                "language": language_name(self.project),
            },
        )
        parsed = result.parsed if isinstance(result.parsed, dict) else {}
        correct = str(parsed.get("correct_answer") or "").strip()
        if not correct:
            return ItemResult(FAILED, reason="no correct answer in the model's answer", call=result.call)
        seen, distractors = {norm(correct)}, []
        for d in parsed.get("distractors") or []:
            text = str(d or "").strip()
            if text and norm(text) not in seen:
                seen.add(norm(text))
                distractors.append(text)
        if len(distractors) < 3:
            return ItemResult(
                FAILED,
                reason=f"only {len(distractors)} distinct distractors besides the answer; at least 3 are needed",
                call=result.call,
            )
        options, correct_index = options_shuffle(
            mcq_id=mcq.pk, correct=correct, distractors=distractors[: self.distractors]
        )
        with transaction.atomic():
            current = MCQ.objects.select_for_update().get(pk=mcq.pk)
            if not untouched(current):
                return ItemResult(SKIPPED_HUMAN, call=result.call)
            if current.options:
                return ItemResult(SKIPPED_EXISTING, call=result.call)
            draft = dict(current.machine_draft) if isinstance(current.machine_draft, dict) else {}
            draft.update(
                options=options, correct_index=correct_index, options_call=result.call.pk if result.call else None
            )
            # The version moves on so an editor who opened the MCQ without options gets a conflict, not a loss.
            MCQ.objects.filter(pk=mcq.pk).update(
                options=options,
                correct_index=correct_index,
                machine_draft=draft,
                draft_call=current.draft_call_id or (result.call.pk if result.call else None),
                version=F("version") + 1,
            )
        return ItemResult(CREATED, rows=1, call=result.call)
