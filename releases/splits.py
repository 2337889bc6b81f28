"""Train/eval/test splits by video: seeded, stratified, and never moving a video once it has a split.

Definitions (the manifest and docs/release_formats.md repeat them):

- **Config.** `{"ratios": {split: share}}` or `{"counts": {split: videos}}`, optionally with
  `"stratify": false` (default true). The flat shapes `{"train": 0.8, "test": 0.2}` (ratios) and
  `{"test": 50}` (counts: whole numbers) mean the same. `{}` puts every new video into `test`
  (an evaluation-only release). Splits are `train`, `eval`, `test`.
- **Targets** are for the whole set of videos given (those already split included): ratios are
  turned into whole numbers by largest remainder; counts are exact. What the named splits leave
  over (ratios adding up to less than 1, counts adding up to fewer videos than given) goes to the
  first of train, eval, test that the config does not name; when it names all three, ratios are
  scaled to add up to 1 and left-over videos join `train`. When there are fewer videos than the
  counts ask for, `test` is filled first, then `eval`, then `train`.
- **Kept splits.** A video that already has a split keeps it and counts towards its split's
  target; only videos without one are assigned, and their splits are written to `Video.split`, so
  a later release never moves a video and versions never leak into each other. When kept videos
  already exceed a target, the new videos are shared out in proportion to what the other splits
  still lack.
- **Stratified** by (topic category, duration group): new videos are ordered stratum by stratum
  (strata sorted by name, videos shuffled inside their stratum with the seed) and dealt out by a
  smooth weighted round-robin that hits the split totals exactly; consecutive strata share the
  rounding, so every stratum gets each split's share to within one video.
- **Seeded**: the same videos, config and seed give the same assignment.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable

from django.db import transaction
from django.utils.translation import gettext

from videos.models import Split, Video

SPLITS = ("train", "eval", "test")
# When there are too few videos for the counts asked for, evaluation splits are filled first.
FILL_ORDER = ("test", "eval", "train")
DEFAULT_SPLIT = "test"


class SplitConfigError(ValueError):
    """The split config cannot be used; the message says why, in words for people."""


def split_config_clean(config: dict | None) -> dict:
    """`{"ratios"|"counts": {split: number}, "stratify": bool}` or `{}`; raises SplitConfigError."""
    if not config:
        return {}
    if not isinstance(config, dict):
        raise SplitConfigError('A split config is an object such as {"ratios": {"train": 0.8, "test": 0.2}}.')
    stratify = config.get("stratify", True)
    if not isinstance(stratify, bool):
        raise SplitConfigError("stratify must be true or false.")
    if "ratios" in config or "counts" in config:
        if "ratios" in config and "counts" in config:
            raise SplitConfigError(gettext("Give either ratios or counts, not both."))
        key = "ratios" if "ratios" in config else "counts"
        parts = config[key]
        extra = sorted(set(config) - {key, "stratify"})
    else:
        parts = {k: v for k, v in config.items() if k != "stratify"}
        numbers = list(parts.values())
        whole = bool(numbers) and all(isinstance(v, int) and not isinstance(v, bool) for v in numbers)
        key, extra = ("counts" if whole else "ratios"), []
    if extra:
        raise SplitConfigError(gettext("Unknown split setting %(extra)s.") % {"extra": ", ".join(extra)})
    if not isinstance(parts, dict) or not parts:
        return {} if not parts else _raise(f"{key} must map split names to numbers.")
    unknown = sorted(set(parts) - set(SPLITS))
    if unknown:
        raise SplitConfigError(
            gettext("Unknown split %(unknown)s; splits are %(splits)s.")
            % {"unknown": ", ".join(unknown), "splits": ", ".join(SPLITS)}
        )
    clean: dict[str, float | int] = {}
    for name in SPLITS:
        if name not in parts:
            continue
        value = parts[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SplitConfigError(f"The {name} {key[:-1]} must be a number, not {value!r}.")
        if key == "ratios":
            if not 0 < value <= 1:
                raise SplitConfigError(
                    gettext("The %(name)s ratio must be above 0 and at most 1, not %(value)s.")
                    % {"name": name, "value": value}
                )
            clean[name] = float(value)
        else:
            if value < 0 or value != int(value):
                raise SplitConfigError(
                    gettext("The %(name)s count must be a whole number ≥ 0, not %(value)s.")
                    % {"name": name, "value": value}
                )
            clean[name] = int(value)
    if key == "ratios" and sum(clean.values()) > 1 + 1e-9:
        raise SplitConfigError(
            gettext("The ratios add up to %(total)s; at most 1.") % {"total": f"{sum(clean.values()):g}"}
        )
    return {key: clean, "stratify": stratify}


def _raise(message: str):
    raise SplitConfigError(message)


def duration_group(duration_s: float | None, groups: list[dict]) -> str:
    """The name (as text) of the duration group of `duration_s`: the group whose (low, high] holds it,
    else the smallest group whose upper bound is above it, else the largest; "" when unknown."""
    if duration_s is None or not groups:
        return ""
    ordered = sorted(groups, key=lambda g: g["high"])
    for group in ordered:
        if group["low"] < duration_s <= group["high"]:
            return str(group["name"])
    for group in ordered:
        if duration_s <= group["high"]:
            return str(group["name"])
    return str(ordered[-1]["name"])


def split_targets(config: dict, total: int) -> dict[str, int]:
    """Videos per split for `total` videos (kept ones included), per the module's definitions."""
    config = split_config_clean(config)
    if not config:
        return {DEFAULT_SPLIT: total}
    if "ratios" in config:
        shares = dict(config["ratios"])
        rest = 1.0 - sum(shares.values())
        spare = next((s for s in SPLITS if s not in shares), None)
        if rest > 1e-9:
            if spare is not None:
                shares[spare] = rest
            else:  # pragma: no cover - three ratios above 0 adding to < 1: scale them
                scale = sum(shares.values())
                shares = {k: v / scale for k, v in shares.items()}
        return _apportion(shares, total)
    counts = dict(config["counts"])
    targets = dict.fromkeys(counts, 0)
    left = total
    for name in FILL_ORDER:
        if name in counts:
            targets[name] = min(counts[name], left)
            left -= targets[name]
    if left:
        spare = next((s for s in SPLITS if s not in counts), "train")
        targets[spare] = targets.get(spare, 0) + left
    return {s: targets[s] for s in SPLITS if s in targets}


