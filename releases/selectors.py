"""Reads for the release screens, the API and the command: lists, what a release's filters match, and
the shapes the detail and statistics pages show.

`release_match_counts` answers the form's preview and `release_create`'s "does anything match?"; it
reads the same filters the build selects by (accepted items by default, categories, videos, dates).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from annotator.models import MCQ, ChainPair, ItemStatus, QAChain
from charts import svg
from projects.models import Project

from .models import DatasetRelease, ReleaseStatus

# Kind of item → how its video is reached and what its category is, for the filters.
ITEM_KINDS = ("qa_chain", "chain_pair", "mcq")
_ITEM_MODELS = {"qa_chain": QAChain, "chain_pair": ChainPair, "mcq": MCQ}
_VIDEO_PATH = {"qa_chain": "clip__video_id", "chain_pair": "video_id", "mcq": "mcq_videos__video_id"}
DEFAULT_STATUSES = (ItemStatus.ACCEPTED.value,)


def release_list(*, project: Project, include_deleted: bool = True) -> QuerySet[DatasetRelease]:
    """The project's releases, newest first, with what the list shows fetched in the same query."""
    releases = (
        DatasetRelease.objects.filter(project=project)
        .select_related("created_by", "deleted_by", "job")
        # The manifest and validation errors can be large; the list reads statistics' counts only.
        .defer("manifest", "validation_errors", "files")
        .order_by("-created_at", "-pk")
    )
    if not include_deleted:
        releases = releases.exclude(status=ReleaseStatus.DELETED)
    return releases


def release_get(*, project: Project, release_id: int) -> DatasetRelease | None:
    release = (
        DatasetRelease.objects.filter(project=project, pk=release_id)
        .select_related("created_by", "deleted_by", "job")
        .first()
    )
    if release is not None:
        release.project = project  # already fetched by the permission check
    return release


def release_by_version(*, project: Project, version: str) -> DatasetRelease | None:
    release = (
        DatasetRelease.objects.filter(project=project, version=version)
        .select_related("created_by", "deleted_by", "job")
        .first()
    )
    if release is not None:
        release.project = project
    return release


# --- what the filters match ------------------------------------------------------------------------


def _items_q(kind: str, filters: dict) -> Q:
    q = Q(status__in=filters.get("statuses") or DEFAULT_STATUSES)
    video_ids = filters.get("video_ids")
    if video_ids:
        q &= Q(**{f"{_VIDEO_PATH[kind]}__in": video_ids})
    categories = filters.get("categories")
    if categories:
        if kind == "mcq":
            q &= Q(category__in=categories)
        elif kind == "qa_chain":
            q &= Q(pairs__skill__in=categories)
        else:  # a chain pair belongs to the categories of its two chains' turns
            q &= Q(chain_before__pairs__skill__in=categories) | Q(chain_after__pairs__skill__in=categories)
    if filters.get("accepted_from"):
        q &= Q(accepted_at__date__gte=dt.date.fromisoformat(filters["accepted_from"]))
    if filters.get("accepted_to"):
        q &= Q(accepted_at__date__lte=dt.date.fromisoformat(filters["accepted_to"]))
    return q


def matching_items(*, project: Project, kind: str, filters: dict) -> QuerySet:
    """Items of one kind that the (normalised) filters select, once each."""
    model = _ITEM_MODELS[kind]
    return model.objects.filter(Q(project=project) & _items_q(kind, filters)).distinct()


@dataclass(frozen=True)
class MatchCounts:
    items: dict  # kind → n
    videos: int

    @property
    def total(self) -> int:
        return sum(self.items.values())

    def describe(self) -> str:
        parts = [f"{n} {_KIND_LABELS[kind]}{'s' if n != 1 else ''}" for kind, n in self.items.items() if n]
        videos = f"{self.videos} video{'s' if self.videos != 1 else ''}"
        return f"{', '.join(parts) or 'no items'} from {videos}"


_KIND_LABELS = {"qa_chain": "QA chain", "chain_pair": "chain pair", "relation": "relation", "mcq": "MCQ"}


def release_match_counts(*, project: Project, filters: dict) -> MatchCounts:
    """How many items of each kind, and from how many videos, the filters select (two queries per kind)."""
    items = {}
    video_ids: set[int] = set()
    for kind in ITEM_KINDS:
        matched = matching_items(project=project, kind=kind, filters=filters)
        ids = set(matched.values_list(_VIDEO_PATH[kind], flat=True))
        ids.discard(None)
        items[kind] = matched.count()
        video_ids |= ids
    return MatchCounts(items=items, videos=len(video_ids))


