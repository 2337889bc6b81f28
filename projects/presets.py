"""Starting settings for each kind of benchmark, as data: what "New project" fills in.

A preset names the project kind, the taxonomies the kind uses (copied from projects.taxonomies; the
others start empty and fall back to the defaults when read), the curation numbers and rules, the
quality gate and the prompt templates its drafts use. Everything stays editable on the settings page.
"""

from dataclasses import dataclass, field

from django.utils.translation import gettext_lazy as _

from . import taxonomies
from .models import ProjectKind

# Item kinds the quality gate can judge (stored in models_per_step["judge_kinds"]).
JUDGE_KINDS = [("qa_chain", _("QA chains")), ("mcq", _("MCQs")), ("chain_pair", _("Chain pairs"))]
JUDGE_KINDS_KEY = "judge_kinds"


@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    kind: str
    description: str
    # Taxonomy keys the kind works with; their defaults are copied into the new project.
    taxonomies: tuple[str, ...]
    # Model fields of Project set by the preset (curation, scenes, drafts, gate).
    fields: dict = field(default_factory=dict)
    judge_kinds: tuple[str, ...] = ()
    # Prompt templates (llm.prompts keys) the kind's drafts and gate use.
    prompts: tuple[str, ...] = ()


_COMMON_TAXONOMIES = ("judge_dimensions", "answer_eval_dimensions", "unusable_reasons")

PRESETS: dict[str, Preset] = {
    p.key: p
    for p in [
        Preset(
            key="svbench",
            label=_("SVBench: streaming QA chains"),
            kind=ProjectKind.SVBENCH,
            description=_("Videos of at least 60 s with 5–15 scenes of 5–30 s on average; chains judged at 90."),
            taxonomies=("skills", "relation_types", *_COMMON_TAXONOMIES),
            fields={
                "min_duration_s": 60.0,
                "min_scenes": 5,
                "max_scenes": 15,
                "min_mean_scene_s": 5.0,
                "max_mean_scene_s": 30.0,
                "min_height_px": 0,
                "curation_rules": ["duration", "scene_count", "mean_scene"],
                "chain_min_turns": 5,
                "chain_max_turns": 6,
                "judge_enabled": True,
                "judge_threshold": 90,
            },
            judge_kinds=("qa_chain",),
            prompts=("qa_chain", "relations", "judge", "text_only_answer"),
        ),
        Preset(
            key="longvideobench",
            label=_("LongVideoBench: referring MCQs"),
            kind=ProjectKind.LONGVIDEOBENCH,
            description=_("Videos of 720p or more, sorted into duration groups; MCQs by question category."),
            taxonomies=("question_categories", "topic_categories", "duration_groups", *_COMMON_TAXONOMIES),
            fields={
                "min_duration_s": 8.0,
                "min_height_px": 720,
                "curation_rules": ["resolution", "duration_group"],
                "judge_enabled": True,
                "judge_threshold": 90,
            },
            judge_kinds=("mcq",),
            prompts=("mcq", "distractors", "judge_mcq"),
        ),
        Preset(
            key="livibench",
            label=_("LiViBench: livestream MCQs"),
            kind=ProjectKind.LIVIBENCH,
            description=_("Livestreams of complexity 3 or more; multi-agent descriptions, seeds, then MCQs."),
            taxonomies=("tasks", "agent_roles", *_COMMON_TAXONOMIES),
            fields={
                "min_complexity": 3,
                "curation_rules": ["complexity"],
                "judge_enabled": True,
                "judge_threshold": 90,
            },
            judge_kinds=("mcq",),
            prompts=("complexity", "description", "seed_questions", "mcq", "distractors", "judge_mcq"),
        ),
        Preset(
            key="mvpbench",
            label=_("MVPBench: multi-video MCQs"),
            kind=ProjectKind.MVPBENCH,
            description=_("MCQs across several videos by subtask; no curation rule, no judge until you set one."),
            taxonomies=("mvp_subtasks", *_COMMON_TAXONOMIES),
            fields={"curation_rules": [], "judge_enabled": False, "judge_threshold": 90},
            judge_kinds=("mcq",),
            prompts=("mcq", "distractors"),
        ),
        Preset(
            key="custom",
            label=_("Custom"),
            kind=ProjectKind.GENERIC,
            description=_("Start from the general defaults and set every number yourself."),
            taxonomies=tuple(taxonomies.default_taxonomies()),
            fields={"curation_rules": [], "judge_enabled": False},
            judge_kinds=(),
            prompts=(),
        ),
    ]
}

PRESET_CHOICES = [(p.key, p.label) for p in PRESETS.values()]


def preset_settings(key: str) -> dict:
    """The Project field values the preset gives (a fresh copy: taxonomies and JSON fields included)."""
    preset = PRESETS[key]
    defaults = taxonomies.default_taxonomies()
    values = {
        "kind": preset.kind,
        "taxonomies": {name: defaults[name] for name in preset.taxonomies},
        **{name: (list(v) if isinstance(v, list) else v) for name, v in preset.fields.items()},
    }
    values["models_per_step"] = {JUDGE_KINDS_KEY: list(preset.judge_kinds)} if preset.judge_kinds else {}
    return values
