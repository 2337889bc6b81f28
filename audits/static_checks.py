"""Project-wide static checks of MCQs: every item's own rules, plus what only the whole project shows.

The per-item rules are annotator/mcq_checks.py's, the same the editor applies (duplicate options, a
key outside the options, the correct option the longest, answer words leaked into the question,
moments outside their video …). On top of them, over all the items at once:

- **near-duplicate questions**, within a video and across the project: character 3-gram sets
  compared by Jaccard similarity, with prefix filtering so that only pairs that can reach the
  threshold are ever compared (no n² comparison; works for text without spaces, e.g. Chinese);
- **answer-position balance**: how often the key sits in each position, against uniform, per
  category and overall (chi-square; a small p means test takers can guess by position);
- **videos a benchmark's loader cannot use**: a LongVideoBench record whose video lasts under 1 s
  gives the official loader no frame.

Nothing here writes: the result is plain data for the audit page, the API and the release gate.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Prefetch
from django.utils.translation import gettext as _

from annotator import mcq_checks
from annotator.mcqs import draft_from_state, mcq_rules, mcq_state
from annotator.models import MCQ, MCQVideo, ReferredMoment, VideoRole
from estimates.proportions import chi_square_uniform

BLOCKER = "blocker"
WARNING = "warning"

# Two questions whose character 3-gram sets overlap this much (Jaccard) ask the same thing.
NEAR_DUPLICATE_QUESTION = 0.8
SHINGLE = 3
# The official LongVideoBench loader samples no frame from a shorter video.
LVB_MIN_DURATION_S = 1.0
# Position balance is judged only with enough items per cell, and flagged below this p.
POSITION_MIN_EXPECTED = 5
POSITION_ALPHA = 0.01


@dataclass(frozen=True)
class ItemFinding:
    code: str
    severity: str  # BLOCKER | WARNING
    message: str
    field: str  # question, options, correct_index, moments, videos, category


@dataclass(frozen=True)
class PositionBalance:
    """Where the key sits, for one category (or "" for all) among items with `options` options."""

    category: str
    options: int
    counts: tuple[int, ...]
    statistic: float
    dof: int
    p_value: float
    judged: bool  # enough items for the test to say something
    biased: bool


@dataclass
class StaticAudit:
    items: dict[int, list[ItemFinding]] = field(default_factory=dict)  # MCQ id → findings (only flagged)
    checked: int = 0
    positions: list[PositionBalance] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(f.code for findings in self.items.values() for f in findings))

    @property
    def blocked(self) -> list[int]:
        return sorted(i for i, findings in self.items.items() if any(f.severity == BLOCKER for f in findings))

    @property
    def position_biases(self) -> list[PositionBalance]:
        return [p for p in self.positions if p.biased]


# Which field each per-item rule is about, for the editor link and the table.
_FIELDS = {
    "question_empty": "question",
    "too_few_options": "options",
    "too_many_options": "options",
    "empty_option": "options",
    "duplicate_options": "options",
    "near_duplicate_options": "options",
    "no_correct": "correct_index",
    "correct_out_of_range": "correct_index",
    "correct_longest": "options",
    "answer_leaked": "question",
    "no_category": "category",
    "referring_missing": "question",
    "referring_outside": "question",
    "no_moment": "moments",
    "moment_foreign_video": "moments",
    "moment_outside_video": "moments",
    "video_unusable": "videos",
}


def project_static_audit(*, project, mcq_ids: Iterable[int] | None = None, blockers_only: bool = False) -> StaticAudit:
    """The static findings of the project's MCQs (or of `mcq_ids` among them). Three queries.

    `blockers_only` (the release gate's question) skips the warnings, the near-duplicate search and
    the position tables: on thousands of templated questions those take most of the time.
    """
    items = MCQ.objects.filter(project=project).order_by("pk")
    if mcq_ids is not None:
        items = items.filter(pk__in=list(mcq_ids))
    items = items.prefetch_related(
        Prefetch("mcq_videos", queryset=MCQVideo.objects.select_related("video").order_by("order")),
        Prefetch("moments", queryset=ReferredMoment.objects.order_by("order", "time_s", "pk")),
    )
    audit = StaticAudit()
    found: dict[int, list[ItemFinding]] = defaultdict(list)
    questions: dict[int, str] = {}
    tally: dict[tuple[str, int], list[int]] = {}  # (category or "", option count) → keys per position
    video_of: dict[int, int | None] = {}
    for mcq in items:
        mcq.project = project
        links = list(mcq.mcq_videos.all())
        state = mcq_state(mcq=mcq, links=links, moments=list(mcq.moments.all()))
        multi = any(link.role in (VideoRole.REFERENCE, VideoRole.CANDIDATE) for link in links)
        rules = mcq_rules(project=project, multi_video=multi)
        draft = draft_from_state(state)
        for finding in mcq_checks.mcq_blockers(draft, rules):
            found[mcq.pk].append(_item(finding, BLOCKER))
        found[mcq.pk] += _too_short(project, links)
        audit.checked += 1
        if blockers_only:
            continue
        for finding in mcq_checks.mcq_warnings(draft, rules):
            found[mcq.pk].append(_item(finding, WARNING))
        questions[mcq.pk] = mcq.question
        video_of[mcq.pk] = links[0].video_id if links else None
        _count_position(tally, mcq)
    pairs = [] if blockers_only else near_duplicate_pairs(questions, threshold=NEAR_DUPLICATE_QUESTION)
    for a, b, score in pairs:
        same_video = video_of[a] is not None and video_of[a] == video_of[b]
        for one, other in ((a, b), (b, a)):
            message = (
                _("The question is nearly the same as MCQ %(other)s on the same video (%(percent)s%% alike).")
                if same_video
                else _("The question is nearly the same as MCQ %(other)s in this project (%(percent)s%% alike).")
            ) % {"other": other, "percent": math.floor(score * 100)}
            found[one].append(ItemFinding("near_duplicate_question", WARNING, message, "question"))
    audit.items = {pk: findings for pk, findings in sorted(found.items()) if findings}
    audit.positions = [] if blockers_only else _position_tables(tally)
    return audit


def _item(finding: mcq_checks.Finding, severity: str) -> ItemFinding:
    return ItemFinding(finding.code, severity, finding.message, _FIELDS.get(finding.code, ""))


def _too_short(project, links) -> list[ItemFinding]:
    if project.kind != "longvideobench":
        return []
    out = []
    for link in links:
        duration = link.video.duration_s
        if duration is not None and duration < LVB_MIN_DURATION_S:
            out.append(
                ItemFinding(
                    "video_too_short",
                    BLOCKER,
                    _(
                        "Video %(name)s lasts %(seconds)s s: the LongVideoBench loader takes no frame from a video "
                        "shorter than 1 s."
                    )
                    % {"name": link.video.name, "seconds": f"{duration:g}"},
                    "videos",
                )
            )
    return out


# --- answer positions ------------------------------------------------------------------------------


def _count_position(tally: dict[tuple[str, int], list[int]], mcq: MCQ) -> None:
    options = len(mcq.options or [])
    key = mcq.correct_index
    if options < 2 or key is None or not 0 <= key < options:
        return
    for category in {"", mcq.category}:
        tally.setdefault((category, options), [0] * options)[key] += 1


def _position_tables(tally: dict[tuple[str, int], list[int]]) -> list[PositionBalance]:
    tables = []
    for (category, options), counts in sorted(tally.items()):
        statistic, dof, p_value = chi_square_uniform(counts)
        judged = sum(counts) / options >= POSITION_MIN_EXPECTED
        tables.append(
            PositionBalance(
                category=category,
                options=options,
                counts=tuple(counts),
                statistic=statistic,
                dof=dof,
                p_value=p_value,
                judged=judged,
                biased=judged and p_value < POSITION_ALPHA,
            )
        )
    return tables


# --- near-duplicate questions ------------------------------------------------------------------------


def shingles(text: str, size: int = SHINGLE) -> frozenset[str]:
    """Character n-grams of the normalised text (spaces kept as one), so word order and CJK both count."""
    normal = mcq_checks.normalise(text)
    if len(normal) <= size:
        return frozenset([normal]) if normal else frozenset()
    return frozenset(normal[i : i + size] for i in range(len(normal) - size + 1))


def near_duplicate_pairs(texts: dict[int, str], *, threshold: float) -> list[tuple[int, int, float]]:
    """Pairs (a < b) whose shingle sets have Jaccard similarity ≥ threshold, with it.

    Prefix filtering: with each set's shingles in one global order (rarest first), two sets that
    reach the threshold must share one of the first |s| − ⌈t·|s|⌉ + 1 shingles of each, so only
    pairs meeting in those prefixes are compared.
    """
    sets = {key: shingles(text) for key, text in texts.items()}
    sets = {key: s for key, s in sets.items() if s}
    frequency = Counter(g for s in sets.values() for g in s)
    index: dict[str, list[int]] = defaultdict(list)
    candidates: set[tuple[int, int]] = set()
    for key in sorted(sets, key=lambda k: len(sets[k])):
        ordered = sorted(sets[key], key=lambda g: (frequency[g], g))
        prefix = len(ordered) - math.ceil(threshold * len(ordered)) + 1
        for gram in ordered[:prefix]:
            for other in index[gram]:
                candidates.add((min(key, other), max(key, other)))
            index[gram].append(key)
    out = []
    for a, b in sorted(candidates):
        sa, sb = sets[a], sets[b]
        if min(len(sa), len(sb)) < threshold * max(len(sa), len(sb)):
            continue
        score = len(sa & sb) / len(sa | sb)
        if score >= threshold:
            out.append((a, b, score))
    return out
