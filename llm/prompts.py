"""Default prompt templates for every drafting step, and the services that version them.

Templates are `str.format` strings over plain names (no attribute or index lookups, so an edited
template cannot reach into Python objects). `TEMPLATE_FIELDS` lists what each default expects;
callers pass those in `context`. Each template carries the JSON Schema its answer must satisfy.

The wording is ours; the tasks follow SVBench (QA chains, temporal linkages, the chain judge),
LongVideoBench (referring queries, referred moments) and LiViBench (complexity filter,
multi-agent descriptions, seed questions, candidate MCQs, distractors).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.translation import gettext as _
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from projects.taxonomies import ANSWER_EVAL_DIMENSIONS, CHAIN_JUDGE_DIMENSIONS, RELATION_TYPES

from .models import PromptTemplate
from .selectors import prompt_template_active


@dataclass(frozen=True)
class TemplateSpec:
    key: str
    system: str
    body: str
    schema: dict


def _object(required: list[str], **properties: dict) -> dict:
    return {"type": "object", "required": required, "properties": properties}


_TEXT = {"type": "string", "minLength": 1}
_SECONDS = {"type": "number", "minimum": 0}

QA_CHAIN = TemplateSpec(
    key="qa_chain",
    system=(
        "You write question-answer chains for a streaming video benchmark. You see frames sampled "
        "evenly from one short clip of a longer video, in time order, plus any subtitles of the clip. "
        "You answer with JSON only."
    ),
    body=(
        "The clip runs from {clip_start} s to {clip_end} s of the video; {frame_count} frames follow.\n"
        "Subtitles of the clip (may be empty):\n{subtitles}\n\n"
        "Write one chain of {min_turns} to {max_turns} question-answer turns in {language} about this clip, "
        "as a viewer would ask them one after another while watching:\n"
        "- The first question is about something clearly visible or audible in the clip.\n"
        "- Every later question builds on the previous answer: it cannot be understood or answered "
        "without it.\n"
        "- After a person or thing has been introduced, refer to it with a pronoun or a short "
        'description ("he", "the woman in red", "it"), never by repeating a proper name.\n'
        "- Answers are short, factual and grounded in what the clip shows; do not invent names, "
        "numbers or events that cannot be seen or heard.\n"
        "- Prefer questions that need reasoning over the clip (intentions, causes, what may happen "
        "next, changes over time) to questions about a single frame.\n"
        "- Tag each turn with the code of the skill it tests, one of: {skills}.\n"
    ),
    schema=_object(
        ["turns"],
        turns={
            "type": "array",
            "minItems": 1,
            "maxItems": 12,
            "items": _object(["question", "answer", "skill"], question=_TEXT, answer=_TEXT, skill={"type": "string"}),
        },
    ),
)

_RELATION_CODES = [r["code"] for r in RELATION_TYPES]

RELATIONS = TemplateSpec(
    key="relations",
    system=(
        "You link question-answer turns of two consecutive clips of one video, for a benchmark of "
        "reasoning across time. You answer with JSON only."
    ),
    body=(
        "Earlier clip ({clip_before}), its chain of turns:\n{chain_before}\n\n"
        "Next clip ({clip_after}), its chain of turns:\n{chain_after}\n\n"
        "Propose links from a turn of the earlier chain to a turn of the next chain where the two "
        "concern the same thing, so that the later question could be rewritten to need the earlier "
        "clip to answer. Each link has one type:\n{relation_types}\n\n"
        "Number turns from 1 as listed. Propose only links you can justify from the texts; it is fine "
        "to propose none. Give a one-sentence reason for each link, in {language}."
    ),
    schema=_object(
        ["links"],
        links={
            "type": "array",
            "items": _object(
                ["before", "after", "type", "reason"],
                before={"type": "integer", "minimum": 1},
                after={"type": "integer", "minimum": 1},
                type={"type": "string", "enum": _RELATION_CODES},
                reason={"type": "string"},
            ),
        },
    ),
)

DESCRIPTION = TemplateSpec(
    key="description",
    system=(
        "You are one of several experts who each describe the same video from their own angle, so "
        "that question writers can later work from the descriptions. You answer with JSON only."
    ),
    body=(
        "Your role: {role}. {role_instruction}\n\n"
        "The video lasts {duration} s; {frame_count} frames sampled evenly across it follow.\n"
        "Speech and subtitles (may be empty):\n{subtitles}\n\n"
        "Viewer comments (may be empty):\n{comments}\n\n"
        "Describe the video in {language} from your role's angle only, in time order where that "
        "matters. Be concrete and say only what the material supports. List the moments a question "
        "could point at, with their time in seconds."
    ),
    schema=_object(
        ["description", "moments"],
        description=_TEXT,
        moments={"type": "array", "items": _object(["time", "text"], time=_SECONDS, text=_TEXT)},
    ),
)

SEED_QUESTIONS = TemplateSpec(
    key="seed_questions",
    system=(
        "You help curate a library of example questions per task for a livestream video benchmark. "
        "Seeds are templates that later guide question writing for many videos. You answer with JSON only."
    ),
    body=(
        "Task: {task} (group: {task_group}).\n"
        "Seeds already in the library (do not repeat them):\n{existing}\n\n"
        "Write {count} new seed questions in {language} for this task. Each must test exactly this task, "
        "work for many different videos (no details of one particular video), be answerable from the "
        "video, and differ from the others in what it asks. Add a short note on what a good answer needs."
    ),
    schema=_object(
        ["questions"],
        questions={"type": "array", "minItems": 1, "items": _object(["text"], text=_TEXT, note={"type": "string"})},
    ),
)

MCQ = TemplateSpec(
    key="mcq",
    system=(
        "You draft multiple-choice questions about one video for a benchmark. A human will screen and "
        "refine every draft. You answer with JSON only."
    ),
    body=(
        "Task: {task} (group: {task_group}). The video lasts {duration} s.\n\n"
        "Seed questions for this task, to adapt to this video:\n{seeds}\n\n"
        "Descriptions of the video by several experts:\n{descriptions}\n\n"
        "Subtitles (may be empty):\n{subtitles}\n\n"
        "Draft {count} questions in {language} for this task about this video. For each:\n"
        "- the question, and the part of it that points at a particular moment or scene "
        "(the referring query) copied word for word, or an empty string if there is none;\n"
        "- the question rewritten without the referring query;\n"
        "- the correct answer, short;\n"
        "- the times in seconds of the moments the question refers to.\n"
        "Only ask what the descriptions or subtitles support; each question must need the video to answer."
    ),
    schema=_object(
        ["questions"],
        questions={
            "type": "array",
            "minItems": 1,
            "items": _object(
                ["question", "answer"],
                question=_TEXT,
                referring_query={"type": "string"},
                question_without_referring_query={"type": "string"},
                answer=_TEXT,
                moments={"type": "array", "items": _SECONDS},
            ),
        },
    ),
)

DISTRACTORS = TemplateSpec(
    key="distractors",
    system=(
        "You write answer options for multiple-choice video questions. Wrong options must be plausible "
        "to someone who has not watched the video, yet clearly wrong to someone who has. You answer "
        "with JSON only."
    ),
    body=(
        "Question: {question}\n"
        "Correct answer as proposed so far (may be empty; then propose it): {correct_answer}\n\n"
        "What is known about the video:\n{descriptions}\n\n"
        "Give the correct answer and {distractor_count} distractors in {language}. Keep all options "
        "similar in length, style and specificity, so that neither the longest option nor an odd one "
        "out gives the answer away; no option may repeat or contain another, and none may reuse "
        "words of the question that only the correct answer would use."
    ),
    schema=_object(
        ["correct_answer", "distractors"],
        correct_answer=_TEXT,
        distractors={"type": "array", "minItems": 3, "maxItems": 4, "items": _TEXT},
    ),
)

COMPLEXITY = TemplateSpec(
    key="complexity",
    system=(
        "You rate how much a video offers to a question-answering benchmark, before anyone annotates "
        "it. You answer with JSON only."
    ),
    body=(
        "Title or name: {title}. The video lasts {duration} s; {frame_count} frames sampled evenly across "
        "it follow.\nSpeech and subtitles (may be empty):\n{subtitles}\n\n"
        "Viewer comments (may be empty):\n{comments}\n\n"
        "Rate the video's content complexity from 1 to 10: 1 means almost nothing happens (a static "
        "screen, one person idle, no speech); 5 means several events, people or objects worth asking "
        "about; 10 means dense, changing content with interactions that need reasoning over time. "
        "Give one or two sentences on why."
    ),
    schema=_object(["score", "reason"], score={"type": "integer", "minimum": 1, "maximum": 10}, reason=_TEXT),
)

_JUDGE_SCORE = {"type": "integer", "minimum": 0, "maximum": 100}

JUDGE = TemplateSpec(
    key="judge",
    system=(
        "You are a strict quality reviewer of question-answer chains for a streaming video benchmark. "
        "You see frames of the clip and the chain a person wrote. You answer with JSON only."
    ),
    body=(
        "The clip runs from {clip_start} s to {clip_end} s; {frame_count} frames follow.\n"
        "Subtitles of the clip (may be empty):\n{subtitles}\n\n"
        "The chain, in order:\n{chain}\n\n"
        "Score the chain from 0 to 100 on each dimension:\n"
        "- accuracy: the answers are true to the clip;\n"
        "- completeness: the answers fully answer their questions;\n"
        "- relevance: the questions are about this clip;\n"
        "- fluency: the language is natural and correct;\n"
        "- contextual_comprehension: each later turn builds on the earlier ones, using pronouns "
        "rather than repeated names;\n"
        "- logical_consistency: no turn contradicts another;\n"
        "- temporal_understanding: the chain follows and reasons about the order of events.\n"
        "Then give an overall score from 0 to 100 and comments in {language} that tell the annotator "
        "exactly what to fix (name the turn numbers)."
    ),
    schema=_object(
        ["scores", "overall", "comments"],
        scores=_object(list(CHAIN_JUDGE_DIMENSIONS), **dict.fromkeys(CHAIN_JUDGE_DIMENSIONS, _JUDGE_SCORE)),
        overall=_JUDGE_SCORE,
        comments={"type": "string"},
    ),
)

# MCQs have 4–5 options (LongVideoBench); three more leave room for other benchmarks' sets.
OPTION_LETTERS = "ABCDEFGH"

TEXT_ONLY_ANSWER = TemplateSpec(
    key="text_only_answer",
    system=(
        "You answer multiple-choice questions about videos you cannot see, using only the question and "
        "the options and general knowledge. You answer with JSON only."
    ),
    body=(
        "Question: {question}\nOptions:\n{options}\n\n"
        "You have not seen the video. Pick the option most likely correct anyway, by its letter, and "
        "say how confident you are from 0 (pure guess) to 1 (certain without the video)."
    ),
    schema=_object(
        ["answer", "confidence"],
        answer={"type": "string", "enum": list(OPTION_LETTERS)},
        confidence={"type": "number", "minimum": 0, "maximum": 1},
        reason={"type": "string"},
    ),
)

ANSWER_EXTRACT = TemplateSpec(
    key="answer_extract",
    system=(
        "You read another model's reply to a multiple-choice question and say which option it chose. "
        "You do not answer the question yourself. You answer with JSON only."
    ),
    body=(
        "Question: {question}\nOptions:\n{options}\n\nThe reply:\n{reply}\n\n"
        'Which option does the reply choose? Give its label, or "none" when the reply chooses no '
        "option or more than one."
    ),
    schema=_object(["choice"], choice={"type": "string"}),
)

ANSWER_JUDGE = TemplateSpec(
    key="answer_judge",
    system=(
        "You grade a model's answer to a question about a video against the reference answer a person "
        "wrote, as SVBench's evaluation does. You answer with JSON only."
    ),
    body=(
        "The conversation so far (may be empty):\n{history}\n\n"
        "Question: {question}\nReference answer: {reference}\nThe model's answer: {answer}\n\n"
        "Score the model's answer from 0 to 100 on each dimension:\n"
        "- semantic_accuracy: it says what the reference says;\n"
        "- contextual_coherence: it fits the conversation so far;\n"
        "- logical_consistency: it does not contradict itself or earlier turns;\n"
        "- temporal_understanding: it gets the order and timing of events right;\n"
        "- informational_completeness: it gives everything the reference gives;\n"
        "- overall: your overall grade."
    ),
    schema=_object(
        ["scores"],
        scores=_object(list(ANSWER_EVAL_DIMENSIONS), **dict.fromkeys(ANSWER_EVAL_DIMENSIONS, _JUDGE_SCORE)),
    ),
)

DEFAULT_TEMPLATES: dict[str, TemplateSpec] = {
    spec.key: spec
    for spec in (
        QA_CHAIN,
        RELATIONS,
        DESCRIPTION,
        SEED_QUESTIONS,
        MCQ,
        DISTRACTORS,
        COMPLEXITY,
        JUDGE,
        TEXT_ONLY_ANSWER,
        ANSWER_EXTRACT,
        ANSWER_JUDGE,
    )
}


# --- Rendering ----------------------------------------------------------------------------------


class TemplateRenderError(ValueError):
    """A template cannot be filled: a missing value or a field that is not a plain name."""


def template_fields(text: str) -> list[str]:
    """The `{names}` a template uses, in order of first use; raises on anything but plain names."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise TemplateRenderError(f"the template is not a valid format string: {exc}") from exc
    for _literal, name, spec, _conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier():
            raise TemplateRenderError(
                f"template field {{{name}}} is not a plain name; use names like {{clip_start}} "
                "and write literal braces as {{ and }}"
            )
        if spec and ("{" in spec):
            raise TemplateRenderError(f"template field {{{name}}} has a nested field in its format spec")
        if name not in names:
            names.append(name)
    return names


