from django import forms

from projects.models import Project

SETTINGS_GROUPS = [
    (
        "Curation",
        [
            "curation_rules",
            "min_duration_s",
            "min_scenes",
            "max_scenes",
            "min_mean_scene_s",
            "max_mean_scene_s",
            "min_height_px",
            "min_complexity",
            "external_score_thresholds",
        ],
    ),
    ("Scenes and clips", ["scene_threshold", "scene_min_s", "clip_pad_s"]),
    (
        "Machine drafts",
        ["frames_per_clip", "frame_max_side_px", "chain_min_turns", "chain_max_turns", "models_per_step"],
    ),
    ("Quality gate and releases", ["judge_enabled", "judge_threshold", "path_jump_probability"]),
]


class ProjectSettingsForm(forms.ModelForm):
    """The numbers a project admin tunes; the model's check constraints back every rule here."""

    class Meta:
        model = Project
        fields = ["name", "description", "primary_language"] + [f for _, group in SETTINGS_GROUPS for f in group]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {
            "curation_rules": 'Rule codes, e.g. ["duration", "scene_count"]; [] means the defaults of the kind.',
            "external_score_thresholds": 'e.g. {"aesthetic": {"min": 4.5}, "flow": {"max": 30}}',
            "models_per_step": 'e.g. {"qa_chain": "gpt-4o", "judge": "gpt-4o"}; empty uses the deployment defaults.',
        }

    def clean_curation_rules(self):
        from videos.curation import RULES

        rules = self.cleaned_data["curation_rules"]
        if not isinstance(rules, list) or any(r not in RULES for r in rules):
            raise forms.ValidationError(f"A list of rule codes from: {', '.join(RULES)}.")
        return rules

    def clean_external_score_thresholds(self):
        value = self.cleaned_data["external_score_thresholds"]
        ok = isinstance(value, dict) and all(
            isinstance(b, dict) and set(b) <= {"min", "max"} and all(isinstance(x, int | float) for x in b.values())
            for b in value.values()
        )
        if not ok:
            raise forms.ValidationError('An object of score name → {"min": number, "max": number}.')
        return value

    def clean_models_per_step(self):
        value = self.cleaned_data["models_per_step"]
        if not isinstance(value, dict):
            raise forms.ValidationError("An object of step → model name (or a list of names for descriptions).")
        return value

    def groups(self):
        return [(title, [self[name] for name in names]) for title, names in SETTINGS_GROUPS]
