"""lmms-eval tasks in a release (`filters["lmms_eval"]`): an `lmms_eval/` folder that lmms-eval 0.7.x loads
with `--include_path <release>/lmms_eval`, unchanged, to evaluate a model on the release's own files.

    lmms_eval/utils.py                     the document functions (releases/writers/lmms_eval_task.py, as it is)
    lmms_eval/vidqa_<slug>_<family>_<split>.yaml   one task per MCQ file of the release
    lmms_eval/README.md                    the tasks and the command

A task reads one MCQ file the build wrote: `longvideobench/lvb_<split>.json` (family `lvb`),
`mvpbench/<split>.jsonl` (`mvp`) or `livibench/<split>.jsonl` (`livi`), through `datasets`' json
builder, and hands the model the record's videos from `videos/`. Each task carries the tag
`vidqa_<slug>_<split>`, which runs all of a split's tasks at once. Names start with `vidqa_` and the
project's slug so they never meet a built-in task (lmms-eval keeps its own task when two share a name).

The folder holds nothing lmms-eval would misread: no `__init__.py` (it would shadow the installed
package) and no YAML that is not a task (lmms-eval loads every YAML under the path). Nothing in it
names the release's version or the build's time, so the same data gives the same bytes.
docs/evaluation_lmms_eval.md has the command, where results land and how to read them.
"""

from __future__ import annotations

import re
from pathlib import Path

from .common import BuildContext, json_string, split_label

FOLDER = "lmms_eval"
UTILS_SOURCE = Path(__file__).with_name("lmms_eval_task.py")
TASK_VERSION = 1  # the tasks' `metadata.version`: moves when their prompts or scoring change
SPLITS = ("train", "eval", "test")
# family → (release file of a split, what the task's records are, the post prompt's option kind)
FAMILIES = {
    "lvb": ("longvideobench/lvb_{split}.json", "LongVideoBench-format MCQs", "letter"),
    "mvp": ("mvpbench/{split}.jsonl", "MVPBench multi-video MCQs", "label"),
    "livi": ("livibench/{split}.jsonl", "LiViBench MCQs (VidQA JSONL v1)", "letter"),
}
MAX_NEW_TOKENS = 64
_NOT_NAME = re.compile(r"[^a-z0-9]+")


def task_prefix(slug: str) -> str:
    """`vidqa_<slug>` with the slug in lower case and anything but letters and digits as `_`."""
    return "vidqa_" + _NOT_NAME.sub("_", slug.lower()).strip("_")


def planned_tasks(*, slug: str, written) -> list[dict]:
    """The tasks for the MCQ files `written(path)` says the build wrote, in family then split order."""
    prefix = task_prefix(slug)
    tasks = []
    for family, (pattern, what, option_kind) in FAMILIES.items():
        for split in SPLITS:
            data = pattern.format(split=split_label(split))
            if written(data):
                tasks.append(
                    {
                        "task": f"{prefix}_{family}_{split}",
                        "tag": f"{prefix}_{split}",
                        "family": family,
                        "split": split,
                        "data": data,
                        "what": what,
                        "option_kind": option_kind,
                        "data_files": f"DATA_FILES_{family.upper()}_{split.upper()}",
                    }
                )
    return tasks


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string escapes are a subset of YAML's)."""
    return json_string(text)


