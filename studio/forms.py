from django import forms
from django.utils.translation import gettext_lazy as _

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
            "models_per_step": 'e.g. {"qa_chain": "gpt-4o"}; empty uses the models of the project\'s model endpoint.',
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


class ModelEndpointForm(forms.Form):
    """A project's model endpoint. The key is write-only: the form never holds the stored one."""

    base_url = forms.URLField(
        label=_("Base URL"),
        required=False,
        max_length=300,
        assume_scheme="https",
        help_text=_("Any OpenAI-compatible endpoint. Empty: the deployment's endpoint, with its key."),
    )
    new_key = forms.CharField(
        label=_("New API key"),
        required=False,
        max_length=500,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=_("Leave empty to keep the key that is set."),
    )
    clear_key = forms.BooleanField(label=_("Remove the stored key"), required=False)

    def __init__(self, *args, endpoint=None, **kwargs):
        from llm.endpoints import environment_model
        from llm.models import ModelUse

        initial = kwargs.setdefault("initial", {})
        if endpoint is not None:
            initial.setdefault("base_url", endpoint.base_url)
        super().__init__(*args, **kwargs)
        self.uses = []
        prices = (endpoint.prices or {}) if endpoint is not None else {}
        for use, label in ModelUse.choices:
            default = environment_model(use)
            model = endpoint.model_for(use) if endpoint is not None else ""
            price = prices.get(model or default) or ["", ""]
            self.fields[f"{use}_model"] = forms.CharField(
                label=_("%(use)s model") % {"use": label},
                required=False,
                max_length=120,
                initial=model,
                widget=forms.TextInput(attrs={"placeholder": default}),
            )
            for i, side in enumerate(("input", "output")):
                self.fields[f"{use}_{side}_price"] = forms.DecimalField(
                    label=_("Input $ per 1M tokens") if side == "input" else _("Output $ per 1M tokens"),
                    required=False,
                    min_value=0,
                    max_digits=10,
                    decimal_places=4,
                    initial=price[i],
                )
            self.uses.append((use, label, default))

    def clean(self):
        data = super().clean()
        if data.get("new_key") and data.get("clear_key"):
            self.add_error("clear_key", _("Either set a new key or remove the stored one, not both."))
        return data

    def rows(self):
        """(label, model field, input price field, output price field, environment default) per use."""
        return [
            (label, self[f"{use}_model"], self[f"{use}_input_price"], self[f"{use}_output_price"], default)
            for use, label, default in self.uses
        ]

    def models(self) -> dict[str, str]:
        return {use: self.cleaned_data.get(f"{use}_model") or "" for use, _label, _default in self.uses}

    def prices(self) -> dict[str, list[float]]:
        """model name → [input, output] for every use with both prices given (the default model when blank)."""
        out = {}
        for use, _label, default in self.uses:
            low, high = self.cleaned_data.get(f"{use}_input_price"), self.cleaned_data.get(f"{use}_output_price")
            if low is not None and high is not None:
                out[self.cleaned_data.get(f"{use}_model") or default] = [float(low), float(high)]
        return out