TEMPLATE_FIELDS: dict[str, list[str]] = {
    key: template_fields(spec.system + "\n" + spec.body) for key, spec in DEFAULT_TEMPLATES.items()
}


def template_render(*, template: PromptTemplate, context: dict) -> tuple[str, str]:
    """(system, user text) with `context` filled in; a clear error names every missing value."""
    needed = template_fields(template.system) + template_fields(template.body)
    missing = sorted({name for name in needed if name not in context})
    if missing:
        raise TemplateRenderError(
            f"prompt {template.key} v{template.version} needs {', '.join(missing)}, which the caller did not provide"
        )
    values = {name: _as_prompt_text(context[name]) for name in needed}
    return template.system.format(**values), template.body.format(**values)


def _as_prompt_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(_as_prompt_text(v) for v in value)
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


# --- Services -------------------------------------------------------------------------------------


def ensure_default_templates(*, template_model=PromptTemplate) -> int:
    """Create version 1 of every default template that has no global row yet; returns how many.

    Never touches a key that already has a global template, so admins' edits survive re-runs.
    `template_model` lets a data migration pass its historical model.
    """
    created = 0
    existing = set(template_model.objects.filter(project__isnull=True).values_list("key", flat=True))
    for key, spec in DEFAULT_TEMPLATES.items():
        if key in existing:
            continue
        try:
            # One savepoint per key: a concurrent first call may create the same row (the unique
            # constraint treats the NULL project as equal), and losing that race is fine.
            with transaction.atomic():
                template_model.objects.create(
                    project=None,
                    key=key,
                    version=1,
                    system=spec.system,
                    body=spec.body,
                    response_schema=spec.schema,
                    is_active=True,
                )
            created += 1
        except IntegrityError:
            continue
    return created


