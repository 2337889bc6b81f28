"""Every string a person reads is marked for translation: templates, page modules and forms.

Each check is shown to catch what it is for (the planted_* tests), then run over the real files.
"""

import importlib
from pathlib import Path

import pytest
from django.apps import apps
from django.forms import BaseForm
from django.utils.functional import Promise

from tests.i18n.catalogue import ROOT, script_files, template_files
from tests.i18n.unmarked import unmarked_script_strings, unmarked_template_text


def test_planted_template_text_is_caught():
    source = """{% load i18n %}<h1>{% translate "Projects" %}</h1>
<p>Choose a project.</p>
<button title="Open it" aria-label="{% translate 'Open' %}">{% blocktranslate %}Open {{ name }}{% endblocktranslate %}
</button>
<p>{{ count }} items</p>
<script>const x = "Not text for people";</script><kbd>Ctrl+Enter</kbd> <code>video,name</code> · 42 %
{% comment %}A note for developers.{% endcomment %}"""
    assert unmarked_template_text(source) == [(2, "Choose a project."), (3, 'title="Open it"'), (5, "{{}} items")]


def test_planted_script_string_is_caught():
    source = """(function () {
  say("Saved.");
  say(gettext("Saved."));
  document.querySelector("#save button").title = gettext("Save now");
  el.textContent = interpolate(ngettext("%s item", "%s items", n), [n]);
  const label = n + " items left";
  if (event.key === "Enter") go("next-item");
})();"""
    assert unmarked_script_strings(source) == [(2, "Saved."), (6, " items left")]


@pytest.mark.parametrize("path", template_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_template_text_is_marked(path):
    unmarked = unmarked_template_text(path.read_text(encoding="utf-8"))
    assert not unmarked, "Wrap in {% translate %} / {% blocktranslate %}: " + "; ".join(
        f"line {line}: {text!r}" for line, text in unmarked
    )


@pytest.mark.parametrize("path", script_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_script_strings_are_marked(path):
    unmarked = unmarked_script_strings(path.read_text(encoding="utf-8"))
    assert not unmarked, "Wrap in gettext() / ngettext() + interpolate(): " + "; ".join(
        f"line {line}: {text!r}" for line, text in unmarked
    )


def _form_classes():
    classes = set()
    for config in apps.get_app_configs():
        # The project's own apps (the API stays English); not Django's or other packages'.
        if Path(config.path).parent != ROOT or config.name == "api":
            continue
        # Forms live in forms.py or beside the views that use them.
        for path in sorted(Path(config.path).glob("*.py")):
            if path.stem != "forms" and not path.stem.endswith("views"):
                continue
            module = importlib.import_module(f"{config.name}.{path.stem}")
            classes |= {
                value
                for value in vars(module).values()
                if isinstance(value, type) and issubclass(value, BaseForm) and value.__module__ == module.__name__
            }
    return sorted(classes, key=lambda c: f"{c.__module__}.{c.__name__}")


def test_forms_are_found():
    names = {f"{c.__module__}.{c.__name__}" for c in _form_classes()}
    assert {
        "studio.forms.ProjectSettingsForm",
        "releases.forms.ReleaseForm",
        "reviewer.queue_views.QueueForm",
        "reviewer.gate_views.ScoreFilterForm",
    } <= names


@pytest.mark.parametrize("form_class", _form_classes(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_form_labels_and_help_texts_are_translatable(form_class):
    # A field with no label shows one Django makes from its name, in English; a marked one is a
    # lazy translation.
    plain = []
    for name, field in form_class.base_fields.items():
        if not isinstance(field.label, Promise):
            plain.append(f"{name}.label")
        if field.help_text and not isinstance(field.help_text, Promise):
            plain.append(f"{name}.help_text")
    assert not plain, f"Give these a gettext_lazy(...) text: {', '.join(plain)}"


def test_planted_plain_form_label_is_caught():
    from django import forms
    from django.utils.translation import gettext_lazy

    class Planted(forms.Form):
        marked = forms.CharField(label=gettext_lazy("Name"))
        unmarked = forms.CharField(help_text="Plain text")

    with pytest.raises(AssertionError, match="unmarked.label, unmarked.help_text"):
        test_form_labels_and_help_texts_are_translatable(Planted)