# --- detail and statistics shapes --------------------------------------------------------------------


def release_summary(release: DatasetRelease) -> dict:
    """Counts a person reads first: videos, items per kind, QA pairs, per split (from the statistics)."""
    stats = release.statistics or {}
    items = stats.get("items") or {}
    return {
        "videos": stats.get("videos"),
        "items": items,
        # (label, n) pairs, for templates: a dict's `.items` would be looked up as its key.
        "item_counts": [
            (_KIND_LABELS.get(kind, kind.replace("_", " ")) + ("" if n == 1 else "s"), n)
            for kind, n in items.items()
            if n
        ],
        "qa_pairs": stats.get("qa_pairs"),
        "per_split": stats.get("per_split") or {},
        "categories": stats.get("categories") or {},
        "category_tables": [
            (taxonomy_title(name), counts) for name, counts in sorted((stats.get("categories") or {}).items())
        ],
        "duration_groups": stats.get("duration_groups") or {},
    }


def release_total_bytes(release: DatasetRelease) -> int:
    return sum(int(f.get("bytes") or 0) for f in release.files or [])


# How the build names the item at fault ("mcq 12", "chain 4", "chain_pair 7", "video bench_0001")
# → the item kind whose editor opens it.
_ERROR_ITEM_KINDS = {"mcq": "mcq", "chain": "qa_chain", "qa_chain": "qa_chain", "chain_pair": "chain_pair"}


def validation_rows(release: DatasetRelease, *, limit: int = 500) -> dict:
    """The release's validation errors as rows a person can act on: what, where, and a link to the item.

    The build stores `{"format", "file", "item", "message"}` per problem; `item` names the item at
    fault as "<kind> <id>" (or "video <name>"), which becomes a link to its editor (or the video).
    """
    from reviewer.queues import item_path

    errors = release.validation_errors or []
    shown = [e if isinstance(e, dict) else {"message": str(e)} for e in errors[:limit]]
    slug = release.project.slug
    parsed = [str(e.get("item") or "").partition(" ") for e in shown]
    video_names = {rest for kind, _, rest in parsed if kind == "video" and rest}
    video_ids = (
        dict(release.project.videos.filter(name__in=video_names).values_list("name", "pk")) if video_names else {}
    )
    rows = []
    for error, (kind, _, rest) in zip(shown, parsed, strict=True):
        link = None
        if kind in _ERROR_ITEM_KINDS and rest.isdecimal():
            link = item_path(kind=_ERROR_ITEM_KINDS[kind], item_id=int(rest), slug=slug)
        elif kind == "video" and rest in video_ids:
            link = f"/p/{slug}/videos/{video_ids[rest]}/"
        rows.append(
            {
                "format": error.get("format") or "",
                "file": error.get("file") or "",
                "item": error.get("item") or "",
                "link": link,
                "message": error.get("message") or "",
            }
        )
    return {"rows": rows, "total": len(errors), "shown": len(rows)}


# What the build counts per taxonomy (releases.statistics), named for people.
TAXONOMY_LABELS = {
    "topic_categories": "topic category",
    "skills": "skill",
    "question_categories": "question category",
    "levels": "level",
    "tasks": "task",
    "task_groups": "task group",
    "mvp_subtasks": "MVPBench subtask",
    "relation_types": "relation type",
}
# Taxonomies counted per video rather than per item.
_PER_VIDEO = {"topic_categories"}


def taxonomy_title(taxonomy: str) -> str:
    unit = "Videos" if taxonomy in _PER_VIDEO else "QA pairs" if taxonomy == "skills" else "Items"
    if taxonomy == "relation_types":
        unit = "Relations"
    return f"{unit} per {TAXONOMY_LABELS.get(taxonomy, taxonomy.replace('_', ' '))}"


def _pairs(mapping: dict) -> tuple[list[str], list[float]]:
    items = sorted((mapping or {}).items(), key=lambda kv: (-kv[1], str(kv[0])))
    return [str(k) for k, _ in items], [v for _, v in items]


