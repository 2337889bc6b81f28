"""Reads of the LLM app's data."""

from django.db.models import F, Q

from .models import PromptTemplate


def prompt_template_active(*, project, key: str) -> PromptTemplate | None:
    """The project's active template for `key`, else the active global one (one query)."""
    scope = Q(project__isnull=True) | Q(project=project) if project is not None else Q(project__isnull=True)
    return (
        PromptTemplate.objects.filter(scope, key=key, is_active=True)
        .order_by(F("project").asc(nulls_last=True), "-version")
        .first()
    )
