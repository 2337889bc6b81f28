"""Default taxonomies from the benchmarks' papers; every project keeps its own editable copy."""

SVBENCH_SKILLS = [
    {"code": "II", "name": "Intention Inference"},
    {"code": "PA", "name": "Potentiality Assessment"},
    {"code": "CR", "name": "Counterfactual Reasoning"},
    {"code": "STS", "name": "Spatio-Temporal Speculation"},
    {"code": "RI", "name": "Relationship Inference"},
    {"code": "CST", "name": "Character State and Transition"},
    {"code": "CTA", "name": "Comparison and Trend Analysis"},
    {"code": "CSI", "name": "Common Sense Inference"},
    {"code": "ECA", "name": "Event-Centric Analysis"},
]

# `code` is what we store; `label` is what SVBench's released files say.
RELATION_TYPES = [
    {
        "code": "action",
        "label": "Actions",
        "guideline": (
            "Same action: ask its purpose, its feasibility under conditions, its purpose at a time and "
            "place, the counterfactual outcome, the action before/after it and its effect, or compare "
            "actions or the interval between them. Different actions: ask what is done next."
        ),
    },
    {
        "code": "quantity",
        "label": "Quantity",
        "guideline": "Compare two quantities; ask about the trend and regularity of a quantity over time.",
    },
    {
        "code": "person",
        "label": "People",
        "guideline": (
            "Different people: their relationship and whether it changes, their relative position and how "
            "it changes, their interaction. Same person: emotional change and its effect on behaviour, "
            "their background."
        ),
    },
    {
        "code": "object",
        "label": "Objects",
        "guideline": (
            "The object's effect on others, the counterfactual without it or with other attributes, its "
            "contribution to an event, its state change and trajectory."
        ),
    },
    {
        "code": "event",
        "label": "Events",
        "guideline": "What happens next, cause and chain reaction, category, impact, a prediction and its basis.",
    },
    {
        "code": "environment",
        "label": "Environment",
        "guideline": "The change compared with before and afterwards; the counterfactual without it.",
    },
]

CHAIN_JUDGE_DIMENSIONS = [
    "accuracy",
    "completeness",
    "relevance",
    "fluency",
    "contextual_comprehension",
    "logical_consistency",
    "temporal_understanding",
]

ANSWER_EVAL_DIMENSIONS = [
    "semantic_accuracy",
    "contextual_coherence",
    "logical_consistency",
    "temporal_understanding",
    "informational_completeness",
    "overall",
]

L1 = "L1-Perception"
L2 = "L2-Relation"
LVB_QUESTION_CATEGORIES = [
    {"code": "S2E", "level": L1, "name": "scene-referred event"},
    {"code": "S2O", "level": L1, "name": "scene-referred object existence"},
    {"code": "S2A", "level": L1, "name": "scene-referred object attribute"},
    {"code": "E2O", "level": L1, "name": "event-referred object"},
    {"code": "O2E", "level": L1, "name": "object-referred event"},
    {"code": "T2E", "level": L1, "name": "text-referred event"},
    {"code": "T2O", "level": L1, "name": "text-referred object existence"},
    {"code": "T2A", "level": L1, "name": "text-referred object attribute"},
    {"code": "E3E", "level": L2, "name": "event before/after event"},
    {"code": "O3O", "level": L2, "name": "object before/after object"},
    {"code": "SSS", "level": L2, "name": "sequence of scenes"},
    {"code": "SOS", "level": L2, "name": "scene-referred object tracking"},
    {"code": "SAA", "level": L2, "name": "scene-referred object attribute change"},
    {"code": "T3E", "level": L2, "name": "event before/after text"},
    {"code": "T3O", "level": L2, "name": "object before/after text"},
    {"code": "TOS", "level": L2, "name": "text-referred object tracking"},
    {"code": "TAA", "level": L2, "name": "text-referred object attribute change"},
]

LVB_TOPIC_CATEGORIES = [
    {"code": "MR", "name": "movie recaps"},
    {"code": "LT", "name": "travel guides"},
    {"code": "LV", "name": "life vlogs"},
    {"code": "LC", "name": "cooking"},
    {"code": "NP", "name": "news programs"},
    {"code": "KA", "name": "art"},
    {"code": "KH", "name": "history"},
    {"code": "KG", "name": "geography"},
    {"code": "KS", "name": "STEM"},
    {"code": "KC", "name": "computer science"},
]

