"""An MCQ's shortcut-probe answers, for the examine page: which probes answered it without the video."""

from django import template

from annotator.models import MCQ
from llm.answers import option_labels

from ..selectors import item_probe_answers

register = template.Library()


@register.inclusion_tag("audits/_probe_results.html")
def probe_results(item) -> dict:
    if not isinstance(item, MCQ):
        return {"show": False}
    answers = item_probe_answers(mcq=item)
    rows = []
    for a in answers:
        letters = option_labels(a.option_count)  # the item's own order, as the page shows it
        rows.append(
            {
                "answer": a,
                "chosen": letters[a.chosen_index] if a.ok and a.chosen_index is not None else "",
                "stale": a.item_version != item.version,
            }
        )
    answered = [a for a in answers if a.ok]
    correct = sum(1 for a in answered if a.correct)
    return {
        "show": True,
        "rows": rows,
        "answered": len(answered),
        "correct": correct,
        "score": round(100 * correct / len(answered)) if answered else None,
        "stale": any(r["stale"] for r in rows),
    }
