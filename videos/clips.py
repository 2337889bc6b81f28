"""Clips are time ranges over the source video, planned from its detected scenes.

Re-planning never orphans annotations: when clips that carry annotations would change, nothing
is changed and the reason names those clips. Which clips carry annotations is for the apps that
annotate them to say: they register a holder here (`clip_holder_register`, from their
AppConfig.ready), so this module knows nothing of them.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _

from .models import Clip, Video
from .scene_split import plan_clips

_TOLERANCE_S = 0.0005


class ClipsLocked(Exception):
    """The new plan would move or remove clips that carry annotations."""


@dataclass(frozen=True)
class ClipsOutcome:
    clip_count: int
    changed: bool


# (video) -> the ids of its clips that something hangs on; a rebuild would delete it with them.
ClipHolder = Callable[[Video], set[int]]

_clip_holders: list[ClipHolder] = []


def clip_holder_register(holder: ClipHolder) -> None:
    if holder not in _clip_holders:
        _clip_holders.append(holder)


def _annotated_clip_ids(video: Video) -> set[int]:
    return set().union(*(holder(video) for holder in _clip_holders))


@transaction.atomic
def clips_rebuild(*, video: Video) -> ClipsOutcome:
    video = Video.objects.select_for_update().select_related("project").get(pk=video.pk)
    project = video.project
    if not video.scenes or not video.duration_s:
        raise ValueError(f"{video.name} has no detected scenes yet: process the video first.")
    plan = plan_clips(
        [tuple(s) for s in video.scenes],
        duration=video.duration_s,
        min_scene_s=project.scene_min_s,
        pad_s=project.clip_pad_s,
    )
    existing = list(Clip.objects.filter(video=video).order_by("index"))
    same = len(existing) == len(plan) and all(
        abs(c.start_s - p.start) < _TOLERANCE_S and abs(c.end_s - p.end) < _TOLERANCE_S
        for c, p in zip(existing, plan, strict=True)
    )
    if same:
        return ClipsOutcome(len(existing), changed=False)
    annotated = _annotated_clip_ids(video)
    if annotated:
        indexes = ", ".join(str(c.index) for c in existing if c.pk in annotated)
        raise ClipsLocked(
            _(
                "Clips %(indexes)s of %(video)s carry annotations and the new scene settings would change them; "
                "the clips were left as they were. Move or delete those annotations first."
            )
            % {"indexes": indexes, "video": video.name}
        )
    Clip.objects.filter(video=video).delete()
    Clip.objects.bulk_create(
        Clip(
            video=video,
            index=p.index,
            start_s=p.start,
            end_s=p.end,
            scene_start_s=p.scene_start,
            scene_end_s=p.scene_end,
        )
        for p in plan
    )
    return ClipsOutcome(len(plan), changed=True)
