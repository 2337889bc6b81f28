"""The new-release form as people fill it in; `releases.services` decides what is valid.

The form turns typed text into the service's inputs (filters and split config as dicts) and maps
the service's refusals back onto its fields, so nothing typed is lost.
"""

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import ItemStatus
from projects.models import Project, ProjectKind

from .models import ReleaseFormat
from .services import SPLIT_NAMES, lmms_eval_refusals

# What a project of each kind usually releases; the admin may tick more.
DEFAULT_FORMATS = {
    ProjectKind.SVBENCH: [ReleaseFormat.SVBENCH],
    ProjectKind.LONGVIDEOBENCH: [ReleaseFormat.LONGVIDEOBENCH],
    ProjectKind.LIVIBENCH: [ReleaseFormat.LIVIBENCH],
    ProjectKind.MVPBENCH: [ReleaseFormat.MVPBENCH],
    ProjectKind.GENERIC: [ReleaseFormat.GENERIC],
}
SPLIT_MODES = [
    ("none", gettext_lazy("No split: every video in test")),
    ("ratios", gettext_lazy("Shares of the videos (ratios)")),
    ("counts", gettext_lazy("Numbers of videos (counts)")),
]
# Service input → form field, for errors the service reports on a whole input.
_ERROR_FIELDS = {"version": "version", "formats": "formats", "seed": "seed", "split_config": "split_mode"}


