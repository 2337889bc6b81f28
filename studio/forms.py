import json

from django import forms
from django.utils.translation import gettext_lazy
from django.utils.translation import gettext_lazy as _

from projects.models import Project
from projects.presets import JUDGE_KINDS, JUDGE_KINDS_KEY, PRESET_CHOICES
from projects.taxonomies import EDITABLE_TAXONOMIES

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
    (
        gettext_lazy("Quality gate and releases"),
        ["judge_enabled", "judge_threshold", "judge_fallback", "judge_kinds", "path_jump_probability"],
    ),
    (
        gettext_lazy("Benchmark audit"),
        ["audit_gate", "audit_gate_margin", "probe_shuffles", "probe_frames", "probe_models"],
    ),
]
# Settings fields that are not model fields (judge_kinds lives in models_per_step).
_FORM_ONLY = {"judge_kinds"}


class ProjectSettingsForm(forms.ModelForm):
    """The numbers a project admin tunes; the model's check constraints back every rule here."""

    class Meta:
        model = Project
        fields = ["name", "description", "primary_language"] + [
            f for _title, group in SETTINGS_GROUPS for f in group if f not in _FORM_ONLY
        ]
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
            "audit_gate": gettext_lazy("Release gate"),
            "audit_gate_margin": gettext_lazy("Blind accuracy margin (points over chance)"),
            "probe_shuffles": gettext_lazy("Option orders per text-only probe"),
            "probe_frames": gettext_lazy("Frames where an item has no moment"),
            "probe_models": gettext_lazy("Probe models"),
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
                'e.g. {"qa_chain": "gpt-4o"}; empty uses the models of the project\'s model endpoint.'
            ),
            "audit_gate": gettext_lazy(
                "A release fails the gate with an MCQ that has a blocker, or when its text-only accuracy is over "
                "chance by more than the margin."
            ),
            "probe_models": gettext_lazy(
                'e.g. ["gpt-4o-mini", "qwen2-vl"]; [] uses the model endpoint\'s probes model.'
            ),
        }

    judge_kinds = forms.MultipleChoiceField(
        label=_("Judged item kinds"),
        choices=JUDGE_KINDS,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Which items the judge scores before examination, when the gate is on."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        raw = (self.instance.models_per_step or {}).get(JUDGE_KINDS_KEY)
        self.fields["judge_kinds"].initial = raw if isinstance(raw, list) else ["qa_chain"]

    def settings_values(self) -> dict:
        """The cleaned values as Project fields (judge kinds folded into models_per_step)."""
        values = {name: self.cleaned_data[name] for name in self._meta.fields}
        values["models_per_step"] = {**values["models_per_step"], JUDGE_KINDS_KEY: self.cleaned_data["judge_kinds"]}
        return values

    def clean_probe_models(self):
        value = self.cleaned_data["probe_models"]
        if value in (None, ""):
            return []
        if not isinstance(value, list) or not all(isinstance(m, str) and m.strip() for m in value):
            raise forms.ValidationError(_('A list of model names, e.g. ["gpt-4o-mini"]; [] for the endpoint\'s.'))
        return [m.strip() for m in value]

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

    def project_fields(self):
        return [self[name] for name in ("name", "description", "primary_language")]

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


class NewProjectForm(forms.Form):
    """Name the project and choose where its settings come from: a preset, or a project you administer."""

    name = forms.CharField(label=_("Name"), max_length=200)
    slug = forms.SlugField(
        label=_("Short name in addresses"),
        max_length=80,
        required=False,
        help_text=_("Letters, digits and hyphens; left empty, it is made from the name."),
    )
    preset = forms.ChoiceField(label=_("Benchmark kind"), choices=PRESET_CHOICES, initial="svbench")
    copy_from = forms.ModelChoiceField(
        label=_("Copy settings from"),
        queryset=Project.objects.none(),
        required=False,
        empty_label=_("(none: use the preset)"),
        help_text=_(
            "Taxonomies, curation, scenes, drafts and gate of a project you administer, instead of the preset."
        ),
    )
    description = forms.CharField(label=_("Description"), required=False, widget=forms.Textarea(attrs={"rows": 2}))
    primary_language = forms.CharField(label=_("Primary language"), max_length=10, initial="en")

    def __init__(self, *args, copy_sources=None, **kwargs):
        super().__init__(*args, **kwargs)
        if copy_sources is not None:
            self.fields["copy_from"].queryset = copy_sources
        if not self.fields["copy_from"].queryset.exists():
            del self.fields["copy_from"]


class TaxonomyRowForm(forms.Form):
    code = forms.CharField(label=_("Code"), max_length=100, required=False)
    label = forms.CharField(label=_("Label"), max_length=500, required=False)
    # The row's other fields (a guideline, a level), kept as they were.
    extra = forms.CharField(label=_("Other fields"), widget=forms.HiddenInput, required=False)

    def clean_extra(self):
        raw = self.cleaned_data["extra"] or "{}"
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise forms.ValidationError(_("This row was changed outside the form; reload the page."))
        return value


class BaseTaxonomyFormSet(forms.BaseFormSet):
    """Rows of one taxonomy: codes unique and non-empty, labels non-empty; empty new rows are skipped."""

    def kept_forms(self):
        return [
            f
            for f in self.forms
            if f.cleaned_data and not f.cleaned_data.get("DELETE") and (f.has_changed() or f not in self.extra_forms)
        ]

    def clean(self):
        if any(self.errors):
            return
        seen = set()
        for form in self.kept_forms():
            code = form.cleaned_data.get("code", "").strip()
            label = form.cleaned_data.get("label", "").strip()
            if not code:
                form.add_error("code", _("Every row needs a code."))
            elif code in seen:
                form.add_error("code", _("The code %(code)s is used twice.") % {"code": code})
            seen.add(code)
            if not label:
                form.add_error("label", _("Every row needs a label."))
        if any(self.errors):
            raise forms.ValidationError(_("Fix the marked rows of this taxonomy."))

    def rows(self, key: str) -> list:
        code_field, label_field = EDITABLE_TAXONOMIES[key]
        return [
            {
                **f.cleaned_data["extra"],
                code_field: f.cleaned_data["code"].strip(),
                label_field: f.cleaned_data["label"].strip(),
            }
            for f in self.kept_forms()
        ]


TaxonomyFormSet = forms.formset_factory(TaxonomyRowForm, formset=BaseTaxonomyFormSet, extra=1, can_delete=True)

TAXONOMY_TITLES = {
    "skills": _("Skills"),
    "relation_types": _("Relation types"),
    "question_categories": _("Question categories"),
    "topic_categories": _("Topic categories"),
    "tasks": _("Tasks (task, group)"),
    "agent_roles": _("Description agents (role, instruction)"),
    "mvp_subtasks": _("Multi-video subtasks (task, group)"),
    "unusable_reasons": _("Reasons a video is unusable"),
}


def _initial_rows(project: Project, key: str) -> list[dict]:
    code_field, label_field = EDITABLE_TAXONOMIES[key]
    rows = []
    for entry in project.taxonomy(key):
        if isinstance(entry, str):
            entry = {code_field: entry}
        extra = {k: v for k, v in entry.items() if k not in (code_field, label_field)}
        code, label = entry.get(code_field, ""), entry.get(label_field, "")
        rows.append({"code": code, "label": label, "extra": json.dumps(extra)})
    return rows


def taxonomy_formsets(project: Project, data=None) -> list[tuple[str, str, BaseTaxonomyFormSet]]:
    """One formset per editable taxonomy, prefixed `tax-<key>`, filled from the project.

    A formset is bound only when `data` holds its rows (its management form): a post that leaves a
    taxonomy out (a script, an older form) leaves that taxonomy as it is.
    """
    # The taxonomies the project keeps (a preset stores only its kind's), else every editable one.
    keys = [key for key in EDITABLE_TAXONOMIES if key in (project.taxonomies or {})] or list(EDITABLE_TAXONOMIES)
    return [
        (
            key,
            TAXONOMY_TITLES[key],
            TaxonomyFormSet(
                data if data is not None and f"tax-{key}-TOTAL_FORMS" in data else None,
                initial=_initial_rows(project, key),
                prefix=f"tax-{key}",
            ),
        )
        for key in keys
    ]