# (low, high] seconds and the released group name; questions per video grow with duration.
LVB_DURATION_GROUPS = [
    {"name": 15, "low": 8, "high": 15, "questions_per_video": 1},
    {"name": 60, "low": 15, "high": 60, "questions_per_video": 1},
    {"name": 600, "low": 180, "high": 600, "questions_per_video": 2},
    {"name": 3600, "low": 900, "high": 3600, "questions_per_video": 3},
]

# The task names the LiViBench paper gives; the remaining tasks of its 24 are added per project.
LIVIBENCH_TASKS = [
    {"group": "coarse perception", "task": "video topic"},
    {"group": "coarse perception", "task": "scene recognition"},
    {"group": "coarse perception", "task": "visual style"},
    {"group": "coarse perception", "task": "quality assessment"},
    {"group": "fine perception", "task": "detail recognition"},
    {"group": "fine perception", "task": "attribute recognition"},
    {"group": "fine perception", "task": "event recognition"},
    {"group": "fine perception", "task": "talent recognition"},
    {"group": "fine perception", "task": "temporal querying"},
    {"group": "fine perception", "task": "multi-person interaction"},
    {"group": "general reasoning", "task": "object reasoning"},
    {"group": "general reasoning", "task": "temporal reasoning"},
    {"group": "general reasoning", "task": "spatial reasoning"},
    {"group": "general reasoning", "task": "causal reasoning"},
]

LIVIBENCH_AGENT_ROLES = [
    {"role": "visual", "instruction": "Describe what is seen: people, objects, scenes, on-screen text, camera work."},
    {"role": "audio", "instruction": "Describe what is heard: speech content, music, sound events, tone."},
    {"role": "interaction", "instruction": "Describe the streamer's interaction with viewers and the comments."},
    {"role": "narrative", "instruction": "Summarise the course of events in time order with timestamps."},
]

UNUSABLE_REASONS = [
    {"code": "still_frames", "name": "Still frames / no motion"},
    {"code": "incomplete_subtitles", "name": "Incomplete subtitles"},
    {"code": "other", "name": "Other"},
]


def default_taxonomies() -> dict:
    """A fresh copy (JSONField defaults must be callables returning new objects)."""
    return {
        "skills": [dict(x) for x in SVBENCH_SKILLS],
        "relation_types": [dict(x) for x in RELATION_TYPES],
        "judge_dimensions": list(CHAIN_JUDGE_DIMENSIONS),
        "answer_eval_dimensions": list(ANSWER_EVAL_DIMENSIONS),
        "question_categories": [dict(x) for x in LVB_QUESTION_CATEGORIES],
        "topic_categories": [dict(x) for x in LVB_TOPIC_CATEGORIES],
        "duration_groups": [dict(x) for x in LVB_DURATION_GROUPS],
        "tasks": [dict(x) for x in LIVIBENCH_TASKS],
        "agent_roles": [dict(x) for x in LIVIBENCH_AGENT_ROLES],
        "mvp_subtasks": [],
        "unusable_reasons": [dict(x) for x in UNUSABLE_REASONS],
    }


def relation_label(code: str) -> str:
    return {r["code"]: r["label"] for r in RELATION_TYPES}[code]


# Taxonomies edited as rows of a code and a label on the settings page: key → (code field, label
# field). Other fields of a row (a guideline, a level) are kept as they are when the row is edited.
EDITABLE_TAXONOMIES = {
    "skills": ("code", "name"),
    "relation_types": ("code", "label"),
    "question_categories": ("code", "name"),
    "topic_categories": ("code", "name"),
    "tasks": ("task", "group"),
    "agent_roles": ("role", "instruction"),
    "mvp_subtasks": ("task", "group"),
    "unusable_reasons": ("code", "name"),
}


def taxonomy_errors(key: str, rows) -> list[str]:
    """What is wrong with `rows` as the editable taxonomy `key`: codes unique and non-empty, labels non-empty."""
    code_field, label_field = EDITABLE_TAXONOMIES[key]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return [f"A list of objects with “{code_field}” and “{label_field}”."]
    errors, seen = [], set()
    for n, row in enumerate(rows, start=1):
        code, label = str(row.get(code_field) or "").strip(), str(row.get(label_field) or "").strip()
        if not code:
            errors.append(f"Row {n}: “{code_field}” is empty.")
        elif code in seen:
            errors.append(f"Row {n}: the code {code} is used twice.")
        seen.add(code)
        if not label:
            errors.append(f"Row {n}: “{label_field}” is empty.")
    return errors
