"""Who else has an item open: "Open by Mara since 14:02" on every editor and on the examine page.

Two sources, merged per person: a live lease (Assignment) someone else holds on the item, and a
lightweight presence mark that an open page renews with each beat (static/js/presence.js). The marks
live in the shared cache, not the database: they are worth nothing once the page is closed, and a
mark lost to a race between two beats comes back at the next one.
"""

from __future__ import annotations

import datetime as dt

from django.core.cache import cache
from django.utils import timezone
from django.utils.translation import gettext

from annotator.models import ItemKind

from .models import Assignment, AssignmentStatus

# A page beats every PRESENCE_BEAT_S seconds; a mark not renewed for PRESENCE_TTL_S is gone.
PRESENCE_BEAT_S = 30
PRESENCE_TTL_S = 3 * PRESENCE_BEAT_S


def _key(kind: str, item_id: int) -> str:
    return f"presence:{ItemKind(kind).value}:{item_id}"


def _name(user) -> str:
    return user.get_full_name() or user.get_username()


def presence_label(others: list[dict]) -> str:
    """ "Open by Mara since 14:02; by Tom since 14:10" in the site's time zone ("" when nobody)."""
    return "; ".join(
        gettext("Open by %(name)s since %(time)s")
        % {"name": o["name"], "time": timezone.localtime(o["since"]).strftime("%H:%M")}
        for o in others
    )


def presence_mark(*, kind: str, item_id: int, user, now: dt.datetime | None = None) -> None:
    """This person has the item open now (kept since they opened it, while the page keeps beating)."""
    now = now or timezone.now()
    key = _key(kind, item_id)
    marks = _fresh(cache.get(key) or {}, now)
    mine = marks.get(str(user.pk))
    since = mine["since"] if mine else now.timestamp()
    marks[str(user.pk)] = {"name": _name(user), "since": since, "seen": now.timestamp()}
    cache.set(key, marks, PRESENCE_TTL_S)


def presence_clear(*, kind: str, item_id: int, user) -> None:
    """This person closed the item's page."""
    key = _key(kind, item_id)
    marks = cache.get(key) or {}
    if marks.pop(str(user.pk), None) is not None:
        cache.set(key, marks, PRESENCE_TTL_S)


def _fresh(marks: dict, now: dt.datetime) -> dict:
    return {k: v for k, v in marks.items() if now.timestamp() - v["seen"] < PRESENCE_TTL_S}


def item_presence(*, item, user, leases=None, now: dt.datetime | None = None) -> list[dict]:
    """Everyone but `user` who has the item open, earliest first: [{name, since (aware datetime)}].

    `leases`: the item's active assignments with their assignees, when the caller has them already;
    else one query reads them. Then one cache read.
    """
    now = now or timezone.now()
    ref = Assignment.ref_for(item)
    others: dict[str, dict] = {}
    if leases is None:
        leases = Assignment.objects.filter(**ref, status=AssignmentStatus.ACTIVE).select_related("assignee")
    for lease in leases:
        if lease.assignee_id == user.pk or lease.lease_expires_at <= now:
            continue
        others[str(lease.assignee_id)] = {"name": _name(lease.assignee), "since": lease.leased_at}
    for pk, mark in _fresh(cache.get(_key(ref["item_kind"], item.pk)) or {}, now).items():
        if pk == str(user.pk):
            continue
        since = dt.datetime.fromtimestamp(mark["since"], tz=dt.UTC)
        known = others.get(pk)
        if known is None or since < known["since"]:
            others[pk] = {"name": mark["name"], "since": since}
    return sorted(others.values(), key=lambda o: o["since"])
