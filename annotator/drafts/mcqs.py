"""Step 5: candidate MCQs per video and task, from the task's kept seed questions."""

from __future__ import annotations

from django.db import transaction

from llm.client import chat_json
from llm.clip_context import seconds_text
from llm.models import LLMCall
from projects.models import Project
from videos.models import Video

from ..models import MCQ, ItemStatus, MCQVideo, Origin, ReferredMoment, SeedQuestion, SeedStatus, VideoRole
from .base import (
    CREATED,
    FAILED,
    SKIPPED,
    SKIPPED_EXISTING,
    DraftSummary,
    Item,
    ItemResult,
    draft_tasks,
    language_name,
    norm,
)
from .inputs import descriptions_text, subtitles_text

DEFAULT_MCQ_COUNT = 1


def _span(question: str, query: str) -> tuple[str, int, int] | None:
    """The referring query as it appears in the question (exact, else ignoring case)."""
    query = query.strip()
    if not query:
        return None
    start = question.find(query)
    if start < 0:
        start = question.lower().find(query.lower())
    if start < 0:
        return None
    return question[start : start + len(query)], start, start + len(query)


def _options_from(q: dict) -> tuple[list[str], int] | None:
    """Options and the correct index when the model gave a usable set (an edited template may ask)."""
    options = q.get("options")
    if not isinstance(options, list) or not 4 <= len(options) <= 5:
        return None
    options = [str(o).strip() for o in options]
    if not all(options) or len({norm(o) for o in options}) != len(options):
        return None
    index = q.get("correct_index")
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(options):
        return options, index
    answer = norm(q.get("answer") or "")
    matches = [i for i, o in enumerate(options) if norm(o) == answer]
    return (options, matches[0]) if len(matches) == 1 else None


class MCQStep:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.count = int(params.get("count") or DEFAULT_MCQ_COUNT)
        wanted = params.get("tasks")
        self.tasks = [t for t in draft_tasks(project=project) if not wanted or t["task"] in wanted]

    def _existing(self, videos) -> set[tuple[int, str]]:
        return set(
            MCQVideo.objects.filter(
                video__in=videos, role=VideoRole.MAIN, mcq__project=self.project, mcq__origin=Origin.MACHINE
            ).values_list("video_id", "mcq__category")
        )

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[Item]:
        seeds: dict[str, list[str]] = {}
        for task, text in (
            SeedQuestion.objects.filter(project=self.project, status=SeedStatus.KEPT)
            .order_by("task", "id")
            .values_list("task", "text")
        ):
            seeds.setdefault(task, []).append(text)
        existing = self._existing(videos)
        items = []
        for video in videos:
            for task in self.tasks:
                label, ref = f"{video.name} · {task['task']}", {"video": video.pk, "task": task["task"]}
                if (video.pk, task["task"]) in existing:
                    summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
                elif not seeds.get(task["task"]):
                    summary.record(
                        label,
                        ref,
                        ItemResult(SKIPPED, reason=f"no kept seed questions for {task['task']}: curate seeds first"),
                    )
                else:
                    items.append(Item(label, ref, (video, task, seeds[task["task"]])))
        return items

    def prepare(self, obj) -> dict:
        video = obj[0]
        return {"descriptions": descriptions_text(video_id=video.pk), "subtitles": subtitles_text(video_id=video.pk)}

    def draft(self, obj, prepared: dict) -> ItemResult:
        video, task, seeds = obj
        result = chat_json(
            project=self.project,
            step="mcq",
            template_key="mcq",
            context={
                "task": task["prompt"],
                "task_group": task["group"] or "none",
                "duration": seconds_text(video.duration_s or 0),
                "seeds": "\n".join(f"- {s}" for s in seeds),
                "descriptions": prepared["descriptions"] or "(none)",
                "subtitles": prepared["subtitles"],
                "count": self.count,
                "language": language_name(self.project),
            },
        )
        raw = result.parsed.get("questions") if isinstance(result.parsed, dict) else None
        questions = (
            [q for q in raw if isinstance(q, dict) and str(q.get("question") or "").strip()]
            if isinstance(raw, list)
            else []
        )
        if not questions:
            return ItemResult(FAILED, reason="the answer has no usable question", call=result.call)
        warnings: list[str] = []
        with transaction.atomic():
            Video.objects.select_for_update().filter(pk=video.pk).first()
            if (video.pk, task["task"]) in self._existing([video]):
                return ItemResult(SKIPPED_EXISTING, call=result.call)
            for n, q in enumerate(questions[: self.count], start=1):
                warnings += self._create(video=video, task=task, q=q, n=n, call=result.call)
        return ItemResult(CREATED, rows=min(len(questions), self.count), call=result.call, warnings=warnings)

    def _create(self, *, video: Video, task: dict, q: dict, n: int, call: LLMCall) -> list[str]:
        warnings = []
        question = str(q["question"]).strip()
        span = _span(question, str(q.get("referring_query") or ""))
        if q.get("referring_query") and span is None:
            warnings.append(f"question {n}: the referring query is not part of the question; not marked")
        given = _options_from(q)
        mcq = MCQ.objects.create(
            project=self.project,
            status=ItemStatus.DRAFT,
            origin=Origin.MACHINE,
            question=question,
            referring_query=span[0] if span else "",
            referring_start=span[1] if span else None,
            referring_end=span[2] if span else None,
            question_wo_referring_query=str(q.get("question_without_referring_query") or "").strip(),
            options=given[0] if given else [],
            correct_index=given[1] if given else None,
            category=task["task"][:60],
            level=task["level"][:20],
            task_group=("" if task["level"] else task["group"])[:60],
            machine_draft=q,
            draft_call=call,
        )
        MCQVideo.objects.create(mcq=mcq, video=video, role=VideoRole.MAIN, order=0)
        order = 0
        for t in q.get("moments") or []:
            if (
                not isinstance(t, int | float)
                or isinstance(t, bool)
                or t < 0
                or (video.duration_s and t > video.duration_s)
            ):
                warnings.append(f"question {n}: moment {t!r} s lies outside the video; dropped")
                continue
            ReferredMoment.objects.create(
                mcq=mcq, video=video, time_s=float(t), frame_index=video.frame_index(float(t)), order=order
            )
            order += 1
        return warnings
