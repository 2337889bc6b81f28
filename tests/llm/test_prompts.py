"""Default prompt templates, their schemas, rendering, and versioned edits."""

import pytest
from django.core.exceptions import ValidationError
from jsonschema import Draft202012Validator

from llm.models import PromptTemplate
from llm.prompts import (
    DEFAULT_TEMPLATES,
    TEMPLATE_FIELDS,
    TemplateRenderError,
    ensure_default_templates,
    prompt_template_for_call,
    template_render,
    template_update,
)
from llm.selectors import prompt_template_active
from tests import factories
from tests.fakes.openai_server import example_from_schema

EXPECTED_KEYS = {
    "qa_chain",
    "relations",
    "description",
    "seed_questions",
    "mcq",
    "distractors",
    "complexity",
    "judge",
    "text_only_answer",
    "answer_extract",
    "answer_judge",
}


def test_every_step_has_a_default_with_a_valid_schema():
    assert set(DEFAULT_TEMPLATES) == EXPECTED_KEYS
    for spec in DEFAULT_TEMPLATES.values():
        Draft202012Validator.check_schema(spec.schema)
        # A cooperative answer exists for every schema (the fake server gives exactly that).
        Draft202012Validator(spec.schema).validate(example_from_schema(spec.schema))


def test_judge_schema_has_the_seven_dimensions_and_overall():
    schema = DEFAULT_TEMPLATES["judge"].schema
    dims = schema["properties"]["scores"]["required"]
    assert dims == [
        "accuracy",
        "completeness",
        "relevance",
        "fluency",
        "contextual_comprehension",
        "logical_consistency",
        "temporal_understanding",
    ]
    validator = Draft202012Validator(schema)
    good = {"scores": dict.fromkeys(dims, 90), "overall": 92, "comments": "Fine."}
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "overall": 101})
    assert not validator.is_valid({**good, "scores": {"accuracy": 90}})


def test_relations_schema_accepts_only_the_six_types():
    validator = Draft202012Validator(DEFAULT_TEMPLATES["relations"].schema)
    link = {"before": 2, "after": 1, "type": "person", "reason": "Same man."}
    assert validator.is_valid({"links": [link]})
    assert validator.is_valid({"links": []})
    assert not validator.is_valid({"links": [{**link, "type": "weather"}]})


def test_distractors_schema_wants_three_or_four():
    validator = Draft202012Validator(DEFAULT_TEMPLATES["distractors"].schema)
    assert validator.is_valid({"correct_answer": "A red car", "distractors": ["a", "b", "c"]})
    assert not validator.is_valid({"correct_answer": "A red car", "distractors": ["a", "b"]})
    assert not validator.is_valid({"correct_answer": "A red car", "distractors": ["a", "b", "c", "d", "e"]})


@pytest.mark.parametrize("key", sorted(EXPECTED_KEYS))
def test_defaults_render_with_their_documented_fields(db, key):
    template = prompt_template_for_call(project=None, key=key)
    context = {name: f"<{name}>" for name in TEMPLATE_FIELDS[key]}

    system, body = template_render(template=template, context=context)

    assert system and body
    for name in TEMPLATE_FIELDS[key]:
        assert f"<{name}>" in system + body
    assert "{" not in body.replace("{{", "")  # nothing left unfilled


def test_qa_chain_prompt_asks_for_dependent_turns_and_pronouns():
    body = DEFAULT_TEMPLATES["qa_chain"].body
    assert "previous answer" in body and "pronoun" in body
    assert {"min_turns", "max_turns", "skills", "subtitles"} <= set(TEMPLATE_FIELDS["qa_chain"])


def test_render_names_every_missing_value(db):
    template = prompt_template_for_call(project=None, key="distractors")

    with pytest.raises(TemplateRenderError, match="needs correct_answer, descriptions, distractor_count, language"):
        template_render(template=template, context={"question": "Why?"})


def test_render_formats_lists_and_floats(db):
    template = PromptTemplate(key="t", body="{items} at {t} s", system="")

    _system, body = template_render(template=template, context={"items": ["a", "b"], "t": 12.5})

    assert body == "a, b at 12.5 s"


def test_ensure_default_templates_is_idempotent_and_keeps_edits(db):
    PromptTemplate.objects.all().delete()

    assert ensure_default_templates() == len(EXPECTED_KEYS)
    assert ensure_default_templates() == 0
    rows = PromptTemplate.objects.filter(project__isnull=True)
    assert {(t.key, t.version, t.is_active) for t in rows} == {(k, 1, True) for k in EXPECTED_KEYS}

    edited = template_update(project=None, key="judge", body="Judge {chain}.")
    assert ensure_default_templates() == 0
    assert prompt_template_active(project=None, key="judge") == edited


def test_missing_defaults_are_recreated_when_a_call_needs_them(db):
    PromptTemplate.objects.all().delete()

    template = prompt_template_for_call(project=None, key="mcq")

    assert (template.key, template.version, template.project) == ("mcq", 1, None)


def test_update_makes_a_new_active_version(db):
    user = factories.UserFactory()
    first = prompt_template_for_call(project=None, key="complexity")

    second = template_update(project=None, key="complexity", body="Rate {title}.", system="Be brief.", user=user)
    third = template_update(project=None, key="complexity", body="Rate {title} again.")

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.is_active, second.is_active, third.is_active) == (False, False, True)
    assert (second.version, third.version) == (first.version + 1, first.version + 2)
    assert second.created_by == user and second.system == "Be brief."
    assert prompt_template_active(project=None, key="complexity") == third


def test_project_override_comes_first_and_is_numbered_after_the_global(db):
    project, other = factories.ProjectFactory(), factories.ProjectFactory()
    template_update(project=None, key="judge", body="Global v2 {chain}.")

    own = template_update(project=project, key="judge", body="Ours {chain}.")

    assert own.version == 3
    assert prompt_template_active(project=project, key="judge") == own
    assert prompt_template_active(project=other, key="judge").body == "Global v2 {chain}."
    newer = template_update(project=project, key="judge", body="Ours again {chain}.")
    own.refresh_from_db()
    assert (own.is_active, newer.version) == (False, 4)


@pytest.mark.parametrize(
    "body, schema, message",
    [
        ("Use {clip.start}.", None, "not a plain name"),
        ("Use {0}.", None, "not a plain name"),
        ("Broken {brace", None, "not a valid format string"),
        ("   ", None, "empty"),
        ("Fine {x}.", {"type": "no-such-type"}, "Not a valid JSON Schema"),
        ("Fine {x}.", ["not", "an", "object"], "must be a JSON object"),
    ],
)
def test_update_refuses_bad_templates_and_keeps_the_old_one(db, body, schema, message):
    before = prompt_template_for_call(project=None, key="complexity")

    with pytest.raises(ValidationError, match=message):
        template_update(project=None, key="complexity", body=body, schema=schema)

    assert prompt_template_active(project=None, key="complexity") == before
