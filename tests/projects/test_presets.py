import pytest

from projects.models import ProjectKind
from projects.presets import PRESETS, preset_settings
from projects.taxonomies import LVB_DURATION_GROUPS, SVBENCH_SKILLS


def test_every_kind_has_a_preset():
    assert {p.kind for p in PRESETS.values()} == set(ProjectKind.values)


def test_svbench_fills_its_curation_numbers_and_taxonomies():
    values = preset_settings("svbench")
    assert values["kind"] == ProjectKind.SVBENCH
    assert (values["min_duration_s"], values["min_scenes"], values["max_scenes"]) == (60.0, 5, 15)
    assert (values["min_mean_scene_s"], values["max_mean_scene_s"]) == (5.0, 30.0)
    assert values["taxonomies"]["skills"] == SVBENCH_SKILLS
    assert "question_categories" not in values["taxonomies"]
    assert values["models_per_step"] == {"judge_kinds": ["qa_chain"]}
    assert values["judge_enabled"] and values["judge_threshold"] == 90


def test_longvideobench_needs_720p_and_keeps_duration_groups():
    values = preset_settings("longvideobench")
    assert values["min_height_px"] == 720
    assert values["curation_rules"] == ["resolution", "duration_group"]
    assert values["taxonomies"]["duration_groups"] == LVB_DURATION_GROUPS
    assert values["models_per_step"]["judge_kinds"] == ["mcq"]


def test_livibench_complexity_three():
    values = preset_settings("livibench")
    assert values["min_complexity"] == 3 and values["curation_rules"] == ["complexity"]
    assert values["taxonomies"]["tasks"] and values["taxonomies"]["agent_roles"]


@pytest.mark.parametrize("key", list(PRESETS))
def test_each_call_gives_fresh_copies(key):
    first, second = preset_settings(key), preset_settings(key)
    for name, rows in first["taxonomies"].items():
        if rows and isinstance(rows[0], dict):
            rows[0]["changed"] = True
            assert "changed" not in second["taxonomies"][name][0]
