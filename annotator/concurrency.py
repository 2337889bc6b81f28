"""Optimistic concurrency for annotation items: a save names the version it was based on.

`version_claim` bumps the item's version only if it still has the expected one, in one UPDATE,
so of two saves based on the same version exactly one wins; the other gets StaleVersion with the
current version, and the editor shows both to merge. Nothing is lost silently.
"""

from django.db.models import F
from django.utils import timezone

from projects.refusals import Refused


class StaleVersion(Refused):
    """Someone saved this item after the version the editor started from."""

    status, code = 409, "stale_version"

    def __init__(self, *, item, expected: int):
        super().__init__(
            f"This item was saved by someone else (version {item.version}) after you opened version {expected}."
        )
        self.item = item
        self.expected = expected


def version_claim(*, item, expected: int, user=None) -> int:
    """Take the next version of `item` if it is still at `expected`; returns the new version.

    Call inside the transaction that writes the content. Sets `human_edited` (machine re-runs then
    leave the item alone) and the author on the first human save.
    """
    model = type(item)
    fields = {"version": F("version") + 1, "updated_at": timezone.now(), "human_edited": True}
    updated = model.objects.filter(pk=item.pk, version=expected).update(**fields)
    if not updated:
        current = model.objects.get(pk=item.pk)
        raise StaleVersion(item=current, expected=expected)
    if user is not None and getattr(user, "is_authenticated", False):
        model.objects.filter(pk=item.pk, author__isnull=True).update(author=user)
    item.refresh_from_db(fields=["version", "human_edited", "author", "updated_at"])
    return item.version
