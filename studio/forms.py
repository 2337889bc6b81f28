from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from projects.models import Project

SETTINGS_GROUPS = [
    (
        gettext_lazy("Curation"),
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
    (gettext_lazy("Scenes and clips"), ["scene_threshold", "scene_min_s", "clip_pad_s"]),
    (
        gettext_lazy("Machine drafts"),
        ["frames_per_clip", "frame_max_side_px", "chain_min_turns", "chain_max_turns", "models_per_step"],
    ),
    (gettext_lazy("Quality gate and releases"), ["judge_enabled", "judge_threshold", "path_jump_probability"]),
]


class ProjectSettingsForm(forms.ModelForm):
    """The numbers a project admin tunes; the model's check constraints back every rule here."""

    class Meta:
        model = Project
        fields = ["name", "description", "primary_language"] + [f for _, group in SETTINGS_GROUPS for f in group]
        # Every label here, so each is translatable (the model's field names are not).
        labels = {
            "name": gettext_lazy("Name"),
            "description": gettext_lazy("Description"),
            "primary_language": gettext_lazy("Primary language"),
            "curation_rules": gettext_lazy("Curation rules"),
            "min_duration_s": gettext_lazy("Shortest video (s)"),
            "min_scenes": gettext_lazy("Fewest scenes"),
            "max_scenes": gettext_lazy("Most scenes"),
            "min_mean_scene_s": gettext_lazy("Shortest mean scene (s)"),
            "max_mean_scene_s": gettext_lazy("Longest mean scene (s)"),
            "min_height_px": gettext_lazy("Lowest height (px)"),
            "min_complexity": gettext_lazy("Lowest complexity"),
            "external_score_thresholds": gettext_lazy("External score thresholds"),
            "scene_threshold": gettext_lazy("Scene threshold"),
            "scene_min_s": gettext_lazy("Shortest scene (s)"),
            "clip_pad_s": gettext_lazy("Clip padding (s)"),
            "frames_per_clip": gettext_lazy("Frames per clip"),
            "frame_max_side_px": gettext_lazy("Frame's longest side (px)"),
            "chain_min_turns": gettext_lazy("Fewest turns per chain"),
            "chain_max_turns": gettext_lazy("Most turns per chain"),
            "models_per_step": gettext_lazy("Models per step"),
            "judge_enabled": gettext_lazy("Judge enabled"),
            "judge_threshold": gettext_lazy("Judge threshold"),
            "path_jump_probability": gettext_lazy("Path jump probability"),
        }
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {
            "min_height_px": gettext_lazy("LongVideoBench: 720"),
            "scene_threshold": gettext_lazy("PySceneDetect ContentDetector threshold"),
            "scene_min_s": gettext_lazy("Scenes shorter than this merge into a neighbour"),
            "clip_pad_s": gettext_lazy("Padding added at both ends of every clip"),
            "curation_rules": gettext_lazy(
                'Rule codes, e.g. ["duration", "scene_count"]; [] means the defaults of the kind.'
            ),
            "external_score_thresholds": gettext_lazy('e.g. {"aesthetic": {"min": 4.5}, "flow": {"max": 30}}'),
            "models_per_step": gettext_lazy(
                'e.g. {"qa_chain": "gpt-4o", "judge": "gpt-4o"}; empty uses the deployment defaults.'
            ),
        }

    def clean_curation_rules(self):
        from videos.curation import RULES

        rules = self.cleaned_data["curation_rules"]
        if not isinstance(rules, list) or any(r not in RULES for r in rules):
            raise forms.ValidationError(_("A list of rule codes from: %(codes)s.") % {"codes": ", ".join(RULES)})
        return rules

    def clean_external_score_thresholds(self):
        value = self.cleaned_data["external_score_thresholds"]
        ok = isinstance(value, dict) and all(
            isinstance(b, dict) and set(b) <= {"min", "max"} and all(isinstance(x, int | float) for x in b.values())
            for b in value.values()
        )
        if not ok:
            raise forms.ValidationError(_('An object of score name → {"min": number, "max": number}.'))
        return value

    def clean_models_per_step(self):
        value = self.cleaned_data["models_per_step"]
        if not isinstance(value, dict):
            raise forms.ValidationError(_("An object of step → model name (or a list of names for descriptions)."))
        return value

    def groups(self):
        return [(title, [self[name] for name in names]) for title, names in SETTINGS_GROUPS]
