"""What lmms-eval 0.7.x does with a folder given as `--include_path`, without lmms-eval: the suite cannot
install it (torch alone is gigabytes), so these helpers do the same steps its code does.

- `index_tasks`: lmms_eval.tasks.TaskManager._get_task_and_group walks the folder for `*.yaml`, loads
  each with `!function` tags left unresolved (mode "simple") and registers a config with a string
  `task` as a task;
- `load_task`: lmms_eval.utils.load_yaml_config (mode "full") resolves `!function module.name` by
  importing `<yaml folder>/<module>.py` from its file (importlib.util.spec_from_file_location, a fresh
  module each time, never put in sys.modules) and taking the attribute, whatever it is;
- `load_docs`: `datasets.load_dataset("json", data_files=...)` as ConfigurableTask.download calls it: a
  JSON file holding one array, or JSON lines.
"""

from __future__ import annotations

import importlib.util
import json
import os

import yaml


def _function(loader, node):
    name = loader.construct_scalar(node)
    *module_name, attribute = name.split(".")
    module_name = ".".join(module_name)
    module_path = os.path.normpath(os.path.join(os.path.dirname(loader.name), f"{module_name}.py"))
    spec = importlib.util.spec_from_file_location(module_name, module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, attribute)


class _FullLoader(yaml.FullLoader):
    pass


class _SimpleLoader(yaml.FullLoader):
    pass


_FullLoader.add_constructor("!function", _function)
_SimpleLoader.add_constructor("!function", lambda loader, node: node)


def load_yaml(path, *, mode: str = "full") -> dict:
    with open(path, "rb") as fh:  # lmms-eval opens it in binary too: loader.name is the path
        return yaml.load(fh, Loader=_FullLoader if mode == "full" else _SimpleLoader)  # noqa: S506


def index_tasks(folder) -> dict[str, str]:
    """Task name → YAML path, as lmms-eval indexes an include path (a YAML that is no task is skipped)."""
    tasks = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".ipynb_checkpoints")]
        for name in names:
            if name.endswith(".yaml"):
                config = load_yaml(os.path.join(root, name), mode="simple")
                if isinstance(config, dict) and isinstance(config.get("task"), str) and "class" not in config:
                    tasks[config["task"]] = os.path.join(root, name)
    return tasks


def load_task(path) -> dict:
    return load_yaml(path, mode="full")


def load_docs(data_files: dict, split: str) -> list[dict]:
    path = data_files[split]
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if path.endswith(".json"):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]