def prompt_template_for_call(*, project, key: str) -> PromptTemplate:
    """The template a call uses: the project's active one, else the active global one.

    Recreates missing defaults first (a flushed test database, a fresh install without migrations
    run to the end); a key with no default and no row is a clear error.
    """
    template = prompt_template_active(project=project, key=key)
    if template is None and key in DEFAULT_TEMPLATES:
        ensure_default_templates()
        template = prompt_template_active(project=project, key=key)
    if template is None:
        raise LookupError(f"no active prompt template {key!r} for project {getattr(project, 'slug', project)}")
    return template


def template_update(
    *,
    project,
    key: str,
    body: str,
    system: str = "",
    schema: dict | None = None,
    user=None,
) -> PromptTemplate:
    """Save an edited template as a new active version of (project, key); older versions stay for provenance.

    `project=None` edits the global default. The first edit of a default for a project makes the
    project's own copy, numbered after the global versions so "qa_chain v3" names one text.
    """
    key = key.strip()
    if not key:
        raise ValidationError({"key": "A template needs a key, e.g. qa_chain."})
    if not body.strip():
        raise ValidationError({"body": "The template body is empty."})
    try:
        template_fields(system)
        template_fields(body)
    except TemplateRenderError as exc:
        raise ValidationError({"body": str(exc)}) from exc
    if schema is not None:
        if not isinstance(schema, dict):
            raise ValidationError({"response_schema": "The response schema must be a JSON object."})
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValidationError({"response_schema": f"Not a valid JSON Schema: {exc.message}"}) from exc
    own = (
        PromptTemplate.objects.filter(key=key, project=project)
        if project
        else PromptTemplate.objects.filter(key=key, project__isnull=True)
    )
    try:
        with transaction.atomic():
            # Lock this key's rows so two editors cannot both deactivate the same version.
            list(own.select_for_update().values_list("id", flat=True))
            latest = own.aggregate(v=Max("version"))["v"] or 0
            if project is not None:
                latest = max(
                    latest,
                    PromptTemplate.objects.filter(key=key, project__isnull=True).aggregate(v=Max("version"))["v"] or 0,
                )
            own.filter(is_active=True).update(is_active=False)
            return PromptTemplate.objects.create(
                project=project,
                key=key,
                version=latest + 1,
                system=system,
                body=body,
                response_schema=schema,
                is_active=True,
                created_by=user,
            )
    except IntegrityError as exc:
        raise ValidationError(_("Someone else saved this template at the same moment; reload and try again.")) from exc


def prompt_templates_copy(*, source, target, user=None) -> int:
    """Give `target` its own copy of every prompt `source` edited for itself; returns how many.

    Used when a new project copies another's settings: the prompts that project tuned come along,
    the ones it left at the global default stay shared.
    """
    copied = 0
    for template in PromptTemplate.objects.filter(project=source, is_active=True).order_by("key"):
        template_update(
            project=target,
            key=template.key,
            body=template.body,
            system=template.system,
            schema=template.response_schema,
            user=user,
        )
        copied += 1
    return copied


# Characters of subtitles, comments or descriptions put into one prompt by default.
PROMPT_TEXT_LIMIT = 4000


def text_excerpt(lines, limit: int = PROMPT_TEXT_LIMIT) -> str:
    """Whole lines, in order, up to `limit` characters: prompt context never ends mid-line."""
    out, size = [], 0
    for line in lines:
        if size + len(line) > limit:
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)
