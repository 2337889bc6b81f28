"""`failure_words`: a job's or model call's error text as one plain sentence ("" when none is known)."""

from django import template

from llm.failures import failure_in_words

register = template.Library()


@register.filter
def failure_words(error) -> str:
    return failure_in_words(str(error or "")) or ""
