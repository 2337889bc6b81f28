"""Step 4: seed questions per task, proposed for curators to keep or reject."""

from __future__ import annotations

from django.db import transaction

from llm.client import chat_json
from projects.models import Project

from ..models import Origin, SeedQuestion, SeedStatus
from .base import CREATED, FAILED, SKIPPED_EXISTING, DraftSummary, Item, ItemResult, draft_tasks, language_name, norm

DEFAULT_SEED_COUNT = 5


class SeedStep:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.count = int(params.get("count") or DEFAULT_SEED_COUNT)
        self.more = bool(params.get("more"))
        wanted = params.get("tasks")
        self.tasks = [t for t in draft_tasks(project=project) if not wanted or t["task"] in wanted]

    def plan(self, videos, summary: DraftSummary) -> list[Item]:
        drafted = set(
            SeedQuestion.objects.filter(project=self.project, origin=Origin.MACHINE)
            .values_list("task", flat=True)
            .distinct()
        )
        items = []
        for task in self.tasks:
            label, ref = f"task {task['task']}", {"task": task["task"]}
            if task["task"] in drafted and not self.more:
                summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
            else:
                items.append(Item(label, ref, task))
        return items

    def prepare(self, task: dict) -> list[str]:
        return list(
            SeedQuestion.objects.filter(project=self.project, task=task["task"])
            .order_by("id")
            .values_list("text", flat=True)
        )

    def draft(self, task: dict, existing: list[str]) -> ItemResult:
        result = chat_json(
            project=self.project,
            step="seed_questions",
            template_key="seed_questions",
            context={
                "task": task["prompt"],
                "task_group": task["group"] or "none",
                "existing": "\n".join(f"- {t}" for t in existing) or "(none yet)",
                "count": self.count,
                "language": language_name(self.project),
            },
        )
        questions = result.parsed.get("questions") if isinstance(result.parsed, dict) else None
        texts = []
        for q in questions if isinstance(questions, list) else []:
            text = str((q or {}).get("text") or "").strip() if isinstance(q, dict) else ""
            if text:
                texts.append(text[:2000])
        made = 0
        with transaction.atomic():
            taken = {
                norm(t)
                for t in SeedQuestion.objects.filter(project=self.project, task=task["task"]).values_list(
                    "text", flat=True
                )
            }
            for text in texts:
                if norm(text) in taken:
                    continue  # also never proposes again what a curator rejected
                taken.add(norm(text))
                SeedQuestion.objects.create(
                    project=self.project,
                    task=task["task"],
                    text=text,
                    status=SeedStatus.PROPOSED,
                    origin=Origin.MACHINE,
                    draft_call=result.call,
                )
                made += 1
        if not made:
            return ItemResult(
                FAILED, reason="every proposed seed was empty or already in the library", call=result.call
            )
        return ItemResult(CREATED, rows=made, call=result.call)