def release_charts(release: DatasetRelease) -> list[dict]:
    """The statistics page's charts (charts.svg geometry) with the numbers each one draws.

    Each entry: `id`, `title`, `chart`, and `table` (rows of label and values) so the exact numbers
    sit beside the picture.
    """
    stats = release.statistics or {}
    out = []

    per_split = stats.get("per_split") or {}
    if per_split:
        names = list(per_split)
        out.append(
            {
                "id": "splits",
                "title": "Videos per split (items in the table)",
                # Videos, the unit a split is made of; items would not add up with them in one bar.
                "chart": svg.bar_chart(
                    names,
                    [per_split[n].get("videos", 0) for n in names],
                    title="Videos per split",
                    horizontal=True,
                ),
                "table": {
                    "head": ["split", "videos", "items"],
                    "rows": [[n, per_split[n].get("videos", 0), per_split[n].get("items", 0)] for n in names],
                },
            }
        )

    for taxonomy, counts in sorted((stats.get("categories") or {}).items()):
        labels, values = _pairs(counts)
        title = taxonomy_title(taxonomy)
        out.append(
            {
                "id": f"categories-{taxonomy}",
                "title": title,
                "chart": svg.bar_chart(labels, values, title=title, horizontal=True, label_width=160),
                "table": {
                    "head": [TAXONOMY_LABELS.get(taxonomy, taxonomy.replace("_", " ")), "count"],
                    "rows": [list(p) for p in zip(labels, values, strict=True)],
                },
            }
        )

    groups = stats.get("duration_groups") or {}
    if groups:
        labels = sorted(groups, key=_numeric_first)
        title = "Videos per duration group (s)"
        out.append(
            {
                "id": "duration-groups",
                "title": title,
                "chart": svg.bar_chart(labels, [groups[g] for g in labels], title=title, colour=1),
                "table": {"head": ["group", "videos"], "rows": [[g, groups[g]] for g in labels]},
            }
        )

    for key, chart_id, title, unit in (
        ("duration_histogram", "durations", "Video durations (seconds)", "edges_s"),
        ("qa_per_video", "qa-per-video", "Questions per video", "edges"),
    ):
        hist = stats.get(key) or {}
        counts = hist.get("counts") or []
        labels = _bin_labels(hist.get(unit) or [], len(counts), svg.format_value)
        if labels and any(counts):
            out.append(
                {
                    "id": chart_id,
                    "title": title,
                    "chart": svg.bar_chart(labels, counts, title=title, colour=2),
                    "table": {"head": ["range", "count"], "rows": [list(p) for p in zip(labels, counts, strict=True)]},
                }
            )

    lengths = stats.get("option_lengths") or {}
    edges = lengths.get("edges_chars") or []
    correct, distractor = lengths.get("correct") or [], lengths.get("distractor") or []
    labels = _bin_labels(edges, len(correct), svg.format_value)
    if labels and len(correct) == len(distractor) and (sum(correct) or sum(distractor)):
        # Shares, not counts: there are three or four distractors per correct option, and the question
        # is whether the correct option's length stands out.
        share_c = _shares(correct)
        share_d = _shares(distractor)
        title = "Option lengths (characters): share of correct options and of distractors, %"
        out.append(
            {
                "id": "option-lengths",
                "title": title,
                "chart": svg.line_chart(labels, [("correct", share_c), ("distractors", share_d)], title=title),
                "table": {
                    "head": ["characters", "correct", "correct %", "distractors", "distractors %"],
                    "rows": [
                        [labels[i], correct[i], share_c[i], distractor[i], share_d[i]] for i in range(len(labels))
                    ],
                },
            }
        )
    return out


def _bin_labels(edges: list, n: int, fmt) -> list[str]:
    """Labels of n bins: `a–b` for [a, b); with as many edges as bins the last bin is open (`≥ a`),
    as the build counts everything from the last edge up there. None when the shapes do not fit."""
    if not n or len(edges) not in (n, n + 1):
        return []
    labels = [f"{fmt(edges[i])}–{fmt(edges[i + 1])}" for i in range(min(n, len(edges) - 1))]
    if len(edges) == n:
        labels.append(f"≥ {fmt(edges[-1])}")
    return labels


def _shares(counts: list) -> list[float]:
    total = sum(counts)
    return [round(100 * c / total, 1) if total else 0.0 for c in counts]


def _numeric_first(label: str):
    try:
        return (0, float(label), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(label))
