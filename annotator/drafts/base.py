"""What every draft step shares: the steps themselves, an item's outcome, a run's summary, and the
project's tasks, videos and language as the steps read them."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_lazy

from llm.models import LLMCall
from llm.prompts import prompt_template_for_call
from projects.models import Project, ProjectKind
from videos.models import CurationStatus, Video, VideoStatus

from ..models import ItemStatus

LIST_LIMIT = 500  # failed, skipped and warned items listed in a job's result


LANGUAGES = {
    "en": "English",
    "zh": "Chinese",
    "zh-cn": "Simplified Chinese",
    "zh-tw": "Traditional Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "ru": "Russian",
}


@dataclass(frozen=True)
class DraftStep:
    code: str
    label: str
    llm_step: str  # LLMCall.step of its calls (the prompt template's key)
    uses_videos: bool = True
    uses_tasks: bool = False

    @property
    def kind(self) -> str:
        """The job kind, which is also the Celery task's name."""
        return f"annotator.draft_{self.code}"


# In pipeline order; a step builds on what the earlier ones made.
DRAFT_STEPS: dict[str, DraftStep] = {
    s.code: s
    for s in (
        DraftStep("chains", gettext_lazy("QA chains, one per clip"), "qa_chain"),
        DraftStep("relations", gettext_lazy("Relation candidates between adjacent chains"), "relations"),
        DraftStep("descriptions", gettext_lazy("Multi-agent descriptions (agent roles × models)"), "description"),
        DraftStep(
            "seeds", gettext_lazy("Seed questions per task"), "seed_questions", uses_videos=False, uses_tasks=True
        ),
        DraftStep("mcqs", gettext_lazy("Candidate MCQs per video and task (from kept seeds)"), "mcq", uses_tasks=True),
        DraftStep("options", gettext_lazy("Answers and distractors for MCQs without options"), "distractors"),
    )
}
STEP_BY_KIND = {s.kind: s for s in DRAFT_STEPS.values()}


# --- Outcomes ---------------------------------------------------------------------------------

CREATED = "created"
SKIPPED_HUMAN = "skipped_human"
SKIPPED_EXISTING = "skipped_existing"
SKIPPED = "skipped"  # cannot be drafted yet (no chains, no kept seeds …); the reason says what is missing
FAILED = "failed"


@dataclass
class ItemResult:
    outcome: str
    rows: int = 0  # rows the item made (a chain, 3 seeds, 2 MCQs …)
    reason: str = ""
    call: LLMCall | None = None
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # step-specific extras (relations, dropped links)


@dataclass
class DraftSummary:
    """What a run did, item by item where it matters; stored as the job's result."""

    step: str
    total: int = 0
    done: int = 0
    created: int = 0  # rows made
    items_created: int = 0
    skipped_human: int = 0
    skipped_existing: int = 0
    skipped: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    call_ids: list[int] = field(default_factory=list)
    excluded_videos: list[dict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, label: str, ref: dict, result: ItemResult) -> None:
        with self._lock:
            self.done += 1
            if result.call is not None:
                self.call_ids.append(result.call.pk)
            for key, n in result.counts.items():
                self.counts[key] = self.counts.get(key, 0) + n
            for warning in result.warnings:
                self.warnings.append({"item": label, **ref, "warning": warning})
            if result.outcome == CREATED:
                self.items_created += 1
                self.created += result.rows
            elif result.outcome == SKIPPED_HUMAN:
                self.skipped_human += 1
            elif result.outcome == SKIPPED_EXISTING:
                self.skipped_existing += 1
            elif result.outcome == SKIPPED:
                self.skipped.append({"item": label, **ref, "reason": result.reason})
            else:
                entry = {"item": label, **ref, "reason": result.reason}
                entry["call"] = result.call.pk if result.call is not None else None
                self.failed.append(entry)

    def as_json(self) -> dict:
        calls = sorted(self.call_ids)
        return {
            "step": self.step,
            "total": self.total,
            "done": self.done,
            "created": self.created,
            "items_created": self.items_created,
            "skipped_human": self.skipped_human,
            "skipped_existing": self.skipped_existing,
            # Lists are cut at LIST_LIMIT (an endpoint down for 10,000 clips); the counts stay exact.
            "skipped_count": len(self.skipped),
            "failed_count": len(self.failed),
            "warnings_count": len(self.warnings),
            "skipped": self.skipped[:LIST_LIMIT],
            "failed": self.failed[:LIST_LIMIT],
            "warnings": self.warnings[:LIST_LIMIT],
            **({"counts": self.counts} if self.counts else {}),
            "excluded_videos": self.excluded_videos,
            # The calls this run made: their ids bound an admin list of exactly these calls.
            "calls": {
                "count": len(calls),
                "min_id": calls[0] if calls else None,
                "max_id": calls[-1] if calls else None,
            },
        }

    def message(self) -> str:
        parts = [f"{self.created} created"]
        extra = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in sorted(self.counts.items()) if n)
        if extra:
            parts[0] += f" ({extra})"
        if self.skipped_existing:
            parts.append(f"{self.skipped_existing} already drafted")
        if self.skipped_human:
            parts.append(f"{self.skipped_human} left to people")
        if self.skipped:
            parts.append(f"{len(self.skipped)} not ready")
        if self.failed:
            first = self.failed[0]
            parts.append(f"{len(self.failed)} failed (first: {first['item']}: {first['reason']})")
        return "; ".join(parts)


@dataclass
class Item:
    label: str
    ref: dict
    obj: Any


def language_name(project: Project) -> str:
    code = (project.primary_language or "en").lower()
    return LANGUAGES.get(code, LANGUAGES.get(code.split("-")[0], code))


def schema_for(project: Project, key: str) -> dict | None:
    """The active template's response schema (a copy), so a step can tighten it to the project."""
    return copy.deepcopy(prompt_template_for_call(project=project, key=key).response_schema)


def schema_part(schema: Any, *path: str) -> dict | None:
    for key in path:
        if not isinstance(schema, dict):
            return None
        schema = schema.get(key)
    return schema if isinstance(schema, dict) else None


def draft_tasks(*, project: Project) -> list[dict]:
    """What MCQs and seeds are drafted per: the 17 LongVideoBench codes or the project's task list.

    `task` is what is stored (MCQ.category, SeedQuestion.task); `prompt` is how the model is told.
    """
    if project.kind == ProjectKind.LONGVIDEOBENCH:
        return [
            {
                "task": c["code"],
                "group": c.get("level", ""),
                "level": c.get("level", ""),
                "prompt": f"{c['code']} ({c.get('name', '')})",
            }
            for c in project.taxonomy("question_categories")
        ]
    return [
        {"task": t["task"], "group": t.get("group", ""), "level": "", "prompt": t["task"]}
        for t in project.taxonomy("tasks")
        if t.get("task")
    ]


def draft_videos(*, project: Project, video_ids: Iterable[int] | None = None):
    """The videos a run may draft for: processed, not rejected by curation, not flagged unusable."""
    videos = Video.objects.filter(project=project, status=VideoStatus.READY, unusable_reason="").exclude(
        curation_status=CurationStatus.REJECTED
    )
    if video_ids is not None:
        videos = videos.filter(pk__in=list(video_ids))
    return videos.order_by("name", "pk")


def untouched(item) -> bool:
    return not item.human_edited and item.status == ItemStatus.DRAFT


def norm(text: str) -> str:
    return " ".join(str(text).lower().split())
