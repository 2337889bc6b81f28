"""Per-project filter rules over videos; every decision is stored with its reason.

An admin's override (kept or rejected) wins over the rules and survives re-runs.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from projects.models import Project, ProjectKind

from .models import CurationDecision, CurationStatus, ExternalScore, Video


@dataclass(frozen=True)
class Verdict:
    passed: bool
    value: float | None
    reason: str


def _duration(video: Video, project: Project) -> Verdict | None:
    d = video.duration_s
    if d is None:
        return None
    ok = d >= project.min_duration_s
    return Verdict(ok, d, f"duration {d:.1f} s {'≥' if ok else '<'} {project.min_duration_s:g} s")


def _scene_count(video: Video, project: Project) -> Verdict | None:
    if video.scenes is None:
        return None
    n = len(video.scenes)
    ok = project.min_scenes <= n <= project.max_scenes
    return Verdict(ok, n, f"{n} scenes; wanted {project.min_scenes}–{project.max_scenes}")


def _mean_scene(video: Video, project: Project) -> Verdict | None:
    if not video.scenes:
        return None
    mean = sum(e - s for s, e in video.scenes) / len(video.scenes)
    ok = project.min_mean_scene_s <= mean <= project.max_mean_scene_s
    return Verdict(
        ok,
        round(mean, 3),
        f"mean scene {mean:.1f} s; wanted {project.min_mean_scene_s:g}–{project.max_mean_scene_s:g} s",
    )


def _resolution(video: Video, project: Project) -> Verdict | None:
    if not video.width or not video.height:
        return None
    short_side = min(video.width, video.height)
    ok = short_side >= project.min_height_px
    return Verdict(ok, short_side, f"{short_side}p {'≥' if ok else '<'} {project.min_height_px}p")


def _duration_group(video: Video, project: Project) -> Verdict | None:
    d = video.duration_s
    if d is None:
        return None
    for group in project.taxonomy("duration_groups"):
        if group["low"] < d <= group["high"]:
            return Verdict(
                True, d, f"duration {d:.1f} s is in group {group['name']} ({group['low']}, {group['high']}] s"
            )
    spans = ", ".join(f"({g['low']}, {g['high']}]" for g in project.taxonomy("duration_groups"))
    return Verdict(False, d, f"duration {d:.1f} s is in no duration group {spans}")


def _complexity(video: Video, project: Project) -> Verdict | None:
    if video.complexity_score is None:
        return None
    c = video.complexity_score
    ok = c >= project.min_complexity
    return Verdict(ok, c, f"LLM complexity {c} {'≥' if ok else '<'} {project.min_complexity}")


RULES = {
    "duration": ("Minimum duration", _duration),
    "scene_count": ("Number of scenes", _scene_count),
    "mean_scene": ("Mean scene length", _mean_scene),
    "resolution": ("Minimum resolution", _resolution),
    "duration_group": ("LongVideoBench duration group", _duration_group),
    "complexity": ("LLM complexity score", _complexity),
}

DEFAULT_RULES = {
    ProjectKind.SVBENCH: ["duration", "scene_count", "mean_scene"],
    ProjectKind.LONGVIDEOBENCH: ["resolution", "duration_group"],
    ProjectKind.LIVIBENCH: ["complexity"],
    ProjectKind.MVPBENCH: [],
    ProjectKind.GENERIC: [],
}


def rules_for(project: Project) -> list[str]:
    return list(project.curation_rules) or DEFAULT_RULES.get(project.kind, [])


def _external(video: Video, project: Project, scores: dict) -> dict[str, Verdict]:
    out = {}
    for name, bounds in (project.external_score_thresholds or {}).items():
        value = scores.get(name)
        if value is None:
            continue  # not imported yet: no decision
        low, high = bounds.get("min"), bounds.get("max")
        ok = (low is None or value >= low) and (high is None or value <= high)
        wanted = " and ".join(
            p for p in (f"≥ {low:g}" if low is not None else "", f"≤ {high:g}" if high is not None else "") if p
        )
        out[f"external:{name}"] = Verdict(ok, value, f"{name} score {value:g}; wanted {wanted}")
    return out


@transaction.atomic
def video_curate(*, video: Video) -> str:
    """Evaluate the project's rules, store one decision per rule, set the video's curation status."""
    video = Video.objects.select_for_update().select_related("project").get(pk=video.pk)
    project = video.project
    verdicts: dict[str, Verdict] = {}
    for code in rules_for(project):
        if code in RULES:
            verdict = RULES[code][1](video, project)
            if verdict is not None:
                verdicts[code] = verdict
    scores = dict(ExternalScore.objects.filter(video=video).values_list("name", "value"))
    verdicts.update(_external(video, project, scores))

    stale = CurationDecision.objects.filter(video=video).exclude(rule__in=verdicts)
    stale.delete()
    for code, v in verdicts.items():
        CurationDecision.objects.update_or_create(
            video=video, rule=code, defaults={"passed": v.passed, "value": v.value, "reason": v.reason}
        )
    if video.curation_overridden_by_id is None:
        status = CurationStatus.KEPT if all(v.passed for v in verdicts.values()) else CurationStatus.REJECTED
        if not verdicts:
            status = CurationStatus.PENDING
        Video.objects.filter(pk=video.pk).update(curation_status=status, updated_at=timezone.now())
        video.curation_status = status
    return video.curation_status


@transaction.atomic
def video_curation_override(*, video: Video, user, status: str, note: str = "") -> Video:
    """An admin keeps or rejects a video whatever the rules say; `pending` returns it to the rules."""
    video = Video.objects.select_for_update().get(pk=video.pk)
    if status == CurationStatus.PENDING:
        video.curation_overridden_by = None
        video.save(update_fields=["curation_overridden_by", "updated_at"])
        CurationDecision.objects.filter(video=video).update(overridden_by=None, override_note="")
        video_curate(video=video)
        video.refresh_from_db()
        return video
    if status not in (CurationStatus.KEPT, CurationStatus.REJECTED):
        raise ValueError(f"Unknown curation status {status!r}.")
    video.curation_status = status
    video.curation_overridden_by = user
    video.save(update_fields=["curation_status", "curation_overridden_by", "updated_at"])
    CurationDecision.objects.filter(video=video).update(overridden_by=user, override_note=note[:2000])
    return video


def external_scores_import(*, project: Project, rows) -> dict:
    """Import (video name, score name, value) rows; re-evaluates the videos they touch."""
    by_name = dict(Video.objects.filter(project=project).values_list("name", "id"))
    touched, unknown, imported = set(), [], 0
    for video_name, score_name, value in rows:
        video_id = by_name.get(video_name)
        if video_id is None:
            unknown.append(video_name)
            continue
        ExternalScore.objects.update_or_create(video_id=video_id, name=score_name, defaults={"value": float(value)})
        touched.add(video_id)
        imported += 1
    for video in Video.objects.filter(pk__in=touched):
        video_curate(video=video)
    return {"imported": imported, "videos": len(touched), "unknown_videos": sorted(set(unknown))}