def task_yaml(task: dict) -> str:
    post = (
        "Answer with the option's letter from the given choices directly."
        if task["option_kind"] == "letter"
        else "Answer with the option's label from the given choices directly."
    )
    lines = [
        f"# lmms-eval task written by VidQA Studio: {task['what']} of the {task['split']} split,",
        f"# read from ../{task['data']} with the videos in ../videos/. See README.md in this folder.",
        f"task: {task['task']}",
        f"tag: {task['tag']}",
        "dataset_path: json",
        "dataset_kwargs:",
        "  # Absolute paths computed by utils.py from its own place, so any working directory works.",
        f"  data_files: !function utils.{task['data_files']}",
        f"test_split: {task['split']}",
        "output_type: generate_until",
        "doc_to_visual: !function utils.doc_to_visual",
        "doc_to_text: !function utils.doc_to_text",
        "doc_to_target: !function utils.doc_to_target",
        "process_results: !function utils.process_results",
        "cluster_key: video",
        "generation_kwargs:",
        f"  max_new_tokens: {MAX_NEW_TOKENS}",
        "  temperature: 0",
        "  do_sample: false",
        "metric_list:",
    ]
    for metric, higher in (("accuracy", "true"), ("failed_requests", "false"), ("no_choice", "false")):
        lines += [
            f"  - metric: {metric}",
            "    aggregation: !function utils.mean_score",
            f"    higher_is_better: {higher}",
        ]
    lines += [
        "lmms_eval_specific_kwargs:",
        "  default:",
        '    pre_prompt: ""',
        f"    post_prompt: {_q(post)}",
        "metadata:",
        f"  version: {TASK_VERSION}",
    ]
    return "\n".join(lines) + "\n"


def readme(*, slug: str, tasks: list[dict]) -> str:
    prefix = task_prefix(slug)
    tests = [t["task"] for t in tasks if t["split"] == "test"] or [t["task"] for t in tasks]
    first = tests[0] if tests else f"{prefix}_lvb_test"
    lines = [
        "# lmms-eval tasks of this release",
        "",
        "Tasks (one per MCQ file; each task's tag runs every task of its split):",
        "",
    ]
    lines += [f"- `{t['task']}` (tag `{t['tag']}`): {t['what']}, `../{t['data']}`" for t in tasks]
    lines += [
        "",
        "Run from anywhere, with lmms-eval 0.7.0 or 0.7.3 installed (the 0.7.1 and 0.7.2 wheels lack a file",
        "of their own tasks and run none) and decord or torchcodec for the video frames; the endpoint's key",
        "is read from OPENAI_API_KEY:",
        "",
        "```",
        "lmms-eval --model openai \\",
        "  --model_args model_version=<model>,base_url=<https://host/v1>,max_frames_num=16 \\",
        f"  --include_path <this release>/lmms_eval --tasks {first} \\",
        "  --output_path <results folder> --log_samples",
        "```",
        "",
        "lmms-eval exits 0 even when the evaluation fails, and scores a failed request as a wrong answer:",
        "read `<results folder>/<model>/<date>_results.json`, and trust `accuracy,none` only when that file",
        "exists and `failed_requests,none` is 0. `no_choice,none` is the share of replies naming no option.",
        "Do not add files to this folder: lmms-eval loads every YAML in it, and an `__init__.py` here",
        "would hide the installed lmms_eval package.",
    ]
    return "\n".join(lines) + "\n"


def lmms_eval_tasks_write(ctx: BuildContext) -> list[dict]:
    """Write the folder for the MCQ files already written (call after every writer's `finish`); returns
    the tasks, or reports a problem when the release holds no MCQ file a task could read."""
    files = ctx.files
    tasks = planned_tasks(slug=ctx.project.slug, written=files.exists)
    if not tasks:
        ctx.problems.add(
            "",
            f"{FOLDER}/",
            "release",
            "lmms-eval tasks read the LongVideoBench, MVPBench or LiViBench files, and this release holds "
            "none: choose one of those formats, or leave the lmms-eval option off.",
        )
        return []
    if ctx.test_style:
        ctx.problems.add(
            "",
            f"{FOLDER}/",
            "release",
            "lmms-eval tasks score answers, and a test-style release withholds them: leave one of the two off.",
        )
        return []
    files.write_bytes(f"{FOLDER}/utils.py", UTILS_SOURCE.read_bytes())
    for task in tasks:
        files.write_text(f"{FOLDER}/{task['task']}.yaml", task_yaml(task))
    files.write_text(f"{FOLDER}/README.md", readme(slug=ctx.project.slug, tasks=tasks))
    return tasks
