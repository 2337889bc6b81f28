"""Splits by video: targets, stratification, seeds, kept splits, persistence."""

from collections import Counter

import pytest

from releases.splits import SplitConfigError, duration_group, split_config_clean, split_targets, splits_assign
from tests.factories import VideoFactory
from videos.models import Video

pytestmark = pytest.mark.django_db


def _videos(project, n_per_stratum=10):
    # Two topics × two duration groups (60: (15, 60], 600: (180, 600]).
    videos = []
    for topic in ("LC", "LV"):
        for duration in (30.0, 300.0):
            for i in range(n_per_stratum):
                videos.append(
                    VideoFactory(
                        project=project,
                        name=f"{topic}_{int(duration)}_{i:02d}",
                        topic_category=topic,
                        duration_s=duration,
                    )
                )
    return videos


def test_ratios_split_every_stratum_in_proportion(project):
    videos = _videos(project)
    result = splits_assign(project=project, videos=videos, config={"ratios": {"train": 0.5, "test": 0.5}}, seed=1)
    assert set(result) == {v.pk for v in videos}  # every video, each in exactly one split
    assert Counter(result.values()) == {"train": 20, "test": 20}
    for topic in ("LC", "LV"):
        for duration in (30.0, 300.0):
            stratum = [result[v.pk] for v in videos if v.topic_category == topic and v.duration_s == duration]
            assert Counter(stratum) == {"train": 5, "test": 5}


def test_uneven_ratios_stay_within_one_video_per_stratum(project):
    videos = _videos(project, n_per_stratum=7)
    result = splits_assign(project=project, videos=videos, config={"train": 0.7, "eval": 0.1, "test": 0.2}, seed=3)
    totals = Counter(result.values())
    assert totals == {"train": 20, "eval": 3, "test": 5}  # 28 videos: 19.6, 2.8, 5.6 by largest remainder
    for topic in ("LC", "LV"):
        for duration in (30.0, 300.0):
            stratum = Counter(result[v.pk] for v in videos if v.topic_category == topic and v.duration_s == duration)
            for split, share in (("train", 0.7), ("eval", 0.1), ("test", 0.2)):
                assert abs(stratum[split] - 7 * share) < 1 + 1e-9


def test_counts_are_exact_and_the_rest_goes_to_the_first_unnamed_split(project):
    videos = _videos(project, n_per_stratum=3)
    result = splits_assign(project=project, videos=videos, config={"test": 5}, seed=1)
    assert Counter(result.values()) == {"test": 5, "train": 7}
    assert split_targets({"counts": {"test": 5, "train": 3}}, 12) == {"train": 3, "eval": 4, "test": 5}


def test_too_few_videos_fill_test_first(project):
    assert split_targets({"counts": {"train": 10, "test": 10}}, 12) == {"train": 2, "test": 10}


def test_empty_config_puts_new_videos_into_test(project):
    videos = _videos(project, n_per_stratum=1)
    assert set(splits_assign(project=project, videos=videos, config={}, seed=1).values()) == {"test"}


def test_same_seed_same_split_and_the_seed_matters(project):
    videos = _videos(project)
    config = {"ratios": {"train": 0.5, "test": 0.5}}
    first = splits_assign(project=project, videos=videos, config=config, seed=11)
    Video.objects.filter(project=project).update(split="")
    for v in videos:
        v.split = ""
    assert splits_assign(project=project, videos=videos, config=config, seed=11) == first
    differs = False
    for seed in range(12, 20):
        Video.objects.filter(project=project).update(split="")
        for v in videos:
            v.split = ""
        differs |= splits_assign(project=project, videos=videos, config=config, seed=seed) != first
    assert differs


def test_kept_splits_stay_count_towards_targets_and_new_ones_are_saved(project):
    videos = _videos(project, n_per_stratum=5)  # 20 videos
    for v in videos[:8]:
        v.split = "test"
        v.save(update_fields=["split"])
    result = splits_assign(project=project, videos=videos, config={"ratios": {"train": 0.5, "test": 0.5}}, seed=1)
    assert all(result[v.pk] == "test" for v in videos[:8])
    assert Counter(result.values()) == {"train": 10, "test": 10}
    assert dict(Video.objects.filter(project=project).values_list("pk", "split")) == result
    # A second call with another config and seed moves nothing.
    refreshed = list(Video.objects.filter(project=project))
    assert splits_assign(project=project, videos=refreshed, config={"counts": {"eval": 20}}, seed=99) == result


def test_new_videos_go_where_the_targets_still_lack(project):
    videos = _videos(project, n_per_stratum=5)
    for v in videos[:12]:
        v.split = "test"  # already over the 10 a 50/50 split would give test
        v.save(update_fields=["split"])
    result = splits_assign(project=project, videos=videos, config={"ratios": {"train": 0.5, "test": 0.5}}, seed=1)
    assert Counter(result[v.pk] for v in videos[12:]) == {"train": 8}


def test_stratify_false_ignores_strata(project):
    videos = _videos(project, n_per_stratum=5)
    config = {"ratios": {"train": 0.5, "test": 0.5}, "stratify": False}
    assert Counter(splits_assign(project=project, videos=videos, config=config, seed=1).values()) == {
        "train": 10,
        "test": 10,
    }


@pytest.mark.parametrize(
    "config",
    [
        {"ratios": {"train": 0.8, "test": 0.3}},
        {"ratios": {"holdout": 0.2}},
        {"counts": {"test": -1}},
        {"counts": {"test": 2.5}},
        {"ratios": {"test": 0.2}, "counts": {"test": 1}},
        {"ratios": {"test": 0.2}, "stratify": "yes"},
    ],
)
def test_bad_configs_are_refused_with_a_reason(config):
    with pytest.raises(SplitConfigError):
        split_config_clean(config)


def test_flat_and_nested_configs_mean_the_same():
    assert split_config_clean({"train": 0.8, "test": 0.2}) == split_config_clean(
        {"ratios": {"train": 0.8, "test": 0.2}}
    )
    assert split_config_clean({"test": 50}) == {"counts": {"test": 50}, "stratify": True}


def test_duration_group_of_a_video():
    groups = [
        {"name": 15, "low": 8, "high": 15},
        {"name": 60, "low": 15, "high": 60},
        {"name": 600, "low": 180, "high": 600},
        {"name": 3600, "low": 900, "high": 3600},
    ]
    assert duration_group(15.0, groups) == "15"
    assert duration_group(15.01, groups) == "60"
    assert duration_group(120.0, groups) == "600"  # between groups: the next one up
    assert duration_group(5000.0, groups) == "3600"
    assert duration_group(None, groups) == ""
