"""Who may edit a reviewable item (QA chain, the links of a chain pair, MCQ) at its current stage.

The three editors ask here, so a chain, its links and an MCQ follow one rule:

- draft and annotating: anyone who annotates in the project;
- revising, sent back by the LLM judge (lifecycle.revision_owner → "author"): the
  annotator who wrote it fixes what the judge found (an item without an author: any annotator);
  a project admin may step in;
- revising after an examiner's flag or an admin's reopen ("reviser"): a reviser who did not write
  it (examiner and reviser are never the item's author);
- anything else (submitted, under review, accepted): nobody, here.
"""

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from projects.permissions import Action, can

from .lifecycle import REVISION_AUTHOR, revision_owner
from .models import ItemStatus

ANNOTATOR_STATUSES = (ItemStatus.DRAFT, ItemStatus.ANNOTATING)


def may_edit(user, project, item) -> bool:
    if item.status in ANNOTATOR_STATUSES:
        return can(user, Action.ANNOTATE, project)
    if item.status != ItemStatus.REVISING:
        return False
    if revision_owner(item=item) == REVISION_AUTHOR:
        if can(user, Action.ADMINISTER, project):
            return True
        author_id = getattr(item, "author_id", None)
        return can(user, Action.ANNOTATE, project) and (author_id is None or author_id == user.pk)
    return can(user, Action.REVISE, project, item)


# The nouns callers name their item by, shown inside the sentences below.
_NOUNS = {
    "item": gettext_lazy("item"),
    "chain": gettext_lazy("chain"),
    "MCQ": gettext_lazy("MCQ"),
    "set of links": gettext_lazy("set of links"),
}


def why_not_editable(user, project, item, noun: str = "item") -> str:
    """A sentence saying why `may_edit` said no, and what to do instead."""
    status = item.get_status_display().lower()
    names = {"project": project.name, "noun": _NOUNS.get(noun, noun), "status": status}
    if item.status in ANNOTATOR_STATUSES:
        return _("Your role in %(project)s does not annotate: you can read this %(noun)s but not change it.") % names
    if item.status != ItemStatus.REVISING:
        return (
            _(
                "This %(noun)s is %(status)s: it can be edited only while it is a draft, being annotated or being "
                "revised."
            )
            % names
        )
    if revision_owner(item=item) == REVISION_AUTHOR:
        return (
            _(
                "The LLM judge sent this %(noun)s back to the annotator who wrote it: only they (or a project admin) "
                "fix it."
            )
            % names
        )
    if getattr(item, "author_id", None) == user.pk:
        return _("You wrote this %(noun)s: a reviser who did not write it fixes what the examiner flagged.") % names
    return _("Your role in %(project)s does not let you revise this %(noun)s.") % names