class ReleaseForm(forms.Form):
    version = forms.CharField(
        label=gettext_lazy("Version"),
        max_length=40,
        help_text=gettext_lazy("A new label; releases never change, so each label is used once (e.g. v1.0)."),
    )
    formats = forms.MultipleChoiceField(
        label=gettext_lazy("Formats"), choices=ReleaseFormat.choices, widget=forms.CheckboxSelectMultiple
    )
    statuses = forms.MultipleChoiceField(
        label=gettext_lazy("Item statuses"),
        choices=ItemStatus.choices,
        initial=[ItemStatus.ACCEPTED],
        widget=forms.CheckboxSelectMultiple,
        help_text=gettext_lazy("Accepted only, unless you mean to publish unreviewed work."),
    )
    categories = forms.CharField(
        label=gettext_lazy("Categories"),
        required=False,
        help_text=gettext_lazy(
            "Category codes, task names or SVBench skills, comma-separated (e.g. E2O, S2A). Empty: all."
        ),
    )
    video_ids = forms.CharField(
        label=gettext_lazy("Videos"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=gettext_lazy("Video names or ids, separated by commas or new lines. Empty: every video."),
    )
    accepted_from = forms.DateField(
        label=gettext_lazy("Accepted from"), required=False, widget=forms.DateInput({"type": "date"})
    )
    accepted_to = forms.DateField(
        label=gettext_lazy("Accepted up to"), required=False, widget=forms.DateInput({"type": "date"})
    )
    include_media = forms.BooleanField(
        label=gettext_lazy("Include video and clip files"),
        required=False,
        initial=True,
        help_text=gettext_lazy("Untick for annotations only."),
    )
    clip_files = forms.BooleanField(
        label=gettext_lazy("Cut clip files"),
        required=False,
        help_text=gettext_lazy("Also cut every released QA chain's clip into its own file (ffmpeg; slower)."),
    )
    lmms_eval = forms.BooleanField(
        label=gettext_lazy("lmms-eval tasks"),
        required=False,
        help_text=gettext_lazy(
            "Also write an lmms_eval/ folder so lmms-eval can evaluate a model on this release's MCQs "
            "(LongVideoBench, MVPBench or LiViBench files)."
        ),
    )
    split_mode = forms.ChoiceField(label=gettext_lazy("Split by video"), choices=SPLIT_MODES, initial="ratios")
    train = forms.FloatField(label=gettext_lazy("Train"), required=False, min_value=0, initial=0.8)
    eval = forms.FloatField(label=gettext_lazy("Eval"), required=False, min_value=0)
    test = forms.FloatField(label=gettext_lazy("Test"), required=False, min_value=0, initial=0.2)
    stratify = forms.BooleanField(
        label=gettext_lazy("Stratify by category and duration group"), required=False, initial=True
    )
    seed = forms.IntegerField(
        label=gettext_lazy("Seed"),
        min_value=0,
        initial=0,
        help_text=gettext_lazy("The same seed and data give the same split, paths and bytes."),
    )
    test_style = forms.BooleanField(
        label=gettext_lazy("Test-style (answers withheld)"),
        required=False,
        help_text=gettext_lazy("E.g. no LongVideoBench correct_choice, for a hidden test set."),
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["formats"].initial = DEFAULT_FORMATS.get(project.kind, [ReleaseFormat.GENERIC])

    def clean_video_ids(self) -> list[int]:
        tokens = [t for t in self.cleaned_data["video_ids"].replace(",", "\n").split() if t]
        ids = [int(t) for t in tokens if t.isdecimal()]
        names = [t for t in tokens if not t.isdecimal()]
        if names:
            found = dict(self.project.videos.filter(name__in=names).values_list("name", "pk"))
            missing = [n for n in names if n not in found]
            if missing:
                raise ValidationError(_("No video named %(names)s in this project.") % {"names": ", ".join(missing)})
            ids += found.values()
        return sorted(set(ids))

    def clean(self):
        data = super().clean()
        mode = data.get("split_mode")
        if mode in ("ratios", "counts"):
            parts = {name: data.get(name) for name in SPLIT_NAMES if data.get(name)}
            if not parts:
                self.add_error(
                    "split_mode",
                    (
                        _("Give at least one of %(splits)s a ratio.")
                        if mode == "ratios"
                        else _("Give at least one of %(splits)s a count.")
                    )
                    % {"splits": ", ".join(SPLIT_NAMES)},
                )
            elif mode == "counts":
                for name, value in parts.items():
                    if value != int(value):
                        self.add_error(name, _("A count is a whole number of videos."))
        if data.get("lmms_eval") and data.get("formats"):
            for message in lmms_eval_refusals(formats=data["formats"], test_style=bool(data.get("test_style"))):
                self.add_error("lmms_eval", message)
        return data

    def filters(self) -> dict:
        data = self.cleaned_data
        filters = {
            "statuses": data.get("statuses") or [ItemStatus.ACCEPTED.value],
            "categories": [c.strip() for c in data.get("categories", "").split(",") if c.strip()],
            "video_ids": data.get("video_ids") or [],
            "accepted_from": data["accepted_from"].isoformat() if data.get("accepted_from") else None,
            "accepted_to": data["accepted_to"].isoformat() if data.get("accepted_to") else None,
            "include_media": bool(data.get("include_media")),
            "clip_files": bool(data.get("clip_files")) or None,
            "lmms_eval": bool(data.get("lmms_eval")) or None,
        }
        return {k: v for k, v in filters.items() if v not in (None, [], "")}

    def split_config(self) -> dict:
        data = self.cleaned_data
        mode = data.get("split_mode")
        if mode not in ("ratios", "counts"):
            return {}
        parts = {name: data[name] for name in SPLIT_NAMES if data.get(name)}
        if mode == "counts":
            parts = {name: int(value) for name, value in parts.items()}
        return {mode: parts, "stratify": bool(data.get("stratify"))}

    def service_fields(self) -> dict:
        data = self.cleaned_data
        return {
            "version": data["version"],
            "formats": data["formats"],
            "filters": self.filters(),
            "split_config": self.split_config(),
            "seed": data["seed"],
            "test_style": bool(data.get("test_style")),
        }

    def add_service_errors(self, exc: ValidationError) -> None:
        for key, errors in exc.message_dict.items():
            field = _ERROR_FIELDS.get(key)
            self.add_error(field if field in self.fields else None, errors)


class BenchmarkImportForm(forms.Form):
    """Import existing benchmark files: the format, the items' status, and a zip or a server folder."""

    format = forms.ChoiceField(label=gettext_lazy("Format"), choices=ReleaseFormat.choices)
    status = forms.ChoiceField(
        label=gettext_lazy("Status of the imported items"),
        choices=[(value, label) for value, label in ItemStatus.choices if value != ItemStatus.DRAFT],
        initial=ItemStatus.EXAMINING,
        help_text=gettext_lazy("Examining by default, so the items can be audited and reviewed before a release."),
    )
    archive = forms.FileField(
        label=gettext_lazy("Zip of the files"),
        required=False,
        help_text=gettext_lazy("A release's zip, or a zip of the benchmark's folder (with videos/ when they are new)."),
    )
    folder = forms.CharField(
        label=gettext_lazy("Or a folder on the server"),
        required=False,
        max_length=1000,
        help_text=gettext_lazy("An absolute path inside a folder the server allows imports from."),
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["format"] = DEFAULT_FORMATS.get(project.kind, [ReleaseFormat.GENERIC])[0]

    def clean(self):
        data = super().clean()
        if bool(data.get("archive")) == bool((data.get("folder") or "").strip()):
            raise ValidationError(_("Give either a zip file or a server folder."))
        return data
