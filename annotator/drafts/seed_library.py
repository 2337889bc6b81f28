"""The seed-question library: curators add seeds, and keep, reject or reword proposed ones."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from projects.models import Project

from ..models import Origin, SeedQuestion, SeedStatus
from .base import draft_tasks, norm


def _seed_text_clean(*, project: Project, task: str, text: str, exclude_id: int | None = None) -> str:
    text = " ".join(str(text or "").split())
    if not text:
        raise ValidationError(_("A seed question needs some text."))
    if len(text) > 2000:
        raise ValidationError(_("A seed question is at most 2,000 characters."))
    clash = SeedQuestion.objects.filter(project=project, task=task).exclude(pk=exclude_id)
    if any(norm(t) == norm(text) for t in clash.values_list("text", flat=True)):
        raise ValidationError(_("The library of %(task)s already holds this question.") % {"task": task})
    return text


def seed_create(*, project: Project, task: str, text: str, user=None) -> SeedQuestion:
    """A seed written by a curator: kept at once (a person chose it)."""
    if task not in {t["task"] for t in draft_tasks(project=project)} | set(
        SeedQuestion.objects.filter(project=project).values_list("task", flat=True)
    ):
        raise ValidationError(_("“%(task)s” is not a task of this project.") % {"task": task})
    text = _seed_text_clean(project=project, task=task, text=text)
    try:
        with transaction.atomic():
            return SeedQuestion.objects.create(
                project=project,
                task=task,
                text=text,
                status=SeedStatus.KEPT,
                origin=Origin.HUMAN,
                created_by=user if user is not None and user.is_authenticated else None,
            )
    except IntegrityError as exc:
        raise ValidationError(_("The library of %(task)s already holds this question.") % {"task": task}) from exc


def seed_update(*, seed: SeedQuestion, status: str | None = None, text: str | None = None) -> SeedQuestion:
    """Keep, reject or reword a seed. The origin stays: it says who proposed the question."""
    fields = []
    if status is not None:
        if status not in SeedStatus.values:
            raise ValidationError(_("Unknown seed status “%(status)s”.") % {"status": status})
        seed.status = status
        fields.append("status")
    if text is not None:
        seed.text = _seed_text_clean(project=seed.project, task=seed.task, text=text, exclude_id=seed.pk)
        fields.append("text")
    if fields:
        try:
            with transaction.atomic():
                seed.save(update_fields=fields)
        except IntegrityError as exc:
            raise ValidationError(
                _("The library of %(task)s already holds this question.") % {"task": seed.task}
            ) from exc
    return seed