def _apportion(weights: dict[str, float], total: int) -> dict[str, int]:
    """Whole numbers adding up to `total` in proportion to `weights` (largest remainder; ties by split order)."""
    weight_sum = sum(weights.values())
    if total <= 0 or weight_sum <= 0:
        return dict.fromkeys(weights, 0)
    exact = {name: total * w / weight_sum for name, w in weights.items()}
    result = {name: math.floor(x) for name, x in exact.items()}
    # Remainders rounded, so 28 × 0.7 and 28 × 0.2 tie as the arithmetic says they do.
    order = sorted(weights, key=lambda n: (-round(exact[n] - result[n], 9), SPLITS.index(n)))
    for name in order[: total - sum(result.values())]:
        result[name] += 1
    return result


def _deal(targets: dict[str, int], n: int) -> list[str]:
    """A sequence of `n` split names holding exactly `targets[s]` of each, spread evenly (smooth
    weighted round-robin: each step, every split gains its share and the one furthest ahead is dealt)."""
    names = [s for s in SPLITS if targets.get(s)]
    credit = dict.fromkeys(names, 0)
    out = []
    for _ in range(n):
        for name in names:
            credit[name] += targets[name]
        pick = max(names, key=lambda s: (credit[s], -SPLITS.index(s)))
        credit[pick] -= n
        out.append(pick)
    return out


def _seed_rng(seed: int) -> random.Random:
    return random.Random(f"vidqa-splits:{seed}")  # noqa: S311 - reproducible shuffles, not secrets


def splits_assign(*, project, videos: Iterable[Video], config: dict, seed: int, save: bool = True) -> dict[int, str]:
    """Split of every given video, by id: kept splits as they are, new ones assigned and saved.

    `save=False` only computes them: a release build saves them (`splits_save`) once the release is
    ready, so a failed build never ties a video to a split nobody published.
    """
    config = split_config_clean(config)
    stratify = config.get("stratify", True) if config else True
    groups = project.taxonomy("duration_groups")
    rows = sorted(
        ((v.pk, v.name, v.split or "", v.topic_category or "", duration_group(v.duration_s, groups)) for v in videos),
        key=lambda r: (r[1], r[0]),
    )
    result = {pk: split for pk, _, split, _, _ in rows if split}
    new = [r for r in rows if not r[2]]
    if not new:
        return result
    targets = split_targets(config, len(rows))
    kept = defaultdict(int)
    for split in result.values():
        kept[split] += 1
    lacking = {s: max(0, t - kept[s]) for s, t in targets.items()}
    if sum(lacking.values()) == 0:
        # Every target is met by kept videos: share the new ones as the targets themselves are shared.
        lacking = dict(targets)
    new_targets = _apportion(lacking, len(new))

    rng = _seed_rng(seed)
    strata: dict[tuple, list] = defaultdict(list)
    for row in new:
        strata[(row[3], row[4]) if stratify else ()].append(row)
    ordered = []
    for key in sorted(strata):
        members = strata[key]  # already in name order, so the shuffle depends only on the seed
        rng.shuffle(members)
        ordered.extend(members)
    assigned = dict(zip((r[0] for r in ordered), _deal(new_targets, len(ordered)), strict=True))
    if not save:
        result.update(assigned)
        return result
    splits_save(project=project, splits=assigned)
    fresh = dict(Video.objects.filter(pk__in=list(assigned)).values_list("pk", "split"))
    result.update(fresh)
    return result


def splits_save(*, project, splits: dict[int, str]) -> list[int]:
    """Give videos without a split the one computed for them; returns the ids another release got to first."""
    with transaction.atomic():
        by_split = defaultdict(list)
        for pk, split in splits.items():
            by_split[split].append(pk)
        for split, pks in sorted(by_split.items()):
            # Only videos still without a split: a concurrent release that got there first wins.
            Video.objects.filter(project=project, pk__in=pks, split=Split.UNASSIGNED).update(split=split)
        saved = dict(Video.objects.filter(pk__in=list(splits)).values_list("pk", "split"))
    return sorted(pk for pk, split in splits.items() if saved.get(pk) != split)
